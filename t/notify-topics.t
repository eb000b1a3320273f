# SPDX-License-Identifier: Apache-2.0
# Notification topics (ResourceSyncNotify on): HEAD/GET/304/405 of
# <prefix>/<set>/notify/change and notify/framework with their exact Link
# header, 404 for a set with notifications off, the Capability List
# entries; after file changes the notifications in the store form
# contiguous intervals, carry every journal record exactly once, validate,
# and their entries are the Change List's entries for the same records;
# the change topic serves the newest; the framework topic announces the
# first Resource List, its notifications carry the rs:ln elements of
# Framework Notification 1.0.1 section 3 (up to the Source Description
# for the Capability List, to the Capability List for the other
# documents; a Resource Dump Index announced by its first part with
# rel="index"); a watcher killed with SIGKILL while a notification is
# open loses none.  Private server; the outbox is read with sqlite3.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get head req doc xpc validate wait_for wait_ok
              changes_of cap_url sd_url);
use JSON::PP ();
use Time::HiRes qw(sleep time);

plan tests => 44;

my $srv = started_server(
    conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncHub on\n"
          . set_conf('n', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 500ms',
                     'ResourceSyncMaxEntries 6', 'ResourceSyncResourceDump 1',
                     'ResourceSyncDumpMaxEntries 1', 'ResourceSyncChangeDump on')
          . set_conf('off', 'www/off'),
    files => { 'www/data/a.txt' => "a\n", 'www/off/x.txt' => "x\n" });
my $B = $srv->base;
my $db = $srv->dir . '/state/state.db';
my $change = "$B/resourcesync/n/notify/change";
my $framework = "$B/resourcesync/n/notify/framework";

# Rows of a query on the store (sqlite3 -json), [] when it has none.
sub rows {
    my ($sql) = @_;
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    return [] if $out =~ /^\s*$/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}
sub notifications {
    rows("SELECT id, from_dt, until_dt, first_seq, last_seq, count, sealed, payload "
         . "FROM notifications WHERE setname = 'n' AND topic = '$_[0]' ORDER BY id");
}
sub journal_seqs { map { $_->{seq} } @{ rows("SELECT seq FROM journal WHERE setname = 'n' "
                                             . "ORDER BY seq") } }
sub open_count { scalar grep { !$_->{sealed} } @{ notifications('change') } }

# A framework notification's links and entries: { ln => [ "rel href" of
# the <urlset>'s rs:ln ], urls => [ { loc, change, capability,
# ln => [ "rel href" of the entry's rs:ln ] } ] }.
sub fw_doc {
    my $x = xpc(doc($_[0]));
    my $ln = sub { [ map { $_->getAttribute('rel') . ' ' . $_->getAttribute('href') }
                     $x->findnodes('rs:ln', $_[0]) ] };
    return { ln => $ln->(($x->findnodes('/sm:urlset'))[0]),
             urls => [ map { +{ loc => $x->findvalue('sm:loc', $_),
                               change => $x->findvalue('rs:md/@change', $_),
                               capability => $x->findvalue('rs:md/@capability', $_),
                               ln => $ln->($_) } } $x->findnodes('/sm:urlset/sm:url') ] };
}

# Entries of a <urlset> as "loc change datetime" strings.
sub entries {
    my $x = xpc(doc($_[0]));
    map { join ' ', $x->findvalue('sm:loc', $_), $x->findvalue('rs:md/@change', $_),
          $x->findvalue('rs:md/@datetime', $_) } $x->findnodes('/sm:urlset/sm:url');
}

