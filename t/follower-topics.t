# SPDX-License-Identifier: Apache-2.0
# A follower serves the notification topics byte-identical to the writer's:
# two nodes on one tree and one PostgreSQL store (t/pgcluster via RSPg),
# the set with ResourceSyncNotify on.  Before any change and after file
# changes, node b's change and framework topics answer with node a's
# status, bytes, ETag, Last-Modified and Link header (within moments), and
# 304 to node a's ETag; the store holds one version per topic; node a
# stopped, node b takes the set over, keeps serving the same bytes and
# writes the next version of the change topic.  Private servers only.
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
plan tests => 13;

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f', extra => "ResourceSyncHub on\n",
                       set => ['ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms']);
my ($na, $nb, $T) = ($c->node('a'), $c->node('b'), $c->tree);
RSTest::put("$T/a.txt", "alpha\n");
my $BASE = $c->base;
my %TOPIC = (change => "$BASE/resourcesync/f/notify/change",
             framework => "$BASE/resourcesync/f/notify/framework");

sub at { my ($srv, $url, @h) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; req('GET', $url, @h) }

# What $srv answers for a topic: status, ETag, Last-Modified, Link, body.
sub answer {
    my ($srv, $t) = @_;
    my $r = at($srv, $TOPIC{$t});
    return join "\n", $r->code, map({ $r->header($_) // '-' } qw(ETag Last-Modified Link)),
        $r->content;
}

# '' when node b answers both topics as node a does, else what differs.
sub differs {
    for my $t (sort keys %TOPIC) {
        my ($a, $b) = (answer($na, $t), answer($nb, $t));
        return "$t: node a [$a]\nnode b [$b]" if $a ne $b;
    }
    return '';
}

sub versions {
    $pg->psql("SELECT string_agg(kind || ' ' || n, ',' ORDER BY kind) FROM (SELECT kind, "
              . "COUNT(*) AS n FROM blobfiles WHERE setname = 'f' AND kind LIKE 'topic-%' "
              . "GROUP BY kind) k");
}

$na->start_ok('node a starts and writes the set');
ok(wait_for(sub { answer($na, 'framework') =~ /^200\n"/ && answer($na, 'change') =~ /^200\n/ }, 30),
   'node a serves both topics');
$nb->start_ok('node b starts later on the same store and tree');
ok(wait_for(sub { $nb->log_text =~ /set f: another node writes it/ && differs() eq '' }, 30),
   "before any change node b answers both topics as node a: status, bytes, ETag, Last-Modified, Link")
    or diag(differs());

# ------------------------------------------------- changes on the tree
my $before = answer($na, 'change');
RSTest::put("$T/b.txt", "beta\n");
RSTest::put("$T/a.txt", "alpha, changed\n");
ok(wait_for(sub { answer($na, 'change') ne $before && answer($na, 'change') =~ /b\.txt/ }, 30),
   'node a writes a new version of its change topic');
ok(wait_for(sub { differs() eq '' }, 30),
   "node b serves node a's new change and framework topics within moments") or diag(differs());
my $last = answer($na, 'change');
like($last, qr/^200\n"[0-9a-f]+-[0-9a-f]+"\n/, 'a strong ETag of size and mtime');
my @codes = map { at($nb, $TOPIC{$_}, 'If-None-Match' => at($na, $TOPIC{$_})->header('ETag'))->code }
    sort keys %TOPIC;
is("@codes", '304 304', "node b answers 304 to node a's ETags");
is(versions(), 'topic-change 1,topic-framework 1', 'the store holds one version per topic');

# ------------------------------------------------- node b takes over
$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over/ }, 30),
   'node b takes the set over once node a stopped');
my ($lcode, $letag, $llm, $llink, $lbody) = split /\n/, $last, 5;
ok(wait_for(sub { my $r = at($nb, $TOPIC{change}); $r->code == 200 && $r->content eq $lbody }, 30),
   'node b keeps serving the same bytes of the change topic');
RSTest::put("$T/c.txt", "gamma\n");
ok(wait_for(sub { my $r = at($nb, $TOPIC{change}); $r->code == 200 && $r->content =~ /c\.txt/ }, 30),
   'a new change gives a new version on node b');
# The version node b stored is the file it serves (its ETag: size and mtime).
sub stored_tag {
    my ($size, $mtime) = split /\|/, $pg->psql("SELECT size || '|' || mtime FROM blobfiles "
                                                . "WHERE setname = 'f' AND kind = 'topic-change'");
    return defined $mtime ? sprintf('"%x-%x"', $size, $mtime) : 'none';
}
ok(wait_for(sub { stored_tag() eq (at($nb, $TOPIC{change})->header('ETag') // '') }, 30),
   "the store's version of the change topic is the one node b serves")
    or diag(stored_tag() . ' vs ' . (at($nb, $TOPIC{change})->header('ETag') // '-'));
$nb->stop;
