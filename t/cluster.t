# SPDX-License-Identifier: Apache-2.0
# Two nodes on one tree and one PostgreSQL store, behind httpd's own
# mod_proxy_balancer (t/lib/RSCluster.pm): a destination that reads only
# through the balancer (its requests alternate between the nodes)
# reconstructs the tree exactly while files change, across the failures of
# a cluster: the writing node stopped, the writer's watcher killed with -9,
# PostgreSQL restarted, both nodes restarted, the writer cut from the
# database (fencing).  After each, every document fetched from each node
# directly is byte-identical, with the same ETag.  Node b starts later
# than node a (a follower started after the writer wrote).  Throughout:
# no record journaled twice, datetimes increasing with sequences.
# Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path remove_tree);
use POSIX qw(_exit);
use Time::HiRes qw(sleep time);
use RSPg;
use RSCluster;
use RSTest qw(get doc xpc put wait_for wait_ok);
use RSTest::Destination;

# Its scenarios take a minute; under AddressSanitizer the same code runs in
# the shorter two-node files (follow-snapshots, follower-changelists,
# follower-twosets, hub-nodes, failover, cluster-options).
plan skip_all => 'the cluster is tested once, without AddressSanitizer' if $ENV{RS_ASAN};
my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 40;

my $SEED = $ENV{RS_MUTATOR_SEED} || (time() ^ $$) & 0xffff;
diag("mutator seed $SEED (set RS_MUTATOR_SEED to repeat)");

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], socket => 'a',
                       set => ['ResourceSyncHash sha-256', 'ResourceSyncMaxEntries 40',
                               'ResourceSyncChangeListPeriod 4s']);
my $T = $c->tree;
put("$T/base-$_.txt", "base $_\n") for 1 .. 60;
make_path("$T/d1/d2");
put("$T/d1/d2/deep-$_.txt", "deep $_\n") for 1 .. 20;

# Random changes below the tree for $secs seconds, in a child process.
sub mutator {
    my ($secs, $seed) = @_;
    my $pid = fork // die "fork: $!";
    return $pid if $pid;
    srand($seed);
    my $end = time() + $secs;
    my $n = 0;
    while (time() < $end) {
        opendir my $dh, $T or _exit(1);
        my @files = map { "$T/$_" } grep { -f "$T/$_" } readdir $dh;
        closedir $dh;
        my $op = int(rand(6));
        $n++;
        if ($op <= 1 || !@files) { put("$T/m$$-$n.txt", "m $n " . ('x' x int(rand(3000))) . "\n") }
        elsif ($op == 2)         { unlink $files[rand @files] }
        elsif ($op == 3)         { rename $files[rand @files], "$T/r$$-$n.txt" }
        elsif ($op == 4)         { make_path("$T/n$n"); put("$T/n$n/a.txt", "a $n\n") }
        else                     { put($files[rand @files], "rewritten $n\n") }
        sleep(0.01 + rand(0.03));
    }
    _exit(0);
}

my $dest = RSTest::Destination->new(base => $c->base, set => 'r', src => $T,
                                    root => $c->base . '/r/');

