# SPDX-License-Identifier: Apache-2.0
# The built-in hub is nobody's proxy: every outbound request of the
# notification machinery (verification of intent, delivery to a
# subscriber, publishing to a hub) connects only to an address that passes
# the callback policy at the moment it connects, and children never look a
# name up.  DNS rebinding for real: the server runs in a mount namespace of
# its own whose /etc/resolv.conf names a test DNS responder
# (t/lib/RSDNS.pm) that answers "a<N>-<tag>.rebind.test" N times with the
# allowed address 127.0.0.1 (ResourceSyncHubAllowCallback) and then with
# 127.0.0.66, where an "internal service" listens on the same port: it
# must receive nothing.  The responder's query log shows that every lookup
# reached it (no cache answered in its place: nscd is not running, the
# TTL is 0).  A second server has http_proxy, HTTPS_PROXY and ALL_PROXY in
# its environment: the proxy must receive nothing either.  Root only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server private_server set_conf STATE_CONF wait_for put);
use RSHub qw(hub_post subscribe_form store_rows sub_rows spool_pending);
use RSWebSubPeer ();
use RSDNS ();

plan skip_all => 'needs root (a DNS responder on port 53, a mount namespace)' if $> != 0;
plan skip_all => 'unshare -m is not available here' if system('unshare -m true 2>/dev/null') != 0;
plan tests => 23;

ok(!-S '/var/run/nscd/socket' && !-S '/run/nscd/socket', 'no nscd to answer lookups in its place');

my $sub = RSWebSubPeer->subscriber;                # 127.0.0.1: allowed
my $P = $sub->port;
my $internal = RSWebSubPeer->hub(addr => '127.0.0.66', port => $P);
my $dns = RSDNS->start(addr => '127.0.83.53', zone => 'rebind.test', allowed => '127.0.0.1',
                       forbidden => '127.0.0.66');
sub name_of { my ($n, $tag) = @_; "a$n-$tag.rebind.test" }
sub cb { my ($n, $tag) = @_; 'http://' . name_of($n, $tag) . ":$P/cb/$tag" }
sub lookups { my ($name) = @_; scalar grep { $_ eq "A $name" } $dns->queries }

my $srv = private_server(
    conf => STATE_CONF . "LogLevel info resourcesync:debug\n"
            . "ResourceSyncHub on\nResourceSyncHubAllowCallback 127.0.0.1\n"
            . set_conf('n', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms',
                       'ResourceSyncNotifyHub http://' . name_of(0, 'hub') . ":$P/hub",
                       'ResourceSyncNotifyHub http://' . name_of(1000, 'goodhub') . ":$P/hub"),
    launcher => "unshare -m --propagation private sh \@DIR\@/ns.sh");
$srv->populate(files => { 'www/data/a.txt' => "a\n", 'resolv.conf' => $dns->resolv_conf,
                          'ns.sh' => "mount --bind \"\$(dirname \"\$0\")/resolv.conf\" "
                                     . "/etc/resolv.conf || exit 1\nexec \"\$@\"\n" });
$srv->start_ok('server starts in a mount namespace with the test resolver');
my $topic = $srv->base . '/resourcesync/n/notify/change';
sub sub_of { my ($cb) = @_; (grep { $_->{url} eq $cb } @{ sub_rows($srv) })[0] }
sub logged { my ($re) = @_; wait_for(sub { $srv->log_text =~ $re }, 30) }

# --------------------------------------- children look nothing up
# The watcher held: whatever DNS traffic there is comes from the child.
ok(wait_for(sub { $srv->watcher_pid }, 30), 'watcher running');
kill 'STOP', $srv->watchers;
my $r = hub_post($srv, subscribe_form($topic, cb(2, 'verify')));
is($r->code, 202, 'callback named by a host name: 202');
is(lookups(name_of(2, 'verify')), 0, 'the child sent no DNS query for it');
kill 'CONT', $srv->watchers;

