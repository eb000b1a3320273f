# SPDX-License-Identifier: Apache-2.0
# Change Lists from reconciliation scans: the index and its lists, closing
# by size and by period, immutability of closed lists, retention, the 1.0
# mode, durability across a restart, and a destination that rebuilds the
# tree from a baseline plus the changes.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use URI::Escape qw(uri_unescape);
use RSTest qw(started_server set_conf STATE_CONF put get req doc xpc validate wait_for wait_ok fetch_list
              iso2epoch);

plan tests => 38;

my $srv = started_server(
    conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
            . set_conf('cl', 'www/cl', 'ResourceSyncMaxEntries 3', 'ResourceSyncHash sha-256')
            . set_conf('old', 'www/old', 'ResourceSyncSpecVersion 1.0')
            . set_conf('ret', 'www/ret', 'ResourceSyncChangeListPeriod 2s',
                       'ResourceSyncJournalRetention 5s')
            . set_conf('len', 'www/len'),
    files => { (map { ("www/cl/base-$_.txt" => "base $_\n") } 1 .. 4),
               'www/old/o.txt' => "old\n", 'www/ret/r.txt' => "ret\n", 'www/len/l.txt' => "len\n" });
my $d = $srv->dir;
my $www = "$d/www";
my $B = $srv->base;

# index_of(set) -> the set's Change List Index (RSTest::cl_index)
sub index_of { RSTest::cl_index($_[0], $B) }

# changes(set) -> list of entries across every list, plus the documents
sub changes {
    my ($set) = @_;
    my $i = index_of($set) or return ();
    my @all;
    for my $l (@{ $i->{lists} }) {
        my $r = get($l->{loc});
        return () unless $r->code == 200;
        my $x = xpc(doc($r->content));
        for my $u ($x->findnodes('/sm:urlset/sm:url')) {
            push @all, { loc => $x->findvalue('sm:loc', $u), lastmod => $x->findvalue('sm:lastmod', $u),
                         map { ($_ => $x->findvalue("rs:md/\@$_", $u)) } qw(change datetime length hash) };
        }
    }
    return @all;
}

my $base = fetch_list('cl', $B);
my $i0 = wait_for(sub { index_of('cl') }, 30);
ok($i0 && @{ $i0->{lists} } == 1 && !$i0->{lists}[0]{until}, 'a new set has one open Change List');
is($i0->{from}, $base->{at}, "the journal starts at the baseline Resource List's at");
ok(!validate($i0->{xml}), 'the index validates');

# Seven changes: with ResourceSyncMaxEntries 3, lists close at 3 entries.
put("$www/cl/new-$_.txt", "new $_\n") for 1 .. 5;
put("$www/cl/base-1.txt", "base 1, updated\n");
unlink "$d/www/cl/base-2.txt";
# A batch of changes is served in the open list as soon as it is journaled;
# the watcher closes the lists it filled right after: wait for both.
my @c = @{ wait_for(sub { my @c = changes('cl'); my $i = index_of('cl');
                          @c >= 7 && $i && @{ $i->{lists} } >= 3 ? \@c : undef }, 30) || [] };