# Changes for $secs seconds while $middle runs; then the destination,
# reading through the balancer, must hold exactly the tree.
sub scenario {
    my ($name, $secs, $middle) = @_;
    my $pid = mutator($secs, $SEED++);
    $middle->() if $middle;
    waitpid($pid, 0);
    my $diff = $dest->sync_until_equal(120);
    if ($dest->rebaseline) { # (told to: a new history, never expected here)
        fail("$name: the destination was told to take a new baseline");
    }
    is($diff, '', "$name: through the balancer, the destination holds exactly the tree")
        or diag(join("\n", 'baseline at ' . ($dest->at // '-'), @{ $dest->history }));
    is_deeply($dest->errors, [], "$name: datetimes increase, (loc, datetime) unique, documents valid");
    @{ $dest->errors } = ();
}

# Every document of the set as node $n serves it: URL -> "code etag body".
sub documents {
    my ($n) = @_;
    my $S = $c->base . '/resourcesync/r';
    my %d;
    my $one = sub {
        my ($url) = @_;
        my $r = $c->at($n, $url);
        $d{$url} = join("\n", $r->code, $r->header('ETag') // '-', $r->content);
        return $r->code == 200 ? xpc(doc($r->content)) : undef;
    };
    $one->($c->base . '/.well-known/resourcesync');
    $one->("$S/capabilitylist.xml");
    for my $index ("$S/resourcelist.xml", "$S/changelist.xml") {
        my $x = $one->($index) or next;
        $one->($_->textContent) for $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc');
    }
    return \%d;
}

# The URLs whose answers differ between the nodes ('' when none).
sub differ {
    my ($da, $db) = (documents('a'), documents('b'));
    my %u = (%$da, %$db);
    return join ' ', grep { ($da->{$_} // '') ne ($db->{$_} // '') || $da->{$_} !~ /^200\n/ }
                     sort keys %u;
}

sub same_documents {
    my ($name) = @_;
    my $why = '';
    ok(wait_for(sub { ($why = differ()) eq '' }, 60),
       "$name: every document of node a and node b is the same bytes and ETag")
        or diag("differ: $why");
}

sub journal_ok {
    my ($name) = @_;
    is($pg->psql('SELECT COUNT(*) - COUNT(DISTINCT seq) FROM journal') . ' '
       . $pg->psql('SELECT COUNT(*) FROM journal x JOIN journal y ON x.setname = y.setname'
                   . ' AND x.seq < y.seq AND x.dt >= y.dt'),
       '0 0', "$name: no sequence twice; datetimes increase with sequences");
}

sub wait_writer {
    my ($n, $secs) = @_;
    return wait_for(sub { $c->writer eq $n }, $secs // 30);
}

sub watcher_up {
    my ($n) = @_;
    return wait_for(sub { $c->status($n) =~ /^State: (watching|scanning)$/m
                          || $c->status($n) =~ /^SetMode: written-by-another-node$/m }, 60);
}

# ---------------------------------------------------------------- start
$c->start_ok('a', 'node a starts');
ok(wait_writer('a', 60), 'node a writes the set');
$c->start_lb_ok;
wait_ok(sub { get($c->base . '/resourcesync/r/resourcelist.xml')->code == 200 }, 60,
        'the balancer serves the Resource List');
my $pid = mutator(3, $SEED++);
waitpid($pid, 0);
$c->start_ok('b', 'node b starts later, as a follower');
ok(wait_for(sub { $c->status('b') =~ /^SetMode: written-by-another-node$/m }, 30),
   'node b: the set is written by another node');
$dest->baseline;
scenario('running', 4);
same_documents('running');

# ------------------------------------------------- the writer stopped
scenario('writer stopped', 5, sub {
    sleep(1);
    $c->stop('a');
    ok(wait_writer('b'), 'node a stopped: node b writes the set');
});
$c->start_ok('a', 'node a starts again');
ok(watcher_up('a'), "node a's watcher runs");
scenario('writer back as follower', 2);
same_documents('node a follows');

# ------------------------------------- the writer's watcher killed -9
scenario('watcher killed', 5, sub {
    sleep(1);
    my $w = $c->node('b')->watcher_pid;
    kill 'STOP', $c->node('b')->pid;    # no new watcher of node b takes it back
    ok($w && kill('KILL', $w), "node b's watcher killed with -9");
    ok(wait_writer('a'), 'node a takes the set over');
    kill 'CONT', $c->node('b')->pid;
});
same_documents('after kill -9');

# ------------------------------------------------ PostgreSQL restarted
scenario('PostgreSQL restarted', 5, sub {
    sleep(1);
    $pg->stop;
    sleep(1);
    $pg->restart;
    ok(wait_for(sub { $c->writer ne '' }, 60), 'a node writes the set again');
});
same_documents('after PostgreSQL restarted');

# ----------------------------------------------- both nodes restarted
scenario('both restarted', 5, sub {
    sleep(1);
    $c->stop($_) for qw(a b);
    $c->start_ok($_, "node $_ starts again") for qw(b a);
    ok(wait_for(sub { $c->writer ne '' }, 60), 'a node writes the set');
});
same_documents('after both restarted');

# ----------------------------------- the writer cut from the database
unless (wait_writer('a', 1)) {    # node b writes: its stop hands the set to node a
    $c->stop('b');
    wait_writer('a', 30);
    $c->node('b')->start;
}
ok(wait_writer('a', 30), 'node a (on the Unix socket) writes the set');
scenario('writer cut from the database', 6, sub {
    sleep(1);
    $pg->cut_socket('node-a');
    ok(wait_writer('b', 30), 'node a cut off: node b takes the set over');
    sleep(1);
    $pg->uncut_socket;
    ok(wait_for(sub { $c->node('a')->log_text =~ /set r: this node lost the set's lease/ }, 60),
       'node a, back, finds its lease lost');
});
same_documents('after the cut');
journal_ok('throughout');
is(scalar(grep { /\[[^\]]*:(error|crit|alert|emerg)\]/ && !/store|PostgreSQL|connection|server closed/ }
          map { split /\n/, $c->node($_)->log_text } qw(a b)), 0,
   'no error logged but the store failures');
$c->stop_all;
