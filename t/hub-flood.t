# SPDX-License-Identifier: Apache-2.0
# The built-in hub stays fair under floods:
#   * a hundred requests whose callback hangs do not delay a legitimate
#     one: it is verified while the hundred are still pending (per-host
#     concurrency, turns across hosts, ResourceSyncHubVerifyTimeout);
#   * the spool is bounded in requests and bytes (ResourceSyncHubSpoolLimit:
#     503 with Retry-After, one log line per episode, the status page's
#     counts from the status segment) and each client address is
#     rate-limited (ResourceSyncHubRequestRate: 429 with Retry-After);
#   * the intake learns new requests from inotify, not from listing the
#     spool: no process of the server lists it while requests come and go
#     (fanotify names the processes that list it; without root, inotify
#     counts any listing).
# Private servers; subscribers are RSWebSubPeers (a hanging one on
# 127.0.0.3); the watcher is held (SIGSTOP) where the spool must fill.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF wait_for get);
use RSHub qw(hub_post subscribe_form sub_rows spool_pending);
use RSWebSubPeer ();
use RSInotify ();

plan tests => 34;

my $good = RSWebSubPeer->subscriber;
my $S = $good->port;
my $hang = RSWebSubPeer->subscriber(addr => '127.0.0.3', port => $S);
$hang->set(verify => 'slowecho:120000');
sub row_of { my ($srv, $cb) = @_; (grep { $_->{url} eq $cb } @{ sub_rows($srv) })[0] }
sub log_count { my ($srv, $re) = @_; scalar(() = $srv->log_text =~ /$re/g) }
sub status_of { my ($srv) = @_; get($srv->base . '/rs-status?text')->content }
# $pid and every process below it.
sub tree_pids {
    my ($root) = @_;
    my %parent;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $line = <$fh> // next;
        $parent{$1} = $2 if $line =~ /^(\d+) \(.*\) \S+ (\d+)/s;
    }
    my %in = ($root => 1);
    for (my $more = 1; $more;) {
        $more = 0;
        for my $p (grep { !$in{$_} && $in{ $parent{$_} } } keys %parent) {
            $in{$p} = $more = 1;
        }
    }
    return keys %in;
}

# ------------------------------------------------ a hanging callback host
my $srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n"
                                 . "ResourceSyncHubAllowCallback 127.0.0.0/8\n"
                                 . "ResourceSyncHubRequestRate 1000 1m\n"
                                 . "ResourceSyncHubVerifyTimeout 60s\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
                         files => { 'www/data/a.txt' => "a\n" });
my $topic = $srv->base . '/resourcesync/ds/notify/change';
my $n202 = grep { hub_post($srv, subscribe_form($topic, "http://127.0.0.3:$S/cb/h$_"))->code == 202 }
           1 .. 100;
is($n202, 100, 'a hundred requests for a hanging callback: 202');
my $legit = "http://127.0.0.1:$S/cb/legit";
is(hub_post($srv, subscribe_form($topic, $legit))->code, 202, 'then a legitimate one: 202');
ok(wait_for(sub { row_of($srv, $legit) }, 30), 'the legitimate one is verified and subscribed');
cmp_ok(spool_pending($srv), '>=', 95, 'while the hanging ones are still pending');
ok(wait_for(sub { $hang->arrivals }, 30), 'the hanging host holds some of them');
is(scalar($hang->requests), 0, 'none of them answered');
cmp_ok(scalar($hang->arrivals), '<=', 2, 'at most two of them at the hanging host at once')
    or diag(scalar($hang->arrivals) . ' requests at the hanging host');
$srv->stop;

# ------------------------------------- spool bounds, rates per client
$srv = started_server(conf => STATE_CONF . STATUS_CONF . "ResourceSyncHub on\n"
                             . "ResourceSyncHubAllowCallback 127.0.0.0/8\n"
                             . "ResourceSyncHubSpoolLimit 3 16\n"
                             . "ResourceSyncHubRequestRate 4 1h\n"
                             . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
                      files => { 'www/data/a.txt' => "a\n" }, name => 'second server starts');
$topic = $srv->base . '/resourcesync/ds/notify/change';
my $full = qr/\[resourcesync:warn\].*hub: the spool of subscription requests is full \(3 requests, \d+ bytes; ResourceSyncHubSpoolLimit 3 16 KiB\)/;
ok(wait_for(sub { $srv->watcher_pid }, 30), 'watcher running');
kill 'STOP', $srv->watchers;
is(join(' ', map { hub_post($srv, subscribe_form($topic, $good->callback("s$_")))->code } 1 .. 3),
   '202 202 202', 'three requests: 202');
my $r = hub_post($srv, subscribe_form($topic, $good->callback('s4')));
is($r->code, 503, 'the fourth: 503 (ResourceSyncHubSpoolLimit 3)');
is($r->header('Retry-After'), '60', 'the fourth: Retry-After');
is(hub_post($srv, -local => '127.0.0.6', subscribe_form($topic, $good->callback('o1')))->code, 503,
   'another client: 503 too (the spool is one)');