is(scalar @c, 7, 'seven changes listed');
my %kinds;
$kinds{$_->{change}}++ for @c;
is_deeply(\%kinds, { created => 5, updated => 1, deleted => 1 }, 'five created, one updated, one deleted');
my $idx = index_of('cl');
my @lists = @{ $idx->{lists} };
is(scalar @lists, 3, 'three lists: 3 + 3 closed, then the open one');
ok(!$lists[-1]{until} && $lists[0]{until} && $lists[1]{until}, 'closed lists have until, the open one not');
ok($lists[0]{until} eq $lists[1]{from} && $lists[1]{until} eq $lists[2]{from}, "until equals the next list's from");
is($idx->{from}, $lists[0]{from}, "the index's from is its first list's from");
my @dt = map { iso2epoch($_->{datetime}) } @c;
ok(!grep({ $dt[$_] <= $dt[$_ - 1] } 1 .. $#dt), 'datetimes strictly increase in list order');
my %seen;
ok(!grep({ $seen{"$_->{loc} $_->{datetime}"}++ } @c), '(loc, datetime) is unique');
ok(!grep({ $_->{change} eq 'deleted' && ($_->{hash} || $_->{length} ne '') } @c), 'deletions carry no hash or length');
my ($upd) = grep { $_->{change} eq 'updated' } @c;
is($upd->{hash}, 'sha-256:' . sha256_hex("base 1, updated\n"), 'an update lists the new hash');
{
    my @why;
    for my $j (0 .. $#lists) {
        my $before = @why;
        my $r = get($lists[$j]{loc});
        my $x = xpc(doc($r->content));
        for my $err (validate($r->content), validate($r->content, 'strict')) {
            push @why, "$lists[$j]{loc}: $err" if $err;
        }
        for my $u ($x->findnodes('/sm:urlset/sm:url')) {
            my $dt = $x->findvalue('rs:md/@datetime', $u);
            my $t = iso2epoch($dt);
            push @why, "$lists[$j]{loc}: $dt outside $lists[$j]{from} .. " . ($lists[$j]{until} || '')
                unless $t >= iso2epoch($lists[$j]{from})
                       && (!$lists[$j]{until} || $t < iso2epoch($lists[$j]{until}));
        }
        push @why, "the list was:\n" . $r->content if @why > $before;
    }
    is_deeply(\@why, [], 'every list validates (lenient and official) and its entries lie within from..until');
}

# Closed lists are immutable; the open one answers 304 while nothing changes.
my $c1 = get($lists[0]{loc});
like($c1->header('Cache-Control') // '', qr/immutable/, 'a closed list is cacheable forever');
put("$www/cl/later.txt", "later\n");
wait_ok(sub { scalar grep { $_->{loc} =~ /later\.txt$/ } changes('cl') }, 30,
        'a later change is journaled');
my $c1b = get($lists[0]{loc});
ok($c1b->content eq $c1->content && $c1b->header('ETag') eq $c1->header('ETag'),
   'a closed list is byte-identical later, with the same ETag');
my $openurl = index_of('cl')->{lists}[-1]{loc};
my $o1 = get($openurl);
is(req('GET', $openurl, 'If-None-Match' => $o1->header('ETag'))->code, 304,
   'the open list answers 304 while nothing changed');
# A GET says its length, as a file's answer does (no chunked coding),
# also when the list is too long for one pass through httpd's filters.
{
    put("$www/len/" . ('n' x 150) . "-$_.txt", "$_\n") for 1 .. 60;
    my $big = wait_for(sub {
        my $i = index_of('len') or return undef;
        my $r = get($i->{lists}[-1]{loc});
        my @n = $r->content =~ m{<url>}g;
        $r->code == 200 && @n >= 60 ? $r : undef }, 30);
    ok($big && length($big->content) > 16384
       && ($big->header('Content-Length') // -1) == length($big->content),
       'GET of an open list of 60 entries: Content-Length is the length of its body')
        or diag('body ', $big ? length($big->content) : 'none', ', Content-Length ',
                $big ? $big->header('Content-Length') // 'none' : '-', ', Transfer-Encoding ',
                $big ? $big->header('Client-Transfer-Encoding') // 'none' : '-');
}
# HEAD gives the exact length a GET sends, with the same ETag.
my $oh = req('HEAD', $openurl);
ok($oh->code == 200 && length($o1->content) > 0
   && ($oh->header('Content-Length') // -1) == length($o1->content)
   && $oh->header('ETag') eq $o1->header('ETag') && length($oh->content) == 0,
   'HEAD of the open list: Content-Length is the length of the GET body')
    or diag('HEAD ', $oh->code, ' Content-Length ', $oh->header('Content-Length') // 'none',
            ', GET body ', length($o1->content));

# A destination: baseline, then every change with datetime >= at.
{
    my %tree;
    for my $e (@{ $base->{entries} }) {
        my $r = get($e->{loc});
        $tree{$e->{loc}} = $r->content;
    }
    for my $ch (sort { iso2epoch($a->{datetime}) <=> iso2epoch($b->{datetime}) } changes('cl')) {
        next if iso2epoch($ch->{datetime}) < iso2epoch($base->{at});
        if ($ch->{change} eq 'deleted') { delete $tree{$ch->{loc}} }
        else { $tree{$ch->{loc}} = get($ch->{loc})->content }
    }
    my %disk;
    opendir my $dh, "$d/www/cl" or die $!;
    for my $f (grep { !/^\./ } readdir $dh) {
        open my $fh, '<', "$d/www/cl/$f" or die $!;
        local $/;
        $disk{"$B/cl/$f"} = <$fh>;
    }
    is_deeply(\%tree, \%disk, 'baseline + changes rebuild the tree exactly');
}

# 1.0 mode.
put("$www/old/o2.txt", "old 2\n");
my @oc = @{ wait_for(sub { my @c = changes('old'); @c ? \@c : undef }, 30) || [] };
is(scalar @oc, 1, '1.0 set: one change');
ok(!$oc[0]{datetime}, '1.0 set: no datetime attribute');
{
    my $l = index_of('old')->{lists}[-1]{loc};
    my $xml = get($l)->content;
    ok(!validate($xml, '1.0'), '1.0 set: the Change List validates against the 1.0 schema');
}

# Retention: lists of "ret" close after 2 s and expire 5 s after they closed.
# The index's response before the expiry is kept ($r1): its Last-Modified
# is revalidated after it.
put("$www/ret/r2.txt", "r2\n");
my $ret_index = "$B/resourcesync/ret/changelist.xml";
my $r1;
my $first = wait_for(sub {
    my $r = get($ret_index);
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    my @l = $x->findnodes('/sm:sitemapindex/sm:sitemap');
    return undef unless @l > 1;
    $r1 = $r;
    return { from => $x->findvalue('/sm:sitemapindex/rs:md/@from'),
             gone => $x->findvalue('sm:loc', $l[0]) };
}, 30);
ok($first, 'ret: the list with the change closed after its period');
my $gone = $first->{gone};
my $moved = wait_for(sub { my $i = index_of('ret'); $i && $i->{from} ne $first->{from} ? $i : undef }, 30);
ok($moved, "ret: after the retention time the index's from moved forward");
is(get($gone)->code, 404, 'ret: the expired list is gone');
# The expiry alone (no list closed) changed the index: its Last-Modified
# moved, so a client revalidating by date gets the new bytes, not 304.
my $r2 = req('GET', $ret_index, 'If-Modified-Since' => $r1->header('Last-Modified'));
is($r2->code, 200, "ret: If-Modified-Since the index's Last-Modified before the expiry gives 200")
    or diag('Last-Modified before ' . $r1->header('Last-Modified') . ', after '
            . ($r2->header('Last-Modified') // '-'));
ok($r2->content eq $moved->{xml} && $r2->header('ETag') ne $r1->header('ETag'),
   'ret: ... with the shorter index and another ETag');

# Durability: a restart keeps every list and record.
my $before = get($lists[0]{loc})->content;
my @cbefore = changes('cl');
my $nlists = @{ index_of('cl')->{lists} };
$srv->stop;
# A watcher killed between closing a list in the store and writing the
# index leaves an index that lacks lists: here, the first index of all.
{
    open my $fh, '>', "$d/state/changelists/cl/index.xml" or die $!;
    print $fh $i0->{xml};
    close $fh;
}
$srv->start_ok('restart');
my $after = wait_for(sub { my $r = get($lists[0]{loc}); $r->code == 200 ? $r->content : undef }, 30);
is($after, $before, 'a closed list is byte-identical after a restart');
my @cafter = @{ wait_for(sub { my @c = changes('cl'); @c >= @cbefore ? \@c : undef }, 30) || [] };
is_deeply([map { "$_->{loc} $_->{datetime}" } @cafter[0 .. $#cbefore]],
          [map { "$_->{loc} $_->{datetime}" } @cbefore], 'every change is still listed after a restart');
my $idx2 = wait_for(sub { my $i = index_of('cl'); $i && @{ $i->{lists} } >= $nlists ? $i : undef }, 30);
ok($idx2 && !validate($idx2->{xml}) && $idx2->{lists}[0]{until},
   "a stale index left on disk is rewritten by the next watcher ($nlists lists)");
unlike($srv->log_text, qr/\[resourcesync:(warn|error|crit|alert|emerg)\]/, 'no module warnings or errors');
$srv->stop;

# A batch of more records than the ring holds (a directory of 40 files
# moved into the set, with a ring of 16 records): the open list's length
# still counts every entry, those only the store holds too, so a GET and
# a HEAD say the length of the whole document.
{
    my $small = started_server(conf => STATE_CONF . "ResourceSyncRecentChanges 16\n"
                                       . set_conf('w', 'www/w'),
                               files => { 'www/w/a.txt' => "a\n", 'stage/x/0.txt' => "0\n" },
                               name => 'a server with a ring of 16 records starts');
    my $sb = $small->base;
    put($small->dir . "/stage/x/$_.txt", "file $_\n") for 1 .. 39;
    ok(wait_for(sub { RSTest::cl_index('w', $sb) }, 30), 'its Change List Index is there');
    rename $small->dir . '/stage/x', $small->dir . '/www/w/x' or die "rename: $!";
    my $g = wait_for(sub {
        my $i = RSTest::cl_index('w', $sb) or return undef;
        my $r = get($i->{lists}[-1]{loc});
        my @n = $r->content =~ m{<url>}g;
        $r->code == 200 && @n >= 40 ? $r : undef }, 30);
    my $h = $g ? req('HEAD', $g->request->uri) : undef;
    ok($g && $g->content =~ m{</urlset>\n\z} && !validate($g->content)
       && ($g->header('Content-Length') // -1) == length($g->content)
       && ($h->header('Content-Length') // -1) == length($g->content),
       'a batch of 40 records, 16 of them in the ring: GET and HEAD give the whole list\'s length')
        or diag($g ? 'GET Content-Length ' . ($g->header('Content-Length') // 'none') . ', body '
                     . length($g->content) . ', HEAD ' . ($h->header('Content-Length') // 'none')
                     . ', ends with ' . substr($g->content, -40) : 'no list of 40 entries');
    $small->stop;
}