# The change notifications once all are sealed and carry every journal
# record: (\@notifications, @problems).
sub check_outbox {
    my ($what) = @_;
    my @seqs = journal_seqs();
    my $ns = notifications('change');
    my @p;
    my ($prev, %carried);
    for my $n (@$ns) {
        push @p, "$what: notification $n->{id} not sealed" unless $n->{sealed};
        push @p, "$what: notification $n->{id} from $n->{from_dt} != previous until $prev->{until_dt}"
            if $prev && $n->{from_dt} != $prev->{until_dt};
        push @p, "$what: notification $n->{id} holds $n->{count} > 6" if $n->{count} > 6;
        $carried{$_}++ for $n->{first_seq} .. $n->{last_seq};
        if ($n->{sealed}) {
            my $err = validate($n->{payload});
            push @p, "$what: notification $n->{id} invalid: $err" if $err;
            my @e = entries($n->{payload});
            push @p, "$what: notification $n->{id} has " . @e . " entries, count $n->{count}"
                if @e != $n->{count};
        }
        $prev = $n;
    }
    my @missing = grep { !$carried{$_} } @seqs;
    my @twice = grep { $carried{$_} > 1 } keys %carried;
    push @p, "$what: records in no notification: @missing" if @missing;
    push @p, "$what: records in several: @twice" if @twice;
    push @p, "$what: " . (keys %carried) . " carried, " . @seqs . " journaled"
        if keys %carried != @seqs;
    return ($ns, @p);
}

