# SPDX-License-Identifier: Apache-2.0
# Change Dumps to the letter.  Lost captures in a real run: a capture
# deleted while its file is unchanged is taken again from the file (the
# list gets its package); one whose file has other bytes now leaves its
# list without a package, and changedump.xml then never claims that
# interval: its from starts after that list, the packages it lists are
# contiguous, and the log says so once.  ResourceSyncSpecVersion 1.0: the
# manifests carry the change time in <lastmod> and no datetime (1.0
# section 13.2).  Lists close by count (ResourceSyncMaxEntries, a long period), so each step is deterministic.  Private server.
#
# The Change Dump Index (section 13.1) is not reached here: retention by
# count keeps at most ResourceSyncMaxEntries - 1 closed lists, so a running
# server makes one only when the packages' entries would pass 50 MB; its
# parts, their from/until and their announcements are unit-tested with a
# small byte limit (t/unit/test_cdump.c, test_cdumprun.c).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF get doc xpc validate wait_for wait_ok put changes_of);
use Digest::MD5 ();
use Digest::SHA qw(sha256_hex);

plan tests => 27;

my $srv = private_server(
    conf => STATE_CONF . "LogLevel info resourcesync:debug\n"
            . set_conf('cd', 'www/cd', 'ResourceSyncChangeDump on', 'ResourceSyncMaxEntries 5',
                       'ResourceSyncChangeListPeriod 1h')
            . set_conf('old', 'www/old', 'ResourceSyncChangeDump on', 'ResourceSyncMaxEntries 2',
                       'ResourceSyncChangeListPeriod 1h', 'ResourceSyncSpecVersion 1.0'));
$srv->populate(files => { 'www/cd/start.txt' => "start\n", 'www/old/start.txt' => "start\n" });
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

wait_ok(sub { cdump('cd') && cdump('old') }, 60, 'the baseline is taken (changedump.xml served)');

# List 0: complete.  List 1: a.txt's capture is lost, the file is
# unchanged.  List 2: the capture of b.txt's first version is lost, the
# file changed since.  List 3: complete.  Each list holds five changes
# (ResourceSyncMaxEntries 5: the index then names the four closed lists
# and the open one, so retention by count drops none of them); pad makes
# the changes that fill a list.
sub pad {
    my ($tag) = @_;
    return !grep { !change("pad-$tag-$_.txt", "pad $tag $_\n") } 1 .. 3;
}
ok(change('g.txt', "g\n") && change('h.txt', "h\n") && pad(0), 'list 0: five changes');
ok(change_and_lose('a.txt', "alpha\n") && change('f1.txt', "f1\n") && pad(1),
   'list 1: a.txt journaled, its capture deleted');
ok(change_and_lose('b.txt', "bravo one\n") && change('b.txt', "bravo two\n") && pad(2),
   'list 2: b.txt journaled, its capture deleted, b.txt changed');
ok(change('c.txt', "c\n") && change('d.txt', "d\n") && pad(3) && change('e.txt', "e\n"),
   'list 3 closed');

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

# An independent checker crawls every document (the index, its parts, the
# packages and the manifests inside them) and finds nothing wrong.
SKIP: {
    my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";
    skip "no rs-check at $rs_check", 1 unless -x $rs_check;
    my $out = `$rs_check crawl $B --verify-dumps --fetch-resources 0 2>&1`;
    ok($? == 0 && $out =~ / 0 failed$/m, 'rs-check crawl --verify-dumps: 0 failed') or diag($out);
}
