# SPDX-License-Identifier: Apache-2.0
# The built-in hub on two nodes of one tree and one PostgreSQL store
# (t/pgcluster via RSPg), ResourceSyncFailover 2: a subscription sent to
# the node that does not write the set (the follower) is queued in the
# store (hub_queue) and verified by the writer's intake, once (its log
# line on the writer, none on the follower); the subscription row is
# stored; a change reaches the subscriber once, delivered by the writer;
# an unsubscription through the follower works the same way; a request
# queued while the writer's watcher is frozen is applied by the next
# writer once it took the set over.  Private servers only; the test
# subscriber is an RSWebSubPeer.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Request ();
use URI::Escape qw(uri_escape);
use RSCluster;
use RSPg;
use RSTest qw(get ua wait_for wait_ok);
use RSWebSubPeer;

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 22;

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f',
                       extra => "ResourceSyncHub on\nResourceSyncHubLease 2 600\n"
                                . "ResourceSyncHubAllowCallback 127.0.0.1\n",
                       set => ['ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms']);
my ($na, $nb, $T) = ($c->node('a'), $c->node('b'), $c->tree);
RSTest::put("$T/a.txt", "alpha\n");
my $BASE = $c->base;
my $topic = "$BASE/resourcesync/f/notify/change";
my $sub = RSWebSubPeer->subscriber;

sub status {
    my $r = get($_[0]->base . '/rs-status?auto');
    return $r->code == 200 ? $r->content : '';
}

sub hub {
    my ($srv, $mode, $cb) = @_;
    my $body = join '&', map { uri_escape($_->[0]) . '=' . uri_escape($_->[1]) }
        ['hub.mode', $mode], ['hub.callback', $sub->callback($cb)], ['hub.topic', $topic];
    my $rq = HTTP::Request->new(POST => $srv->base . '/resourcesync/hub',
                                ['Content-Type' => 'application/x-www-form-urlencoded'], $body);
    return ua()->request($rq)->code;
}

sub gets_of {
    my ($cb) = @_;
    return grep { $_->{method} eq 'GET' && $_->{path} eq "/cb/$cb" } $sub->requests;
}

# The deliveries to callback $cb whose payload names $path.
sub posts_of {
    my ($cb, $path) = @_;
    return grep { $_->{method} eq 'POST' && $_->{path} eq "/cb/$cb" && $_->{body} =~ /\Q$path\E/ }
           $sub->requests;
}

sub row { $pg->psql("SELECT COUNT(*) FROM notify_dests WHERE kind = 'sub' AND url = '"
                    . $sub->callback($_[0]) . "'") }
sub queued { $pg->psql('SELECT COUNT(*) FROM hub_queue') }

# The intake's outcome lines of callback $cb in a node's log.
sub outcomes {
    my ($srv, $cb) = @_;
    my $url = quotemeta $sub->callback($cb);
    return $srv->log_text =~ /hub: \w+ \S+ of '$url' for [^\n]*/g;
}

$na->start_ok('node a starts and writes the set');
wait_ok(sub { get($na->base . '/resourcesync/f/resourcelist.xml')->code == 200 }, 60,
        "node a serves the set's Resource List");
$nb->start_ok('node b starts on the same store and tree');
ok(wait_for(sub { status($nb) =~ /^SetMode: written-by-another-node$/m }, 30),
   'node b: the set is written by another node');

# ------------------------------------------- subscribe through node b
is(hub($nb, 'subscribe', 'a'), 202, 'node b accepts the subscription (202)');
ok(wait_for(sub { row('a') == 1 }, 30), 'the subscription row is in the store');
is(scalar(gets_of('a')), 1, 'one verification GET reached the subscriber');
like(join("\n", outcomes($na, 'a')), qr/subscribe queued-\d+ of .*: subscribed, lease/,
     "node a's intake verified and stored it (a queued request)");
my @b = outcomes($nb, 'a');
ok(@b == 1 && $b[0] =~ /: queued for the node that writes set f$/,
   'node b queued it, and did nothing else with it') or diag(join "\n", @b);
is(queued(), 0, 'the queue is empty again');
ok(wait_for(sub { status($na) =~ /^HubQueuedTotal: 0$/m }, 10),
   "node a's status page shows the queue");

# ---------------------------------------------- a change, delivered once
RSTest::put("$T/n1.txt", "one\n");
ok(wait_for(sub { posts_of('a', 'n1.txt') >= 1 }, 30), 'the subscriber receives the change');
RSTest::put("$T/n2.txt", "two\n");
ok(wait_for(sub { posts_of('a', 'n2.txt') >= 1 }, 30), 'and the next one');
is(scalar(posts_of('a', 'n1.txt')), 1, 'the first change was delivered once (not by both nodes)');

# ------------------------------------------ unsubscribe through node b
is(hub($nb, 'unsubscribe', 'a'), 202, 'node b accepts the unsubscription (202)');
ok(wait_for(sub { row('a') == 0 }, 30), 'the subscription row is gone');
is(scalar(gets_of('a')), 2, 'verified once more, once');
like(join("\n", outcomes($na, 'a')), qr/unsubscribe queued-\d+ of .*: unsubscribed$/m,
     "node a's intake verified and deleted it");

# ---------------- queued while the writer is frozen: the next writer applies it
my $wa = $na->watcher_pid;
ok($wa && kill('STOP', $wa), "node a's watcher stopped (SIGSTOP)");
is(hub($nb, 'subscribe', 'b'), 202, 'node b accepts a subscription meanwhile');
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over/
                  && row('b') == 1 }, 30),
   'node b takes the set over and stores the subscription');
my $o = join "\n", outcomes($nb, 'b');
ok($o =~ /: queued for the node that writes set f\n.*subscribe queued-\d+ of .*: subscribed, lease/s
   && gets_of('b') == 1 && queued() == 0,
   'queued while node a wrote the set, then verified once by node b from the queue')
    or diag($o);
kill 'CONT', $wa;
$nb->stop;
$na->stop;
