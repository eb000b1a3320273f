# SPDX-License-Identifier: Apache-2.0
# Nodes that share a PostgreSQL store must declare each set alike: the
# writer records its set's options in the store when it takes the set,
# and a node whose own differ (here: another ResourceSyncHash) serves none
# of the set's documents but its Capability List, says which option
# differs (once, at warn; the status page gives the reason), and serves
# the set again once the options agree.  It still takes the set over
# when no node writes it (a rolling change of the configuration), and
# then the other node, with the old options, is the one that refuses.
# Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSCluster;
use RSPg;
use RSTest qw(get wait_for wait_ok);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 22;

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f');
my ($na, $nb) = ($c->node('a'), $c->node('b'));
sub conf { my ($n, $hash) = @_; $c->write_conf($n, "ResourceSyncHash $hash") }
conf('a', 'md5');
conf('b', 'sha-256');
RSTest::put($c->tree . '/a.txt', "alpha\n");

sub at { my ($srv, $path) = @_; get($srv->base . $path) }
sub status {
    my $r = get($_[0]->base . '/rs-status?auto');
    return $r->code == 200 ? $r->content : '';
}
sub reason { status($_[0]) =~ /^SetUnavailableReason: (.*)$/m && $1 ne '-' ? $1 : '' }
sub available { status($_[0]) =~ /^SetAvailable: yes$/m }
sub elsewhere { status($_[0]) =~ /^SetMode: written-by-another-node$/m }
sub said { my ($srv, $re) = @_; scalar(() = $srv->log_text =~ /$re/g) }
sub stored { $pg->psql("SELECT v FROM meta WHERE k = 'setconf:f'") }

my $DIFF_B = q{ResourceSyncHash is sha-256 here, md5 on node node-a};

$na->start_ok('node a starts and writes the set');
wait_ok(sub { at($na, '/resourcesync/f/resourcelist.xml')->code == 200 }, 60,
        "node a serves the set's Resource List");
like(stored(), qr/^ResourceSyncHash=md5$/m, "the store holds the writer's options");

$nb->start_ok('node b starts with another ResourceSyncHash');
ok(wait_for(sub { reason($nb) =~ /\Q$DIFF_B\E/ }, 30),
   'node b: the set is unavailable, and the status page names the option and both values')
    or diag(status($nb));
ok(elsewhere($nb), 'node b: the set is written by another node');
my $r = at($nb, '/resourcesync/f/changelist.xml');
is($r->code, 503, "node b answers 503 for the set's Change List Index");
ok($r->header('Retry-After'), '... with Retry-After');
is(at($nb, '/resourcesync/f/resourcelist.xml')->code, 503, "... and for its Resource List");
is(at($nb, '/resourcesync/f/capabilitylist.xml')->code, 200, '... but its Capability List is served');
# Several tries of the lease later, still said once.
ok(wait_for(sub { said($nb, qr/set f: its configuration differs/) >= 1
                  && $nb->log_text =~ /\[[^\]]*:warn\].*set f: its configuration differs from the writing node's: \Q$DIFF_B\E; this node serves none of the set's documents/ }, 10),
   'node b says so at warn, naming the option');
wait_for(sub { 0 }, 3);
is(said($nb, qr/set f: its configuration differs/), 1, '... once');

# ------------------------------------------ the options made alike again
$nb->stop;
conf('b', 'md5');
$nb->start_ok('node b restarted with the same options as node a');
ok(wait_for(sub { elsewhere($nb) && available($nb) }, 30),
   'node b: the set is available, written by another node')
    or diag(status($nb));
is(reason($nb), '', '... with no reason given');
is(said($nb, qr/its configuration differs/), 1, '... and nothing more said (its log holds the first start\'s line)');

# ------------------------------- a rolling change: node b writes, a refuses
$nb->stop;
conf('b', 'sha-256');
$nb->start_ok('node b restarted with sha-256');
# Node b's watcher has found the set written by node a before node a
# stops (else it would simply take the free set at its start).
wait_for(sub { elsewhere($nb) && reason($nb) ne '' }, 30);
$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over/ }, 30),
   'node a stopped: node b takes the set over although its options differed');
wait_ok(sub { at($nb, '/resourcesync/f/resourcelist.xml')->content =~ /hash="sha-256:/ }, 60,
        "node b's Resource List carries its own digests");
like(stored(), qr/^ResourceSyncHash=sha-256$/m, "the store holds the new writer's options");
$na->start_ok('node a started again with md5');
ok(wait_for(sub { reason($na) =~ /\QResourceSyncHash is md5 here, sha-256 on node node-b\E/ }, 30),
   'node a, now with other options than the writer, refuses the set')
    or diag(status($na));
$na->stop;
$nb->stop;