is(spool_pending($srv), 3, 'three in the spool');
like(status_of($srv), qr/^hub-spool-pending: 3$/m, 'status page: three pending (from the segment)');
is(log_count($srv, $full), 1, 'spool full: one log line for the episode');
kill 'CONT', $srv->watchers;
ok(wait_for(sub { !spool_pending($srv) && status_of($srv) =~ /^hub-spool-pending: 0$/m }, 30),
   'the watcher drains the spool; the counts follow');
$r = hub_post($srv, subscribe_form($topic, $good->callback('s5')));
is($r->code, 429, 'the client\'s fifth request within the hour: 429 (ResourceSyncHubRequestRate 4 1h)');
cmp_ok($r->header('Retry-After') // 0, '>', 0, '429: Retry-After');
is(hub_post($srv, -local => '127.0.0.6', subscribe_form($topic, $good->callback('o2')))->code, 202,
   'another client: 202 (a rate of its own)');
is(log_count($srv, qr/\[resourcesync:notice\].*hub: the spool of subscription requests takes requests again/), 1,
   'the episode\'s end logged once');
ok(wait_for(sub { row_of($srv, $good->callback('o2')) }, 30), 'and its request verified');
is(log_count($srv, $full), 1, 'still one log line for the episode');
$srv->stop;

# ---------------------------------------------------------- spool bytes
# Requests of equal size with a long callback URL: the bytes bound the
# spool long before the count does.
$srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n"
                             . "ResourceSyncHubAllowCallback 127.0.0.0/8\n"
                             . "ResourceSyncHubSpoolLimit 1000 16\n"
                             . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
                      files => { 'www/data/a.txt' => "a\n" }, name => 'third server starts');
$topic = $srv->base . '/resourcesync/ds/notify/change';
ok(wait_for(sub { $srv->watcher_pid }, 30), 'watcher running');
kill 'STOP', $srv->watchers;
my $pad = 'p' x 1900;
my @codes = map { hub_post($srv, subscribe_form($topic, $good->callback(sprintf('b%02d', $_), $pad)))->code }
            1 .. 12;
opendir my $dh, $srv->dir . '/state/hub/spool' or die $!;
my ($one) = grep { /\.req$/ } readdir $dh;
my $size = -s $srv->dir . "/state/hub/spool/$one";
my $fits = int(16 * 1024 / $size);
is(join(' ', @codes), join(' ', ('202') x $fits, ('503') x (12 - $fits)),
   "requests of $size bytes: $fits fit in 16 KiB, then 503");
kill 'CONT', $srv->watchers;
ok(wait_for(sub { !spool_pending($srv) }, 30), 'drained');
$srv->stop;

# ------------------------------------- no listing of the spool to drain it
# The intake lists the spool once, when it starts; after that it learns
# each request from inotify.  A listing (readdir) of the spool is an
# IN_ACCESS event of the directory: none while requests come and go.
$srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n"
                             . "ResourceSyncHubAllowCallback 127.0.0.0/8\n"
                             . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
                      files => { 'www/data/a.txt' => "a\n" }, name => 'fourth server starts');
$topic = $srv->base . '/resourcesync/ds/notify/change';
is(hub_post($srv, subscribe_form($topic, $good->callback('l0')))->code, 202, 'first request: 202');
ok(wait_for(sub { row_of($srv, $good->callback('l0')) }, 30), 'first request: subscribed (the intake runs)');
# Who lists the spool: with fanotify (root), the processes that did, so
# that only the server's count (anything else on the machine may walk the
# file system); else any listing (inotify).
my $spool = $srv->dir . '/state/hub/spool';
my $l = RSInotify->listers($spool);
my $w = $l ? undef : RSInotify->watch($spool, RSInotify::IN_ACCESS);
my %mine = map { $_ => 1 } tree_pids($srv->pid);
is(join(' ', map { hub_post($srv, subscribe_form($topic, $good->callback("l$_")))->code } 1 .. 5),
   '202 202 202 202 202', 'five more: 202');
ok(wait_for(sub { 6 == grep { $_->{url} =~ m{/cb/l\d$} } @{ sub_rows($srv) } }, 30),
   'five more: subscribed');
%mine = (%mine, map { $_ => 1 } tree_pids($srv->pid));
my @by = $l ? $l->pids : map { 'a process' } grep { $_ & RSInotify::IN_ISDIR } $w->events;
my @server = grep { !/^\d+$/ || $mine{$_} } @by;
is(scalar(@server), 0, 'the spool was not listed meanwhile by the server')
    or diag(join "\n", "listed by @server (the server's processes: @{[ sort keys %mine ]})",
            grep { /resourcesync:(?!debug)/ } split /\n/, $srv->log_text);
diag('the spool was listed by other processes meanwhile: ' . join(' ', grep { !$mine{$_} } @by))
    if @by > @server;
$srv->stop;
