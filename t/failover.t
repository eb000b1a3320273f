# SPDX-License-Identifier: Apache-2.0
# Failover between two nodes on one tree and one PostgreSQL store
# (t/pgcluster via RSPg), ResourceSyncFailover 2: (a) the leader's watcher
# frozen (SIGSTOP) is taken over by the other node once its lease ends,
# which lists the changes made meanwhile; thawed (SIGCONT), the old leader
# finds its lease lost (said once), writes nothing more and serves the
# set's Change Lists as the new leader does; (b) the leader's watcher killed with -9 (its httpd parent
# stopped, so it is not started again) is taken over once its lease
# ends.  Node b's wall clock is 5 s behind node a's.  Across both: every
# change journaled once, sequences and datetimes strictly increasing.
# Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Date ();
use RSCluster;
use RSPg;
use RSTest qw(get doc xpc wait_for wait_ok);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 21;

# Node b's wall clock runs 5 s behind node a's (libfaketime; the
# monotonic clock and file times left alone): a new writer whose clock is
# behind still journals after the last datetime of the one before.
my $FAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f',
                       env => { b => { LD_PRELOAD => $FAKETIME, FAKETIME => '-5s',
                                       FAKETIME_DONT_FAKE_MONOTONIC => 1, NO_FAKE_STAT => 1 } });
my ($na, $nb, $T) = ($c->node('a'), $c->node('b'), $c->tree);
RSTest::put("$T/a.txt", "alpha\n");
my $BASE = $c->base;

sub at { my ($srv, $url) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; get($url) }

# Every change entry (loc, change, datetime) of every Change List of the
# set from $srv (empty while one does not answer 200).
sub changes {
    my ($srv) = @_;
    my $r = at($srv, "$BASE/resourcesync/f/changelist.xml");
    return () unless $r->code == 200;
    my @all;
    for my $loc (map { $_->textContent }
                 xpc(doc($r->content))->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc')) {
        my $lr = at($srv, $loc);
        return () unless $lr->code == 200;
        my $x = xpc(doc($lr->content));
        push @all, map { { loc => $x->findvalue('sm:loc', $_),
                           change => $x->findvalue('rs:md/@change', $_),
                           datetime => $x->findvalue('rs:md/@datetime', $_) } }
                   $x->findnodes('/sm:urlset/sm:url');
    }
    return @all;
}

sub listed {
    my ($srv, $path) = @_;
    return grep { $_->{loc} eq "$BASE/f/$path" && $_->{change} eq 'created' } changes($srv);
}

sub status {
    my $r = get($_[0]->base . '/rs-status?auto');
    return $r->code == 200 ? $r->content : '';
}

sub elsewhere { status($_[0]) =~ /^SetMode: written-by-another-node$/m }

# The shared journal: records of one path and change twice, and pairs of
# records whose datetimes do not grow with their sequences.
sub journal_twice {
    $pg->psql("SELECT COUNT(*) - COUNT(DISTINCT (setname, dir, name, change)) FROM journal");
}
sub journal_disorder {
    $pg->psql('SELECT COUNT(*) FROM journal x JOIN journal y ON x.setname = y.setname'
              . ' AND x.seq < y.seq AND x.dt >= y.dt');
}
sub lease { $pg->psql("SELECT holder || ' ' || epoch FROM leases WHERE setname = 'f'") }

$na->start_ok('node a starts and leads');
wait_ok(sub { at($na, "$BASE/resourcesync/f/resourcelist.xml")->code == 200 }, 60,
        "node a serves the set's Resource List");
$nb->start_ok('node b starts on the same store and tree');
ok(wait_for(sub { elsewhere($nb) }, 30), 'node b: the set is written by another node');
my ($da, $db) = map { HTTP::Date::str2time(get($_->base . '/rs-status?auto')->header('Date')) } $na, $nb;
ok($da - $db >= 4 && $da - $db <= 6, "node b's clock is 5 s behind node a's") or diag("a $da, b $db");
is(lease(), 'node-a 1', 'the lease: node a, epoch 1');

# ----------------------------------------------- (a) the leader frozen
my $wa = $na->watcher_pid;
ok($wa && kill('STOP', $wa), "node a's watcher stopped (SIGSTOP)");
RSTest::put("$T/frozen-$_.txt", "while a is frozen $_\n") for 1 .. 3;
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over \(lease epoch 2\)/ }, 30),
   'node b takes the set over once the lease ended');
wait_ok(sub { (grep { listed($nb, "frozen-$_.txt") } 1 .. 3) == 3 }, 30,
        'node b lists the changes made while node a was frozen');
is(lease(), 'node-b 2', 'the lease: node b, epoch 2');
ok(kill('CONT', $wa), "node a's watcher thawed (SIGCONT)");
ok(wait_for(sub { $na->log_text =~ /set f: this node lost the set's lease \(epoch 1\): node node-b took it over \(epoch 2\); it writes nothing more/ }, 30),
   'node a says that its lease was lost, and to whom');
ok(wait_for(sub { elsewhere($na) }, 10), 'node a: the set is written by another node');
ok(wait_for(sub {
       my ($x, $y) = map { at($_, "$BASE/resourcesync/f/changelist.xml") } $na, $nb;
       $x->code == 200 && $y->code == 200 && $x->content eq $y->content }, 30),
   "node a serves the set's Change List Index as node b does (it follows the set)");
RSTest::put("$T/thawed.txt", "after a was thawed\n");
wait_ok(sub { listed($nb, 'thawed.txt') }, 30, 'node b lists a change made after the thaw');
is(lease(), 'node-b 2', 'node a took nothing back');
is(() = $na->log_text =~ /lost the set's lease/g, 1, 'node a said it once');

# ------------------------------------------ (b) the leader killed with -9
# Its httpd parent stopped first, so that no new watcher of node b takes
# the set back: the other node must.
my $wb = $nb->watcher_pid;
kill 'STOP', $nb->pid;
kill 'KILL', $wb;
ok(wait_for(sub { $na->log_text =~ /set f: no other node writes it now; this node takes it over \(lease epoch 3\)/ }, 30),
   "node a takes the set over once the killed watcher's lease ended");
kill 'CONT', $nb->pid;
RSTest::put("$T/after-kill.txt", "after b's watcher was killed\n");
wait_ok(sub { listed($na, 'after-kill.txt') }, 30, 'node a lists a new change');

# ----------------------------------------------------------- across both
my @c = changes($na);
my %seen;
is(scalar(grep { $seen{"$_->{loc} $_->{change}"}++ } @c), 0, 'every change listed once')
    or diag(join "\n", map { "$_->{loc} $_->{change} $_->{datetime}" } @c);
is(journal_twice() . ' ' . journal_disorder(), '0 0',
   'no record journaled twice; datetimes increase with sequences');
$nb->stop;
$na->stop;