# ------------------------------------------------------------ topics
my $hub = "$B/resourcesync/hub";
my $link = qq(<$change>; rel="self", <$hub>; rel="hub", <) . cap_url('n', $B) . qq(>; rel="resourcesync");
my $h = wait_for(sub { my $r = head($change); $r->code == 200 ? $r : undef }, 30);
ok($h, 'HEAD of the change topic: 200');
is($h && $h->header('Content-Type'), 'application/xml', 'Content-Type application/xml');
# (httpd itself drops a Content-Length of 0 from HEAD responses.)
my $g0 = get($change);
ok($g0->code == 200 && ($g0->header('Content-Length') // '') eq '0' && $g0->content eq '',
   'GET: Content-Length 0 and an empty body before the first notification');
is($h && $h->header('Link'), $link,
   'Link header: rel="self", the built-in hub, the Capability List (rel="resourcesync")');
is(req('POST', $change)->code, 405, 'POST to a topic: 405');
is(get("$B/resourcesync/off/notify/change")->code, 404, 'topic of a set without notifications: 404');
is(get("$B/resourcesync/n/notify/other")->code, 404, 'unknown topic: 404');

# -------------------------------------------------- Capability List
my $cx = xpc(doc(get(cap_url('n', $B))->content));
is(join(' ', map { $cx->findvalue('sm:loc', $_) . '=' . $cx->findvalue('rs:md/@capability', $_) }
                 $cx->findnodes('/sm:urlset/sm:url[contains(rs:md/@capability, "notification")]')),
   "$change=change-notification $framework=framework-notification",
   'Capability List: one entry per topic');
is(join(' ', map { $_->value } $cx->findnodes(
       '/sm:urlset/sm:url[contains(rs:md/@capability, "notification")]/rs:ln[@rel="hub"]/@href')),
   "$hub $hub", 'Capability List: each topic entry names the hub');
my $ox = xpc(doc(get(cap_url('off', $B))->content));
is(scalar(() = $ox->findnodes('//sm:url[contains(rs:md/@capability, "notification")]')), 0,
   'Capability List of a set without notifications: no topic');

# ------------------------------------------------------- framework
# The outbox, not the topic, is waited on: the topic serves only the newest
# framework notification, and the first Resource Dump follows the first
# Resource List within moments.
my $rl1 = wait_for(sub { (grep { $_->{payload} =~ /capability="resourcelist"/ }
                          @{ notifications('framework') })[0] }, 60);
ok($rl1, 'a framework notification announces the first Resource List');
my $fw = wait_for(sub { my $r = get($framework); $r->code == 200 && length($r->content) ? $r : undef },
                  30);
is($fw && validate($fw->content), undef, 'framework payload validates');
my $fx = $fw && xpc(doc($fw->content));
is($fx && $fx->findvalue('/sm:urlset/rs:md/@capability'), 'framework-notification',
   'framework payload: capability framework-notification');
is($fw && $fw->header('Link'),
   qq(<$framework>; rel="self", <$hub>; rel="hub", <) . cap_url('n', $B) . qq(>; rel="resourcesync"),
   'framework topic Link header');
my $fws = notifications('framework');
ok(@$fws >= 2 && $fws->[0]{payload} =~ /capability="capabilitylist"/
   && $fws->[0]{payload} =~ /capability="description"/,
   'first framework notification: Capability List and Source Description');
my $cap = cap_url('n', $B);
my $rdx = "$B/resourcesync/n/resourcedump.xml";
is_deeply(@$fws && fw_doc($fws->[0]{payload}),
          { ln => [ 'up ' . sd_url($B) ],
            urls => [ { loc => $cap, change => 'created', capability => 'capabilitylist', ln => [] },
                      { loc => sd_url($B), change => 'created', capability => 'description',
                        ln => [] } ] },
          'about the Capability List: rs:ln rel="up" to the Source Description (the very first '
          . 'start: both created)');
is_deeply($rl1 && fw_doc($rl1->{payload})->{ln}, [ "up $cap" ],
          'about the Resource List: rs:ln rel="up" to the Capability List');

# The first Resource Dump (one file, one package: no index) before any
# other file is written.
my $rd1 = wait_for(sub { (grep { $_->{payload} =~ /capability="resourcedump"/ }
                          @{ notifications('framework') })[0] }, 60);
is_deeply($rd1 && fw_doc($rd1->{payload}),
          { ln => [ "up $cap" ],
            urls => [ { loc => $rdx, change => 'created', capability => 'resourcedump',
                        ln => [] } ] },
          'a Resource Dump in one document: resourcedump.xml itself, no rel="index"');

# ------------------------------------------------- change notifications
# Changes in three bursts, each waited for until sealed.
for my $burst (1 .. 3) {
    RSTest::put($srv->dir . "/www/data/b$burst-$_.txt", "burst $burst file $_\n") for 1 .. 7;
    wait_ok(sub { my @s = journal_seqs(); @s >= 7 * $burst && !open_count() }, 30,
            "burst $burst: journaled and sealed");
}
my ($ns, @p) = check_outbox('after the bursts');
ok(@$ns >= 6, 'several change notifications (' . @$ns . ')');
is_deeply(\@p, [], 'contiguous intervals, every record in exactly one, valid, at most 6 each');

# Their entries are the Change List's entries for the same records.
my $cl = wait_ok(sub { my @c = changes_of('n', $B); @c >= 21 ? \@c : undef }, 30,
                 'the Change List lists the 21 changes');
my @cl_e = map { join ' ', $_->{loc}, $_->{change}, $_->{datetime} } @{ $cl || [] };
my @n_e = map { entries($_->{payload}) } @$ns;
is_deeply(\@n_e, \@cl_e, 'notification entries == Change List entries, in order');
ok(scalar(grep { /b3-7\.txt created/ } @n_e), 'the last change is carried');

my $g = get($change);
is($g->content, $ns->[-1]{payload}, 'the change topic serves the newest notification');
is($g->header('Link'), $link, 'Link header on GET');
my $etag = $g->header('ETag');
like($etag // '', qr/^"[^"]+"$/, 'strong ETag');
my $nm = get($change, 'If-None-Match' => $etag);
is($nm->code, 304, 'If-None-Match: 304');
is($nm->header('Link'), $link, 'Link header on 304');

# Framework notifications of closed Change Lists and of the dumps.
my @fw = map { $_->{payload} } @{ notifications('framework') };
my $ix = "$B/resourcesync/n/changelist.xml";
ok(scalar(grep { m{<loc>\Q$B\E/resourcesync/n/changelist/[0-9a-f]{8}-1\.xml</loc>\s*<rs:md change="updated" capability="changelist" datetime="[^"]+"/>\s*<rs:ln rel="index" href="\Q$ix\E"/>} } @fw)
   && scalar(grep { m{changelist/[0-9a-f]{8}-2\.xml</loc>\s*<rs:md change="created" capability="changelist"} } @fw),
   'framework: Change List 1 closed (updated) and 2 opened (created), with rel="index"')
    or diag(join "\n", @fw);
# Twenty-two files, one a package, six packages a document: the dump is a
# Resource Dump Index, announced by its first part (Framework
# Notification 1.0.1, section 2) once the newest announced is the index's.
my $rd = wait_for(sub {
    my @rd = grep { /capability="resourcedump"/ && /rel="index"/ }
             map { $_->{payload} } @{ notifications('framework') };
    return undef unless @rd;
    my $d = fw_doc($rd[-1]);
    my $first = eval { xpc(doc(get($rdx)->content))
                           ->findvalue('/sm:sitemapindex/sm:sitemap[1]/sm:loc') } // '';
    $first eq $d->{urls}[0]{loc} ? $d : undef }, 60);
ok($rd, 'framework: a Resource Dump Index announced by its first part');
like($rd && $rd->{urls}[0]{loc}, qr{^\Q$B\E/resourcesync/n/resourcedump/[0-9a-f]{8}-[0-9]+-1\.xml$},
     'the part\'s URL: part 1 of its generation');
is_deeply($rd && { %$rd, urls => [ map { +{ %$_, loc => 'part' } } @{ $rd->{urls} } ] },
          { ln => [ "up $cap" ],
            urls => [ { loc => 'part', change => 'created', capability => 'resourcedump',
                        ln => [ "index $rdx" ] } ] },
          'one entry, created, rs:ln rel="index" to resourcedump.xml; rel="up" the Capability List');
my $pr = $rd && get($rd->{urls}[0]{loc});
my $px = $pr && $pr->code == 200 && xpc(doc($pr->content));
is($px && $px->findvalue('/sm:urlset/rs:md/@capability') . ' '
          . $px->findvalue('/sm:urlset/rs:ln[@rel="index"]/@href'),
   "resourcedump $rdx", 'the announced part is served and names the index');
ok(wait_for(sub { grep { /capability="changedump"/ } map { $_->{payload} } @{ notifications('framework') } }, 60),
   'framework: a new Change Dump package');

# ------------------------------------------- kill -9 with an open one
RSTest::put($srv->dir . "/www/data/k$_.txt", "kill $_\n") for 1 .. 2;
my $open = wait_for(sub { open_count() }, 30);
my @w = $srv->watchers;
ok($open && @w == 1 && kill('KILL', $w[0]), 'watcher killed while a notification is open');
my $new = wait_for(sub { my @n = $srv->watchers; @n == 1 && $n[0] != $w[0] ? $n[0] : undef }, 30);
ok($new, 'a new watcher runs');
wait_ok(sub { !open_count() && scalar(journal_seqs()) >= 23 }, 30,
        'after kill -9: the two changes journaled and sealed');
($ns, @p) = check_outbox('after kill -9');
is_deeply(\@p, [], 'after kill -9: sealed by the next watcher, nothing lost, contiguous');

my ($fprev, @fp);
for my $f (@{ notifications('framework') }) {
    my $err = validate($f->{payload});
    push @fp, "framework $f->{id} invalid: $err" if $err;
    push @fp, "framework $f->{id} from $f->{from_dt} != previous until $fprev->{until_dt}"
        if $fprev && $f->{from_dt} != $fprev->{until_dt};
    $fprev = $f;
}
is_deeply(\@fp, [], 'every framework notification validates; contiguous intervals');

my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ && !/died \(exit status or signal 9\)/ }
          split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no unexpected warnings or errors');