# ------------------------- verification: one lookup, checked where it connects
# The name answers 127.0.0.1 twice, then 127.0.0.66: a check made before
# connecting (the child's, the watcher's) and the connection disagree.
ok(wait_for(sub { sub_of(cb(2, 'verify')) }, 30), 'a2-verify: verified at 127.0.0.1, subscribed');
is(sub_of(cb(2, 'verify')) && sub_of(cb(2, 'verify'))->{cb_addr}, '127.0.0.1',
   'a2-verify: the address verified is the one recorded');
cmp_ok(lookups(name_of(2, 'verify')), '>=', 1, 'a2-verify: the lookup reached the responder');

# A name that answers the internal address at once: refused when connecting.
is(hub_post($srv, subscribe_form($topic, cb(0, 'direct')))->code, 202, 'a0-direct: 202');
ok(logged(qr/hub: subscribe \S+ of '\Q${\cb(0, 'direct')}\E'.*: callback address not allowed \(address refused: loopback\)/),
   'a0-direct: refused at connect time, logged with the detail');
ok(!sub_of(cb(0, 'direct')) && !spool_pending($srv), 'a0-direct: no subscription, spool empty');

# ------------------------------ delivery: the name re-pointed after verification
is(hub_post($srv, subscribe_form($topic, cb(1, 'deliver')))->code, 202, 'a1-deliver: 202');
ok(wait_for(sub { sub_of(cb(1, 'deliver')) }, 30), 'a1-deliver: verified, subscribed');
put($srv->dir . '/www/data/b.txt', "b\n");
ok(logged(qr/subscription of \Q${\cb(1, 'deliver')}\E to its change topic ended: the callback refused notification \d+ \(address refused: loopback\)/),
   'a1-deliver: the delivery refused when connecting, the subscription ended');
cmp_ok(lookups(name_of(1, 'deliver')), '>=', 2, 'a1-deliver: the second lookup reached the responder');
ok(wait_for(sub { grep { $_->{method} eq 'POST' && $_->{path} eq '/cb/verify' } $sub->requests }, 30),
   'a2-verify: its delivery (second lookup, 127.0.0.1) arrived');

# ------------------------------------------------- publishing to hubs
ok(wait_for(sub { grep { $_->{method} eq 'POST' && $_->{path} eq '/hub' } $sub->requests }, 30),
   'hub a1000-goodhub (127.0.0.1): notifications published');
ok(logged(qr/hub http:\/\/\Q${\name_of(0, 'hub')}\E:\d+\/hub refused notification \d+ of its \w+ topic \(address refused: loopback\); it is skipped/),
   'hub a0-hub (127.0.0.66): refused when connecting, logged');

# ------------------------------------------------- the internal service
my @heard = map { "$_->{method} $_->{target}" } $internal->requests;
is(scalar @heard, 0, 'the internal service at 127.0.0.66 received no request')
    or diag(join "\n", @heard);
my @unexpected = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/
                        && !/hub http:\/\/a0-hub\.rebind\.test:\d+\/hub refused notification/
                        && !/subscription of http:\/\/a1-deliver\.rebind\.test:\d+\S+ .*ended: the callback refused/ }
                 split /\n/, $srv->log_text;
is_deeply(\@unexpected, [], 'no unexpected warnings or errors') or diag(join "\n", @unexpected);
$srv->stop;

# ------------------------------------- a proxy from the environment
my $proxy = RSWebSubPeer->hub;
my $psrv = started_server(
    conf => STATE_CONF . "ResourceSyncHub on\nResourceSyncHubAllowCallback 127.0.0.1\n"
            . set_conf('n', 'www/data', 'ResourceSyncNotify on'),
    env => { map { $_ => $proxy->base } qw(http_proxy HTTPS_PROXY ALL_PROXY) },
    files => { 'www/data/a.txt' => "a\n" }, name => 'server with proxies in its environment starts');
is(hub_post($psrv, subscribe_form($psrv->base . '/resourcesync/n/notify/change',
                                   $sub->callback('direct')))->code, 202, 'subscribe: 202');
ok(wait_for(sub { grep { $_->{path} eq '/cb/direct' } $sub->requests }, 30)
   && !$proxy->requests, 'the verification went to the callback itself, not through the proxy')
    or diag(explain [map { "$_->{method} $_->{target}" } $proxy->requests]);
$psrv->stop;
