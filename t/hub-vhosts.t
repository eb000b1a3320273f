# SPDX-License-Identifier: Apache-2.0
# The built-in hub's intake applies the policy of the virtual host that
# received a request: its ResourceSyncHubAllowCallback and its
# ResourceSyncHubMaxSubscriptions, also in the watcher (which learns the
# server from the request's set: sets belong to the server that declares
# them).  The main server allows no private callback; the virtual host
# allows 127.0.0.0/8 and one subscription.  Callbacks are named
# "localhost", so no child can judge them (children look nothing up): the
# watcher does, when it connects.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF wait_for free_port);
use RSHub qw(hub_post subscribe_form sub_rows spool_pending);
use RSWebSubPeer ();

plan tests => 11;

my $sub = RSWebSubPeer->subscriber;
my $S = $sub->port;
my $vport = free_port();
my $srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n" . set_conf('m', 'www/data', 'ResourceSyncNotify on') . <<"CONF",
Listen 127.0.0.1:$vport
<VirtualHost 127.0.0.1:$vport>
    ServerName 127.0.0.1:$vport
    DocumentRoot "\@DIR\@/v"
    ResourceSyncHubAllowCallback 127.0.0.0/8
    ResourceSyncHubMaxSubscriptions 1
    <Directory "\@DIR\@/v">
        Require all granted
    </Directory>
    <Directory "\@DIR\@/v/vd">
        ResourceSyncSet v
        ResourceSyncNotify on
    </Directory>
</VirtualHost>
CONF
                         files => { 'www/data/a.txt' => "a\n", 'v/vd/b.txt' => "b\n" });
my $vhost = "http://127.0.0.1:$vport";
sub cb { "http://localhost:$S/cb/$_[0]" }
sub row_of { my ($cb) = @_; (grep { $_->{url} eq $cb } @{ sub_rows($srv) })[0] }
sub heard { my ($name) = @_; scalar grep { $_->{path} eq "/cb/$name" } $sub->requests }
sub logged { my ($re) = @_; wait_for(sub { $srv->log_text =~ $re }, 30) }
my $mtopic = $srv->base . '/resourcesync/m/notify/change';
my $vtopic = "http://127.0.0.1:$vport/resourcesync/v/notify/change";

# The virtual host allows 127.0.0.0/8: verified and stored.
is(hub_post($vhost, subscribe_form($vtopic, cb('v1')))->code, 202, 'virtual host: 202');
ok(wait_for(sub { row_of(cb('v1')) }, 30), 'virtual host: its policy applied, subscribed')
    or diag($srv->log_text);
is(row_of(cb('v1')) && row_of(cb('v1'))->{setname}, 'v', 'virtual host: the subscription of its set');

# The main server allows no private address: refused when connecting.
is(hub_post($srv, subscribe_form($mtopic, cb('m1')))->code, 202, 'main server: 202');
ok(logged(qr/hub: subscribe \S+ of '\Q${\cb('m1')}\E'.*: callback address not allowed \(address refused: loopback\)/),
   'main server: its policy applied, refused at connect time');
ok(!row_of(cb('m1')) && !heard('m1'), 'main server: no subscription, the callback never called');

# The virtual host's limit (one subscription), not the main server's.
is(hub_post($vhost, subscribe_form($vtopic, cb('v2')))->code, 202, 'virtual host, second: 202');
ok(logged(qr/hub: subscribe \S+ of '\Q${\cb('v2')}\E'.*: denied \(too many subscriptions\)/),
   'virtual host, second: denied by its ResourceSyncHubMaxSubscriptions 1');
ok(!row_of(cb('v2')), 'virtual host, second: no subscription');
ok(wait_for(sub { !spool_pending($srv) }, 10), 'spool drained');
$srv->stop;
