# SPDX-License-Identifier: Apache-2.0
# Change Dumps to the letter.  Lost captures in a real run: a capture
# deleted while its file is unchanged is taken again from the file (the
# list gets its package); one whose file has other bytes now leaves its
# list without a package, and changedump.xml then never claims that
# interval: its from starts after that list, the packages it lists are
# contiguous, and the log says so once.  ResourceSyncSpecVersion 1.0: the
# manifests carry the change time in <lastmod> and no datetime (1.0
# section 13.2).  More packages than ResourceSyncMaxEntries: changedump.xml
# is a Change Dump Index (section 13.1) of parts, each announced by a
# framework notification with rel="index" (Framework Notification 1.0.1,
# section 2), never the index.  Lists close by count (ResourceSyncMaxEntries 2, a long
# period), so each step is deterministic.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF get doc xpc validate wait_for wait_ok put changes_of);
use Digest::MD5 ();
use Digest::SHA qw(sha256_hex);
use JSON::PP ();

plan tests => 37;

my $srv = private_server(
    conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncHub on\n"
            . set_conf('cd', 'www/cd', 'ResourceSyncChangeDump on', 'ResourceSyncMaxEntries 2',
                       'ResourceSyncChangeListPeriod 1h')
            . set_conf('old', 'www/old', 'ResourceSyncChangeDump on', 'ResourceSyncMaxEntries 2',
                       'ResourceSyncChangeListPeriod 1h', 'ResourceSyncSpecVersion 1.0')
            . set_conf('ix', 'www/ix', 'ResourceSyncChangeDump on', 'ResourceSyncMaxEntries 1',
                       'ResourceSyncChangeListPeriod 1h', 'ResourceSyncNotify on'));
$srv->populate(files => { 'www/cd/start.txt' => "start\n", 'www/old/start.txt' => "start\n",
                          'www/ix/start.txt' => "start\n" });
$srv->start_ok;
my $B = $srv->base;
my $src = $srv->dir . '/www/cd';
my $cap = $srv->dir . '/state/capture/cd';

# changedump.xml of a set: { from, packages => [{ loc, from, until }] }.
sub cdump {
    my ($set) = @_;
    my $r = get("$B/resourcesync/$set/changedump.xml");
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return { from => $x->findvalue('/sm:urlset/rs:md/@from'),
             packages => [map { { loc => $x->findvalue('sm:loc', $_),
                                  from => $x->findvalue('rs:md/@from', $_),
                                  until => $x->findvalue('rs:md/@until', $_) } }
                          $x->findnodes('/sm:urlset/sm:url')] };
}
# The closed Change Lists of cd: [{ loc, from, until }], oldest first.
sub closed_lists {
    my $r = get("$B/resourcesync/cd/changelist.xml");
    return [] unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return [grep { $_->{until} ne '' }
            map { { loc => $x->findvalue('sm:loc', $_), from => $x->findvalue('rs:md/@from', $_),
                    until => $x->findvalue('rs:md/@until', $_) } }
            $x->findnodes('/sm:sitemapindex/sm:sitemap')];
}
# How many changes of rel the Change Lists of cd list.
sub journaled {
    my ($rel) = @_;
    return scalar grep { $_->{loc} eq "$B/cd/$rel" } changes_of('cd', $B);
}
# Change rel to content and wait until the change is journaled (one
# change at a time: the lists' contents do not depend on timing).
sub change {
    my ($rel, $content) = @_;
    my $n = journaled($rel);
    put("$src/$rel", $content);
    return wait_for(sub { journaled($rel) > $n }, 30);
}
# change, then lose the version's capture (as a full disk or a crash
# would; it is written before the change is journaled).
sub change_and_lose {
    my ($rel, $content) = @_;
    my $file = "$cap/" . sha256_hex($content);
    return change($rel, $content) && unlink($file) == 1;
}
# The closed list of cd that has the change of rel with content.
sub list_with {
    my ($lists, $rel, $content) = @_;
    my $md5 = Digest::MD5::md5_hex($content);
    for my $l (@$lists) {
        return $l if get($l->{loc})->content
                     =~ m{<loc>\Q$B\E/cd/\Q$rel\E</loc>\s*<lastmod>[^<]*</lastmod>\s*<rs:md [^>]*hash="md5:$md5"};
    }
    return undef;
}
sub log_count {
    my ($re) = @_;
    return scalar(() = $srv->log_text =~ /$re/mg);
}

