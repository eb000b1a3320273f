# SPDX-License-Identifier: Apache-2.0
# The built-in hub's intake, on the watcher's side: verification of intent,
# an unknown topic refused without any request to the callback, clamped and
# enforced leases, renewal, verified unsubscription, the limits per
# callback address and in total, durable subscriptions (a request spooled
# while no watcher runs; a watcher killed mid-intake).  Private server; the
# test subscribers are RSWebSubPeers (127.0.0.1, and 127.0.0.2 on the same
# port); the store is read with sqlite3.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Request ();
use JSON::PP ();
use URI::Escape qw(uri_escape);
use Time::HiRes qw(time);
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF ua wait_for);
use RSWebSubPeer;

plan tests => 71;

my $sub = RSWebSubPeer->subscriber(secret => 'k1');
my $sub2 = RSWebSubPeer->subscriber(secret => 'k1', addr => '127.0.0.2', port => $sub->port);
my $srv = started_server(
    conf => STATE_CONF . STATUS_CONF
            . "ResourceSyncHub on\nResourceSyncHubLease 2 600\n"
            . "ResourceSyncHubAllowCallback 127.0.0.1 127.0.0.2\n"
            . "ResourceSyncHubAllowCallback localhost\n"
            . "ResourceSyncHubMaxSubscriptions 3 2\n"
            . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
    files => { 'www/data/a.txt' => "a\n" });
my $B = $srv->base;
my $topic = "$B/resourcesync/ds/notify/change";
my $spool = $srv->dir . '/state/hub/spool';
my $db = $srv->dir . '/state/state.db';

sub form {
    my (%f) = @_;
    return join '&', map { uri_escape($_) . '=' . uri_escape($f{$_}) } sort keys %f;
}

sub post {
    my (%f) = @_;
    my $rq = HTTP::Request->new(POST => "$B/resourcesync/hub",
                                ['Content-Type' => 'application/x-www-form-urlencoded'],
                                form(%f));
    return ua()->request($rq)->code;
}

sub subscribe {
    my ($cb, %more) = @_;
    return post('hub.mode' => 'subscribe', 'hub.callback' => $cb, 'hub.topic' => $topic, %more);
}

