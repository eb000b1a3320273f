# SPDX-License-Identifier: Apache-2.0
# One node writes a set and follows another, both in one ring: node b
# declares set g only and writes it; node a declares f and g, writes f and
# follows g, with a ring of 16 slots (ResourceSyncRecentChanges 16), so
# that the records of both sets, of interleaved global sequences, share a
# ring that holds fewer than a round's changes.  While node a's watcher is
# stopped (SIGSTOP), changes of g and then of f are made; when it goes on
# it learns of both at once.  Node a lists every change of f once, and
# serves g's Change Lists byte-identical to node b's.  (The order in which
# a node puts the records of the two sets is not forced here: the case of
# a followed set's records put after newer ones, some out of the window,
# is t/unit/test_ring.c's followed_set_put_late.)  Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSPg;
use RSTest qw(req doc xpc wait_for wait_ok STATE_CONF STATUS_CONF);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 11;

my $BASE = 'http://rs.example';

sub conf {
    my ($node, $tree, @sets) = @_;
    return STATE_CONF . qq(ResourceSyncStore pgsql "${\ $pg->dsn}"\n)
        . "ResourceSyncNodeName $node\nResourceSyncRecentChanges 16\n"
        . "ResourceSyncBaseURL $BASE\n" . qq(DocumentRoot "$tree"\n)
        . qq(<Directory "$tree">\n    Require all granted\n</Directory>\n)
        . join('', map { qq(<Directory "$tree/$_">\n    ResourceSyncSet $_\n</Directory>\n) } @sets)
        . STATUS_CONF;
}

my $nb = RSTest::private_server();
my $tree = $nb->dir . '/www';
$nb->write_conf(conf('node-b', $tree, 'g'));
$nb->populate(files => { 'www/g/g0.txt' => "g\n", 'www/f/f0.txt' => "f\n" });
my $na = RSTest::private_server();
$na->write_conf(conf('node-a', $tree, 'f', 'g'));

sub at { my ($srv, $url) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; req('GET', $url) }
sub lists_of {
    my ($r) = @_;
    return () unless $r->code == 200;
    return map { $_->textContent }
        xpc(doc($r->content))->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc');
}
# Every "loc change" of set $set's lists on $srv (empty until all answer).
sub changes {
    my ($srv, $set) = @_;
    my @all;
    for my $loc (lists_of(at($srv, "$BASE/resourcesync/$set/changelist.xml"))) {
        my $r = at($srv, $loc);
        return () unless $r->code == 200;
        my $x = xpc(doc($r->content));
        push @all, map { $x->findvalue('sm:loc', $_) . ' ' . $x->findvalue('rs:md/@change', $_) }
                   $x->findnodes('/sm:urlset/sm:url');
    }
    return @all;
}
# '' when $set's index and lists answer alike on both nodes.
sub differs {
    my ($set) = @_;
    my $url = "$BASE/resourcesync/$set/changelist.xml";
    my ($x, $y) = (at($na, $url), at($nb, $url));
    return 'index' unless $x->code == 200 && $y->code == 200 && $x->content eq $y->content;
    for my $loc (lists_of($x)) {
        my ($p, $q) = (at($na, $loc), at($nb, $loc));
        return $loc unless $p->code == 200 && $q->code == 200 && $p->content eq $q->content;
    }
    return '';
}

$nb->start_ok('node b starts and writes set g');
wait_ok(sub { at($nb, "$BASE/resourcesync/g/resourcelist.xml")->code == 200 }, 60,
        'node b serves g');
$na->start_ok('node a starts, writes f and follows g');
wait_ok(sub { at($na, "$BASE/resourcesync/f/resourcelist.xml")->code == 200 && differs('g') eq '' },
        60, "node a serves f, and g's Change Lists as node b does");

# Node a's watcher stopped while g and then f change.
my @f;
my $wa = $na->watcher_pid;
for my $round (1 .. 3) {
    kill 'STOP', $wa;
    RSTest::put("$tree/g/r$round-$_.txt", "g $round $_\n") for 1 .. 12;
    wait_for(sub { grep { /r$round-12\.txt created/ } changes($nb, 'g') }, 30);
    RSTest::put("$tree/f/r$round-$_.txt", "f $round $_\n") for 1 .. 12;
    push @f, map { "$BASE/f/r$round-$_.txt created" } 1 .. 12;
    kill 'CONT', $wa;
    ok(wait_for(sub { differs('g') eq '' }, 30), "round $round: node a caught up with g");
}
my @got;
ok(wait_for(sub { @got = changes($na, 'f'); @got == @f }, 30), "node a lists f's changes")
    or diag(scalar(@got) . ' of ' . scalar(@f));
is_deeply([sort @got], [sort @f], "node a lists every change of f once");
my $d;
ok(wait_for(sub { ($d = differs('g')) eq '' }, 30), "node a serves g's Change Lists as node b does")
    or diag("differs: $d");
is(scalar(grep { /\[resourcesync:(error|crit)\]/ } split /\n/, $na->log_text), 0,
   'node a logged no error');
$na->stop;
$nb->stop;