wait_ok(sub { cdump('cd') && cdump('old') && cdump('ix') }, 60, 'the baseline is taken (changedump.xml served)');

# List 0: complete.  List 1: a.txt's capture is lost, the file is
# unchanged.  List 2: the capture of b.txt's first version is lost, the
# file changed since.  List 3: complete.  Each list closes at the next
# change (ResourceSyncMaxEntries 2).
ok(change('g.txt', "g\n") && change('h.txt', "h\n"), 'list 0: two changes');
ok(change_and_lose('a.txt', "alpha\n") && change('f1.txt', "f1\n"),
   'list 1: a.txt journaled, its capture deleted');
ok(change_and_lose('b.txt', "bravo one\n") && change('b.txt', "bravo two\n"),
   'list 2: b.txt journaled, its capture deleted, b.txt changed');
ok(change('c.txt', "c\n") && change('d.txt', "d\n") && change('e.txt', "e\n"), 'list 3 closed');

my $lists = wait_for(sub { my $l = closed_lists(); @$l >= 4 ? $l : undef }, 30) || [];
my ($l0, $l1, $l2, $l3) = (list_with($lists, 'g.txt', "g\n"), list_with($lists, 'a.txt', "alpha\n"),
                           list_with($lists, 'b.txt', "bravo one\n"), list_with($lists, 'c.txt', "c\n"));
ok($l0 && $l1 && $l2 && $l3 && $l0 != $l1 && $l1 != $l2 && $l2 != $l3,
   'the four changes are in four closed lists') or BAIL_OUT('lists: ' . join(' ', map { $_->{loc} } @$lists));
my $cd = wait_ok(sub { my $c = cdump('cd'); $c && @{ $c->{packages} } && $c->{packages}[-1]{until} eq $l3->{until} ? $c : undef },
                 60, 'list 3 has its package');

# The hole: list 2 has no package; changedump.xml starts after it.
is($cd->{from}, $l2->{until}, "changedump.xml's from is list 2's until (after the hole)");
is(scalar @{ $cd->{packages} }, 1, '... and it lists only the package after the hole');
is($cd->{packages}[0]{from}, $l3->{from}, '... the package of list 3');
my $prev = $cd->{from};
my $gaps = 0;
for my $p (@{ $cd->{packages} }) { $gaps++ if $p->{from} ne $prev; $prev = $p->{until}; }
is($gaps, 0, 'the listed packages cover the Change Dump without a gap');
is(log_count(qr/\[resourcesync:warn\].*set cd: no Change Dump package for 1 Change List\(s\).*the captured bytes of b\.txt .* are gone; the Change Dump now covers only the changes from \Q$l2->{until}\E on, after Change List/),
   1, 'the hole is logged once, with the new start');
is(get(package_of($l0))->code, 200, "list 0's package stays served, though no longer listed");

# List 1 got its package from a.txt's unchanged file (still on disk and
# served by its URL, though no longer listed).
# The package (or with $ext 'xml' its manifest) of a closed list.
sub package_of {
    my ($l, $ext) = @_;
    my ($name) = $l->{loc} =~ m{/([0-9a-f]+-\d+)\.xml$};
    return "$B/resourcesync/cd/changedump/$name." . ($ext // 'zip');
}
my ($p1, $m1) = (package_of($l1), package_of($l1, 'xml'));
my $r1 = get($p1);
is($r1->code, 200, "list 1's package was built");
my $man1 = get($m1)->content;
like($man1, qr{<loc>\Q$B\E/cd/a\.txt</loc>}, '... and its manifest has a.txt');
{
    my ($path) = $man1 =~ m{<loc>\Q$B\E/cd/a\.txt</loc>.*?path="([^"]+)"}s;
    my $tmp = $srv->dir . '/p1.zip';
    open my $o, '>:raw', $tmp or die $!;
    print $o $r1->content;
    close $o;
    my $bytes = `python3 -c 'import sys,zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' $tmp ${\ substr($path // '/', 1)}`;
    is($bytes, "alpha\n", "... with a.txt's bytes, taken again from the file");
}
is(log_count(qr/\[resourcesync:info\].*set cd: 1 lost Change Dump capture\(s\) taken again from the current file/),
   1, 'the capture taken again is logged');