sub rows {
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "SELECT setname, topic, url, secret, lease_until, cursor FROM notify_dests WHERE kind = 'sub' ORDER BY url" 2>&1`;
    return [] if $out =~ /^\s*$/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}

sub row_of {
    my ($cb) = @_;
    my @r = grep { $_->{url} eq $cb } @{ rows() };
    return @r == 1 ? $r[0] : @r ? 'several' : undef;
}

sub pending { opendir my $dh, $spool or return 0; scalar grep { /\.req$/ } readdir $dh }

# The verification or denial GETs that reached callback $name so far (at
# either subscriber).
sub gets_of {
    my ($name) = @_;
    return grep { $_->{method} eq 'GET' && $_->{path} eq "/cb/$name" }
           $sub->requests, $sub2->requests;
}

sub wait_gets {
    my ($name, $n) = @_;
    wait_for(sub { gets_of($name) >= $n && !pending() }, 30);
    return gets_of($name);
}

sub log_count { my ($re) = @_; scalar(() = $srv->log_text =~ /$re/g) }

# ------------------------------------------------------ subscribe, secret
my $cb_a = $sub->callback('a', 'x=1&y=%41');
my $t0 = time;
is(subscribe($cb_a, 'hub.lease_seconds' => 300, 'hub.secret' => 'k1'), 202, 'subscribe a: 202');
my @g = wait_gets('a', 1);
is(scalar @g, 1, 'a: one verification GET');
like($g[0]{target}, qr{^/cb/a\?x=1&y=%41&hub\.mode=subscribe&}, 'a: callback query string kept');
is_deeply([@{ $g[0]{params} }{qw(hub.mode hub.topic hub.lease_seconds)}],
          ['subscribe', $topic, 300], 'a: mode, topic, lease');
like($g[0]{params}{'hub.challenge'} // '', qr/^[0-9a-f]{32}$/, 'a: a challenge');
my $ra = wait_for(sub { row_of($cb_a) }, 10);
ok(ref $ra, 'a: one subscription row') or diag(explain rows());
$ra = {} unless ref $ra;
is_deeply([@$ra{qw(setname topic secret cursor)}], ['ds', 'change', 'k1', 0],
          'a: set, topic, secret, cursor');
cmp_ok(abs($ra->{lease_until} / 1e6 - ($t0 + 300)), "<", 4, 'a: lease_until = now + 300 s');

# -------------------------------------------- no secret; lease clamped
my $cb_b = $sub->callback('b');
is(subscribe($cb_b, 'hub.lease_seconds' => 100000), 202, 'subscribe b: 202');
@g = wait_gets('b', 1);
is($g[0] && $g[0]{params}{'hub.lease_seconds'}, 600, 'b: lease clamped to the maximum');
my $rb = wait_for(sub { row_of($cb_b) }, 10);
ok(ref $rb && !defined $rb->{secret}, 'b: row without a secret');
cmp_ok(abs((ref $rb ? $rb->{lease_until} : 0) / 1e6 - (time + 600)), '<', 15,
       'b: lease_until = now + 600 s');

# ------------------------------------------ refused and wrong challenges
# (Callbacks on host "localhost", which is 127.0.0.1 too.)
sub lcb { (my $cb = $sub->callback(@_)) =~ s/127\.0\.0\.1/localhost/; $cb }
$sub->set('verify.c' => 'refuse', 'verify.d' => 'wrong', 'verify.e5' => 500);
for my $n (qw(c d e5)) {
    is(subscribe(lcb($n)), 202, "subscribe $n: 202");
    @g = wait_gets($n, 1);
    is_deeply([map { $_->{params}{'hub.mode'} } @g], ['subscribe'], "$n: one verification GET");
    is(row_of(lcb($n)), undef, "$n: not confirmed, no row");
}
like($srv->log_text, qr/\[resourcesync:info\].*hub: subscribe .* of '\Q${\lcb('d')}\E'.*not confirmed \(HTTP 200, wrong challenge\)/,
     'wrong challenge logged at info');

# ---------------------------------------------------------- unknown topic
# Refused in the answer; the callback hears nothing (a denial GET to any
# URL a stranger names would make the hub an anonymous GET reflector).
is(post('hub.mode' => 'subscribe', 'hub.callback' => $sub->callback('u', 'q=1'),
        'hub.topic' => "$B/resourcesync/nosuch/notify/change"), 400, 'unknown topic: 400');
is(pending(), 0, 'unknown topic: nothing spooled');
# (The renewal below: once its GET has come, u's would have too.)

# ---------------------------------------------------------------- renewal
my $before = $ra->{lease_until} // 0;
is(subscribe($cb_a, 'hub.lease_seconds' => 500, 'hub.secret' => 'k2'), 202, 'renew a: 202');
is(scalar(wait_gets('a', 2)), 2, 'renew a: a second verification GET');
my $ra2 = wait_for(sub { my $r = row_of($cb_a); ref $r && $r->{lease_until} > $before && $r }, 10);
ok($ra2, 'renew a: lease_until moved') or diag(explain rows());
is_deeply([ref $ra2 ? @$ra2{qw(secret cursor)} : ()], ['k2', 0], 'renew a: new secret, cursor kept');
is(scalar(grep { $_->{url} eq $cb_a } @{ rows() }), 1, 'renew a: still one row');
is(scalar(gets_of('u')), 0, 'unknown topic: no request to the callback');

# ----------------------------------------------------------------- limits
# a and b fill the 2 allowed for address 127.0.0.1, whatever the host is
# called: e on "localhost" is verified (its address is known once it is
# called), then denied.
my $cb_e = lcb('e');
is(subscribe($cb_e), 202, 'per-address limit: 202');
@g = wait_gets('e', 2);
is_deeply([map { @{ $_->{params} }{qw(hub.mode hub.reason)} } @g],
          ['subscribe', undef, 'denied', 'too many subscriptions for this callback address'],
          'per-address limit: verified, then denied');
is(row_of($cb_e), undef, 'per-address limit: no row');
my $cb_f = $sub2->callback('f');
is(subscribe($cb_f), 202, 'other address: 202');
ok(wait_for(sub { ref row_of($cb_f) }, 30), 'other address: subscribed (third of three)');
my $cb_g = lcb('g');
is(subscribe($cb_g), 202, 'total limit: 202');
@g = wait_gets('g', 1);
is_deeply([map { @{ $_->{params} }{qw(hub.mode hub.reason)} } @g],
          ['denied', 'too many subscriptions'], 'total limit: denied');
is(scalar @{ rows() }, 3, 'total limit: three rows');

# ------------------------------------------------------------ unsubscribe
is(post('hub.mode' => 'unsubscribe', 'hub.callback' => $cb_b, 'hub.topic' => $topic), 202,
   'unsubscribe b: 202');
@g = wait_gets('b', 2);
is_deeply([@{ $g[1]{params} // {} }{qw(hub.mode hub.topic)}], ['unsubscribe', $topic],
          'unsubscribe b: verification GET');
ok(!exists $g[1]{params}{'hub.lease_seconds'}, 'unsubscribe b: no lease');
ok(wait_for(sub { !row_of($cb_b) }, 10), 'unsubscribe b: row gone');

# ---------------------------------------------------------- lease expiry
my $cb_h = $sub->callback('h');
is(subscribe($cb_h, 'hub.lease_seconds' => 1), 202, 'short lease: 202');
@g = wait_gets('h', 1);
is($g[0] && $g[0]{params}{'hub.lease_seconds'}, 2, 'short lease: raised to the minimum');
ok(wait_for(sub { log_count(qr/hub: subscribe \S+ of '\Q$cb_h\E'.*subscribed, lease 2 s/) }, 10),
   'short lease: subscribed');
ok(wait_for(sub { !row_of($cb_h) }, 15), 'short lease: row removed when the lease ended');
# Ended by the hub's sweep or, when a notification for it is due first,
# by the delivery: either says so at info, once, and the row is gone.
my $ended = qr/\[resourcesync:info\].*(?:the lease of '\Q$cb_h\E' on set ds, topic change ended|subscription of \Q$cb_h\E to its change topic ended: its lease expired)/;
ok(wait_for(sub { log_count($ended) }, 10), 'lease end logged at info');
is(log_count($ended), 1, 'lease end logged once');

# --------------------------------------------------- spool housekeeping
my $bad = "$spool/00000000000000000001-0000000000000000.req";
open my $fh, '>', $bad or die $!; print $fh "garbage\n"; close $fh;
for my $n ('tmp-oldxyz', 'tmp-newxyz') {
    open $fh, '>', "$spool/$n" or die $!; close $fh;
}
utime time - 120, time - 120, "$spool/tmp-oldxyz";
ok(wait_for(sub { !-e $bad && !-e "$spool/tmp-oldxyz" }, 10),
   'malformed request and old temporary file removed');
ok(-e "$spool/tmp-newxyz", 'a recent temporary file stays');
unlink "$spool/tmp-newxyz";
is(log_count(qr/\[resourcesync:warn\].*removed the malformed spool file '\Q$bad\E'/), 1,
   'malformed request: one warning');

# ------------------------------------------------------------ status page
my $st = wait_for(sub { my $c = ua()->get("$B/rs-status?text")->content;
                        $c =~ /^hub-subscriptions-total: 2$/m && $c }, 10) || '';
like($st, qr/^hub-spool-pending: 0$/m, 'status: pending spool requests');
like($st, qr/^hub-subscriptions: ds change 2$/m, 'status: subscriptions of the topic');
like($st, qr/^hub-last-intake: \S+ \S+ \S+ .+$/m, 'status: last intake outcome');

# ------------------------------------------ spooled while no watcher runs
$srv->stop;
my $cb_k = $sub->callback('k');
open $fh, '>', "$spool/00000000000000000002-0000000000000000.req" or die $!;
print $fh "rs-hubreq 1\nmode=subscribe\ncallback=$cb_k\ntopic=$topic\nlease=300\n"
        . "set=ds\nkind=framework\ndeny=0\nreceived=1\n";
close $fh;
# A callback the child would refuse (127.0.0.3 is not allowed), as if DNS
# had changed after the child's check: refused when the watcher connects,
# never called (a peer listens there to tell); and a request of an older
# child marked deny (an unknown topic): dropped, nothing sent.
my $trap = RSWebSubPeer->subscriber(addr => '127.0.0.3', port => $sub->port);
my $cb_z = $trap->callback('z');
for my $i (3, 4) {
    open $fh, '>', "$spool/0000000000000000000$i-0000000000000000.req" or die $!;
    print $fh "rs-hubreq 1\nmode=subscribe\ncallback=$cb_z\ntopic=$topic\nlease=300\n"
            . ($i == 3 ? "set=ds\nkind=change\ndeny=0\n" : "set=\nkind=\ndeny=1\n") . "received=1\n";
    close $fh;
}
$srv->start_ok('restarted with a request in the spool');
ok(wait_for(sub { ref row_of($cb_k) }, 30), 'request spooled while stopped: handled after start');
is(ref row_of($cb_k) && row_of($cb_k)->{topic}, 'framework', 'its topic');
ok(wait_for(sub { !pending() }, 10), 'refused callbacks: spool drained');
is(log_count(qr/\[resourcesync:info\].*hub: subscribe \S+ of '\Q$cb_z\E'.*: callback address not allowed \(address refused: loopback\)/), 1,
   'callback checked by the watcher when connecting: refused');
is(log_count(qr/\[resourcesync:info\].*hub: subscribe \S+ of '\Q$cb_z\E'.*: dropped \(not a topic of this hub\)/), 1,
   'a request marked deny by an older child: dropped');
is_deeply([$trap->requests], [], 'refused callback: never called');
is(row_of($cb_z), undef, 'refused callback: no row');

# ------------------------------------------------- kill -9 mid-intake
# Subscriptions: a, f, k (three).  Unsubscribe f, verified slowly; the
# watcher dies while the verification is in flight.
$sub2->set('verify.f' => 'slowecho:3000');
my $n_f = gets_of('f');
my $w = $srv->watcher_pid;
is(post('hub.mode' => 'unsubscribe', 'hub.callback' => $cb_f, 'hub.topic' => $topic), 202,
   'unsubscribe f: 202');
is(pending(), 1, 'unsubscribe f: spooled');
# The intake takes the request at once (inotify); the verification takes 3 s.
Time::HiRes::sleep(1);
kill 'KILL', $w;
ok(wait_for(sub { my $n = $srv->watcher_pid; $n && $n != $w }, 30), 'watcher respawned');
ok(wait_for(sub { !row_of($cb_f) && !pending() }, 30), 'after respawn: f unsubscribed, spool empty');
is(scalar(() = $srv->log_text =~ /hub: unsubscribe \S+ of '\Q$cb_f\E'.*: unsubscribed$/mg), 1,
   'after respawn: handled once');
cmp_ok(gets_of('f') - $n_f, '>=', 1, 'verification sent again by the new watcher')
    or diag(explain [gets_of('f')]);
is(scalar @{ rows() }, 2, 'a and k remain');

# Nothing unexpected in the log.  (The set has no notifications: this file
# tries the intake only, and the start says that the hub delivers nothing,
# t/startup-errors.t.)
my @unexpected = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/
                        && !/removed the malformed spool file|watcher \(pid \d+\) died/
                        && !/server \Q$B\E: ResourceSyncHub on, but none of its sets has ResourceSyncNotify on, so its hub never delivers anything$/ }
                 split /\n/, $srv->log_text;
is_deeply(\@unexpected, [], 'no unexpected warnings or errors') or diag(join "\n", @unexpected);
