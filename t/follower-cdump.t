# SPDX-License-Identifier: Apache-2.0
# A follower serves the Change Dump byte-identical to the writer's: two
# nodes on one tree and one PostgreSQL store (t/pgcluster via RSPg), the
# set with ResourceSyncChangeDump on and a Change List closed every four
# records (ResourceSyncMaxEntries 4, which retains three closed lists).
# After changes close a few lists, node b's changedump.xml and every
# package and manifest copy it lists answer with node a's status, bytes,
# ETag and Last-Modified (within moments), and 304 to node a's ETag; the
# store holds one generation of the directory; node a stopped, node b
# takes the set over and its later packages are served by node b and, once
# node a is back as a follower, by node a too.  Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSCluster;
use RSPg;
use RSTest qw(req wait_for);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 14;

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f',
                       set => ['ResourceSyncChangeDump on', 'ResourceSyncMaxEntries 4']);
my ($na, $nb, $T) = ($c->node('a'), $c->node('b'), $c->tree);
RSTest::put("$T/a.txt", "alpha\n");
my $BASE = $c->base;
my $CD = "$BASE/resourcesync/f/changedump.xml";

sub at { my ($srv, $url, @h) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; req('GET', $url, @h) }

# What $srv answers for $url: status, ETag, Last-Modified, body.
sub answer {
    my ($srv, $url) = @_;
    my $r = at($srv, $url);
    return join "\n", $r->code, map({ $r->header($_) // '-' } qw(ETag Last-Modified)), $r->content;
}

# The packages and manifest copies (and index parts) a changedump.xml lists.
sub listed {
    my ($body) = @_;
    my %u = map { $_ => 1 } $body =~ m{(\Q$BASE\E/resourcesync/f/changedump/[^"<\s]+)}g;
    return sort keys %u;
}

sub packages { scalar grep { /\.zip$/ } listed(answer($_[0], $CD)) }

# '' when node b answers changedump.xml and everything it lists as
# $writer does, else what differs.
sub differs {
    my ($writer, $follower) = @_;
    my $doc = answer($writer, $CD);
    return "no changedump.xml: $doc" unless $doc =~ /^200\n/;
    for my $url ($CD, listed($doc)) {
        my ($w, $f) = (answer($writer, $url), answer($follower, $url));
        return "$url: writer [" . substr($w, 0, 200) . "]\nfollower [" . substr($f, 0, 200) . "]"
            if $w ne $f;
    }
    return '';
}

$na->start_ok('node a starts and writes the set');
$nb->start_ok('node b starts later on the same store and tree');
ok(wait_for(sub { $nb->log_text =~ /set f: another node writes it/ }, 30), 'node b follows');

# ------------------------------------------------- lists close
for my $i (1 .. 6) {
    last if packages($na) >= 3;
    my $had = packages($na);
    RSTest::put("$T/n$i-$_.txt", "number $i, $_\n") for 1 .. 5;
    wait_for(sub { packages($na) > $had }, 15);
}
ok(packages($na) >= 3, 'node a publishes a package per closed Change List')
    or diag(answer($na, $CD));
ok(wait_for(sub { differs($na, $nb) eq '' }, 30),
   "node b answers changedump.xml and every package and manifest copy as node a: status, bytes, "
   . "ETag, Last-Modified") or diag(differs($na, $nb));
# The status page's disk use of the Change Dump: node b's copy, as node a's.
sub cd_bytes { ($c->status($_[0]) =~ /^SetChangeDumpBytes: (\d+)$/m)[0] // 'none' }
ok(wait_for(sub { cd_bytes('a') =~ /^[1-9]/ && cd_bytes('b') eq cd_bytes('a') }, 30),
   "node b's status page gives node a's Change Dump bytes")
    or diag('node a ', cd_bytes('a'), ', node b ', cd_bytes('b'));
my @zips = grep { /\.zip$/ } listed(answer($na, $CD));
my @codes = map { at($nb, $_, 'If-None-Match' => at($na, $_)->header('ETag'))->code } ($CD, $zips[0]);
is("@codes", '304 304', "node b answers 304 to node a's ETags");
is($pg->psql("SELECT COUNT(DISTINCT gen) FROM blobfiles WHERE setname = 'f' AND kind = 'cdump'"),
   1, 'the store holds one generation of the Change Dump');
(my $later = $zips[-1]) =~ s/-(\d+)\.zip$/'-' . ($1 + 100) . '.zip'/e;
my $r = at($nb, $later);
is($r->code, 404, 'a package neither on node b nor in the store: 404');
# One the writer stored and node b has not copied yet (a row put in the
# store's generation by hand, taken out again): 503 with Retry-After.
(my $name = $later) =~ s{.*/}{};
$pg->psql("INSERT INTO blobfiles (setname, kind, gen, name, size, mtime, src_gen, src_name) "
          . "VALUES ('f', 'cdump', (SELECT MAX(gen) FROM blobfiles WHERE setname = 'f' AND "
          . "kind = 'cdump'), '$name', 1, 0, 0, '$name')");
$r = at($nb, $later);
is($r->code . ' ' . ($r->header('Retry-After') // '-'), '503 1',
   'a package the store holds and node b has not yet: 503 with Retry-After');
$pg->psql("DELETE FROM blobfiles WHERE setname = 'f' AND kind = 'cdump' AND name = '$name'");

# ------------------------------------------------- node b takes over
$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over/ }, 30),
   'node b takes the set over once node a stopped');
my %before = map { $_ => 1 } @zips;
RSTest::put("$T/later-$_.txt", "later $_\n") for 1 .. 5;
ok(wait_for(sub { grep { !$before{$_} } grep { /\.zip$/ } listed(answer($nb, $CD)) }, 30),
   'node b publishes a later package, going on from node a\'s')
    or diag(answer($nb, $CD));
$na->start_ok('node a starts again, a follower now');
ok(wait_for(sub { $na->log_text =~ /set f: another node writes it/ && differs($nb, $na) eq '' }, 30),
   "node a serves node b's Change Dump, its later package too") or diag(differs($nb, $na));
$na->stop;
$nb->stop;