is(get(package_of($l2))->code, 404, 'list 2 has no package');

# A restart says nothing again and keeps the coverage.
$srv->stop;
$srv->start_ok;
$cd = wait_for(sub { cdump('cd') }, 60);
is($cd && $cd->{from}, $l2->{until}, 'after a restart changedump.xml still starts after the hole');
is(log_count(qr/no Change Dump package for/), 1, '... and the hole is not logged again');

# ResourceSyncSpecVersion 1.0: the manifest has the change time in <lastmod>, no datetime.
put($srv->dir . "/www/old/$_.txt", "$_\n") for qw(x y z);
my $old = wait_for(sub { my $c = cdump('old'); $c && @{ $c->{packages} } ? $c : undef }, 60);
ok($old, '1.0 set: a package is built');
(my $om = $old ? $old->{packages}[0]{loc} : '') =~ s/\.zip$/.xml/;
my $oman = get($om)->content;
ok($oman !~ /datetime=/ && $oman =~ /<lastmod>/, '1.0 manifest: <lastmod> and no datetime');
is(validate($oman, '1.0'), undef, '... and it validates against the 1.0 schema');
my %changed = map { ($_->{loc} => $_->{lastmod}) } changes_of('old', $B);
my $ox = xpc(doc($oman));
my @oe = map { [$ox->findvalue('sm:loc', $_), $ox->findvalue('sm:lastmod', $_)] } $ox->findnodes('/sm:urlset/sm:url');
ok(@oe && !grep({ !defined $changed{$_->[0]} || $changed{$_->[0]} ne $_->[1] } @oe),
   '... its <lastmod> is the change time, as in the 1.0 Change List')
    or diag(join "\n", map { "$_->[0] $_->[1] / " . ($changed{$_->[0]} // 'none') } @oe);

# A Change Dump Index: one package per document (ResourceSyncMaxEntries 1;
# the open list closes once it holds one change, so nothing changes after
# the fourth part).
my $ixd = $srv->dir . '/www/ix';
for my $f (qw(i1 i2 i3 i4)) {
    my $n = scalar changes_of('ix', $B);
    put("$ixd/$f.txt", "$f\n");
    wait_for(sub { scalar(changes_of('ix', $B)) > $n }, 30);
}
my $cdx = "$B/resourcesync/ix/changedump.xml";
my $idx = wait_for(sub { my $r = get($cdx);
                         my $n = () = $r->content =~ /<sitemap>/g;
                         $r->code == 200 && $r->content =~ /<sitemapindex/ && $n == 4 ? $r->content : undef }, 60);
ok($idx, 'ix: changedump.xml is a Change Dump Index of four parts (a list closes when it holds one change)');
is(validate($idx // ''), undef, '... valid');
my $ix = xpc(doc($idx // '<x/>'));
is($ix->findvalue('/sm:sitemapindex/rs:md/@capability'), 'changedump', '... capability changedump');
is(xpc(doc(get("$B/resourcesync/ix/capabilitylist.xml")->content))
       ->findvalue('/sm:urlset/sm:url[rs:md/@capability="changedump"]/sm:loc'),
   $cdx, 'the Capability List points to the index');
my @parts = map { [$ix->findvalue('sm:loc', $_), $ix->findvalue('rs:md/@from', $_), $ix->findvalue('rs:md/@until', $_)] }
            $ix->findnodes('/sm:sitemapindex/sm:sitemap');
my ($bad, $prevu) = (0, $ix->findvalue('/sm:sitemapindex/rs:md/@from'));
for my $k (0 .. $#parts) {
    my $pr = get($parts[$k][0]);
    my $px = $pr->code == 200 && xpc(doc($pr->content));
    my @pk = $px ? map { $px->findvalue('sm:loc', $_) } $px->findnodes('/sm:urlset/sm:url') : ();
    $bad++, diag("part $parts[$k][0]") unless $px && !validate($pr->content)
        && $px->findvalue('/sm:urlset/rs:md/@capability') eq 'changedump'
        && $px->findvalue('/sm:urlset/rs:ln[@rel="index"]/@href') eq $cdx
        && $px->findvalue('/sm:urlset/rs:md/@from') eq $parts[$k][1]
        && $px->findvalue('/sm:urlset/rs:md/@until') eq $parts[$k][2]
        && ($k == $#parts) == ($parts[$k][2] eq '')
        && $parts[$k][1] eq $prevu
        && @pk == 1 && get($pk[0])->code == 200;
    $prevu = $parts[$k][2];
}
is(@parts == 4 ? $bad : 'no parts', 0, 'each part: a Change Dump of one package, rel="index" to changedump.xml, '
            . 'from/until as its <sitemap>, contiguous, until on all but the newest');

# The framework notifications of the parts (from the store's outbox).
my $db = $srv->dir . '/state/state.db';
sub fw_entries {
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "SELECT payload FROM notifications WHERE setname = 'ix' AND topic = 'framework' ORDER BY id" 2>&1`;
    my $rows = $out =~ /^\s*$/ ? [] : eval { JSON::PP::decode_json($out) } || [];
    my @e;
    for my $r (@$rows) {
        my $x = xpc(doc($r->{payload}));
        push @e, map { join ' ', $x->findvalue('sm:loc', $_), $x->findvalue('rs:md/@change', $_),
                       $x->findvalue('rs:ln[@rel="index"]/@href', $_) || '-' }
                 $x->findnodes('/sm:urlset/sm:url[rs:md/@capability="changedump"]');
    }
    return @e;
}
my ($first_part, $last_part) = @parts ? ($parts[0][0], $parts[-1][0]) : ('no part', 'no part');
my @fw = @{ wait_for(sub { my @e = fw_entries(); (grep { index($_, $last_part) == 0 } @e) ? \@e : undef }, @parts ? 30 : 1) || [] };
ok(scalar(grep { $_ eq "$last_part created $cdx" } @fw), 'the newest part is announced: created, rel="index"')
    or diag(join "\n", @fw);
my $n_index = 0;
my $seen_index = 0;
for my $e (@fw) {
    $seen_index ||= $e =~ /part-\d+\.xml /;
    $n_index++ if $seen_index && index($e, "$cdx ") == 0;
}
is($seen_index ? $n_index : 'no part announced', 0, 'once there is an index, changedump.xml itself is never announced');
my @pa = grep { /part-\d+\.xml / } @fw;
ok(@pa && !grep({ !/ \Q$cdx\E$/ } @pa), 'every part announced names the index');
# One more list: the newest part is created, the others are not announced again.
{
    my $n = scalar changes_of('ix', $B);
    put("$ixd/i5.txt", "i5\n");
    wait_for(sub { scalar(changes_of('ix', $B)) > $n }, 30);
}
my $p4 = $last_part =~ s/part-(\d+)\.xml$/'part-' . ($1 + 1) . '.xml'/er;
ok(wait_for(sub { grep { $_ eq "$p4 created $cdx" } fw_entries() }, 30), 'a new part is announced when its package is built');
is(scalar(grep { index($_, "$first_part ") == 0 } fw_entries()), 1, 'an older part is announced once only');

# An independent checker crawls every document (the index, its parts, the
# packages and the manifests inside them) and finds nothing wrong.
SKIP: {
    my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";
    skip "no rs-check at $rs_check", 1 unless -x $rs_check;
    my $out = `$rs_check crawl $B --verify-dumps --fetch-resources 0 2>&1`;
    ok($? == 0 && $out =~ / 0 failed$/m, 'rs-check crawl --verify-dumps: 0 failed') or diag($out);
}
