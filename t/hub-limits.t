# SPDX-License-Identifier: Apache-2.0
# The built-in hub's subscription limits count what an attacker cannot
# multiply for free: subscriptions per callback ADDRESS, the address the
# verification of intent was sent to (every spelling of one address is
# one: 127.2, 2130706434, 0x7f000002, 0177.0.0.2, [::ffff:127.0.0.2]), and
# per CLIENT address (the address that asked).  ResourceSyncHubMaxSubscriptions
# 20 2 3: two per callback address, three per client.  Subscribers listen
# on 127.0.0.2, .3 and .4 (one port); the second client sends from
# 127.0.0.5.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF wait_for);
use RSHub qw(hub_post subscribe_form sub_rows spool_pending);
use RSWebSubPeer ();

plan tests => 17;

my $p2 = RSWebSubPeer->subscriber(addr => '127.0.0.2');
my $S = $p2->port;
my $p3 = RSWebSubPeer->subscriber(addr => '127.0.0.3', port => $S);
my $p4 = RSWebSubPeer->subscriber(addr => '127.0.0.4', port => $S);
my $srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n"
                                 . "ResourceSyncHubAllowCallback 127.0.0.0/8\n"
                                 . "ResourceSyncHubMaxSubscriptions 20 2 3\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
                         files => { 'www/data/a.txt' => "a\n" });
my $topic = $srv->base . '/resourcesync/ds/notify/change';
sub row_of { my ($cb) = @_; (grep { $_->{url} eq $cb } @{ sub_rows($srv) })[0] }
sub outcome_of {
    my ($cb) = @_;
    my $out;
    wait_for(sub { ($out) = $srv->log_text =~ /hub: subscribe \S+ of '\Q$cb\E' .*: (subscribed|denied \(.*\))/; $out }, 30);
    return $out // 'none';
}

# ------------------------------------------------ per callback address
my @spellings = ('127.2', '2130706434', '0x7f000002', '0177.0.0.2', '[::ffff:127.0.0.2]');
my %out;
for my $i (0 .. $#spellings) {
    my $cb = "http://$spellings[$i]:$S/cb/s$i";
    is(hub_post($srv, subscribe_form($topic, $cb))->code, 202, "$spellings[$i]: 202");
    $out{$cb} = outcome_of($cb);
}
is(scalar(grep { $_ eq 'subscribed' } values %out), 2, 'two subscribed to 127.0.0.2')
    or diag(explain \%out);
is(scalar(grep { $_ eq 'denied (too many subscriptions for this callback address)' } values %out), 3,
   'the other spellings denied: one quota for the address')
    or diag(explain \%out);
is_deeply([sort map { $_->{cb_addr} } @{ sub_rows($srv) }], ['127.0.0.2', '127.0.0.2'],
          'the rows record the address verified');
is(scalar(grep { $_->{path} =~ m{^/cb/s\d$} && ($_->{params}{'hub.mode'} // '') eq 'subscribe' } $p2->requests), 5,
   'every spelling reached 127.0.0.2 (verified, then the address counted)');

# ---------------------------------------------------- per client address
my $c3 = "http://127.0.0.3:$S/cb/c3";
my $c4 = "http://127.0.0.4:$S/cb/c4";
is(hub_post($srv, subscribe_form($topic, $c3))->code, 202, 'client 127.0.0.1, third: 202');
is(outcome_of($c3), 'subscribed', 'client 127.0.0.1, third: subscribed');
is(hub_post($srv, subscribe_form($topic, $c4))->code, 202, 'client 127.0.0.1, fourth: 202');
is(outcome_of($c4), 'denied (too many subscriptions from this client)',
   'client 127.0.0.1, fourth: denied');
is(hub_post($srv, -local => '127.0.0.5', subscribe_form($topic, $c4))->code, 202,
   'client 127.0.0.5: 202');
ok(wait_for(sub { my $r = row_of($c4); $r && $r->{client} eq '127.0.0.5' }, 30),
   'client 127.0.0.5: subscribed (a quota of its own)');
ok(wait_for(sub { !spool_pending($srv) }, 10), 'spool drained');
$srv->stop;
