# SPDX-License-Identifier: Apache-2.0
# Publishing notifications to hubs (ResourceSyncNotifyHub) and delivering
# them to the built-in hub's subscribers, against the test peers of
# t/lib/RSWebSubPeer.pm on 127.0.0.1:
#   * fat POSTs carry Content-Type application/xml, the topic's Link header
#     (rel="self", then every hub, then the Capability List with
#     rel="resourcesync", as the specification's examples) and the exact
#     payload of a stored notification;
#   * with the hub dropping connections, then answering 503 for a while,
#     across a graceful restart, a hard restart and kill -9 of the watcher,
#     the hub takes every change notification, in order, exactly once (an
#     identical resend right after it is allowed), so every journal record
#     arrives once with contiguous intervals;
#   * a hub answering 400: logged as a permanent failure, the notification
#     skipped; ping mode: hub.mode=publish with hub.topic and hub.url and
#     the topic's Link header; each version of the change topic starts
#     where the previous one ended (t/notify-ping.t has the rest);
#   * subscribers (notify_dests rows inserted with sqlite3 into the stopped
#     server's store; the subscription-intake tests replace that): signed
#     with ResourceSyncHubSignature, ended by 410 and by the backlog limit;
#   * startup errors of the new directives.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server private_server set_conf STATE_CONF STATUS_CONF get wait_for wait_ok);
use RSWebSubPeer ();
use JSON::PP ();
use Time::HiRes qw(sleep time);

plan tests => 70;

my $hub = RSWebSubPeer->hub;
my $bad = RSWebSubPeer->hub;
my $pinged = RSWebSubPeer->hub;
$bad->set(answer => 400);
my $HUB = $hub->url;
(my $BAD = $bad->url) =~ s{/hub$}{/bad-hub};
(my $PING = $pinged->url) =~ s{/hub$}{/ping-hub};

my $conf = STATE_CONF . STATUS_CONF . "LogLevel info resourcesync:debug\n"
    . "ResourceSyncNotifyHub $HUB\n"
    . set_conf('n', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms',
               'ResourceSyncMaxEntries 8', "ResourceSyncNotifyHub $BAD fat",
               "ResourceSyncNotifyHub $PING ping");
my $srv = started_server(conf => $conf, files => { 'www/data/a.txt' => "a\n" });
my $B = $srv->base;
my $db = $srv->dir . '/state/state.db';
my $change = "$B/resourcesync/n/notify/change";

sub rows {
    my ($sql) = @_;
    return [] unless -s $db;    # never let sqlite3 (root) create it
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    return [] if $out =~ /^\s*$/ || $out =~ /no such table|database is locked/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}
sub sealed { rows("SELECT id, from_dt, until_dt, first_seq, last_seq, count, payload FROM "
                  . "notifications WHERE setname = 'n' AND topic = '$_[0]' AND sealed = 1 "
                  . "ORDER BY id") }
sub open_count { rows("SELECT COUNT(*) AS c FROM notifications WHERE sealed = 0")->[0]{c} }
sub dest { rows("SELECT * FROM notify_dests WHERE url = '$_[0]' AND topic = '$_[1]'")->[0] }
sub journal_count { rows("SELECT COUNT(*) AS c FROM journal WHERE setname = 'n'")->[0]{c} }
# Wait until every notification is sealed: one test, named after $what.
sub settle {
    my ($what) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    wait_ok(sub { !open_count() }, 30, "$what: every notification sealed");
}

# Wait until the hub rows exist (the delivery thread reconciled them).
my $start = wait_for(sub { dest($HUB, 'change') }, 30);
ok($start, 'a notify_dests row for the configured hub');
my $cursor0 = $start ? $start->{cursor} : 0;
is(dest($PING, 'change') && dest($PING, 'change')->{kind}, 'ping', 'ping hub row, kind ping');

# The requests $peer received that $match accepts, once there are $k of
# them (at most 30 s): other requests (a framework notification, another
# subscriber's delivery) may arrive first and in any order.
sub matching {
    my ($peer, $k, $match) = @_;
    my @m;
    wait_for(sub { @m = grep { $match->() } $peer->requests; @m >= $k }, 30);
    return @m;
}

my $n = 0;
# k new files; returns once they are journaled (at most 30 s): one test,
# named after $what.
sub burst {
    my ($k, $what) = @_;
    my $before = journal_count();
    RSTest::put($srv->dir . "/www/data/f" . $n++ . ".txt", "x $_\n") for 1 .. $k;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    wait_ok(sub { journal_count() >= $before + $k }, 30, "$what: $k changes journaled");
}

# --------------------------------------------------------- while up
burst(9, 'while up'); # more than ResourceSyncMaxEntries: two notifications at least
settle('while up');
my @h = matching($hub, 2, sub { $_->{path} eq '/hub'
                                && ($_->{headers}{'content-type'} // '') eq 'application/xml'
                                && $_->{headers}{link} =~ m{notify/change>} });
ok(@h >= 2, 'hub got change notifications');
is($h[0]{headers}{'content-type'}, 'application/xml', 'fat POST: Content-Type application/xml');
is($h[0]{headers}{link}, qq(<$change>; rel="self", <$HUB>; rel="hub", <$BAD>; rel="hub", )
                         . qq(<$PING>; rel="hub", <$B/resourcesync/n/capabilitylist.xml>; )
                         . qq(rel="resourcesync"),
   'fat POST: Link header, rel="self", every hub, the Capability List (rel="resourcesync")');
my %payload = map { $_->{payload} => $_ } @{ sealed('change') };
ok($payload{ $h[0]{body} }, 'fat POST: body is a stored notification payload, byte for byte');
is(get($change)->header('Link'), $h[0]{headers}{link}, 'the topic serves the same Link header');

# ------------------------------------------------ hub down, restarts, kill
# Each phase lasts until the hub has answered that way at least once.
sub answered {
    my ($how) = @_;
    wait_ok(sub { grep { $_->{status} eq $how } $hub->requests }, 60, "the hub answered $how");
}
$hub->set(answer => 'drop');
burst(2, 'hub dropping connections');
settle('hub dropping connections');
answered('drop');
$hub->set(answer => 503, retry_after => 1);
burst(3, 'hub answering 503');
settle('hub answering 503');
answered('503');
$hub->set(answer => 200);
burst(2, 'hub back');
# A restart is done when one watcher runs and it is not the one before.
sub new_watcher {
    my ($old) = @_;
    wait_for(sub { my @x = $srv->watchers; @x == 1 && $x[0] != $old ? $x[0] : undef }, 60);
}
my $w0 = $srv->watcher_pid;
$srv->graceful;
ok(new_watcher($w0), 'graceful restart: a new watcher');
burst(2, 'after a graceful restart');
settle('after a graceful restart');
$w0 = $srv->watcher_pid;
$srv->signal('HUP');
ok(new_watcher($w0), 'hard restart: a new watcher');
burst(3, 'after a hard restart');
settle('after a hard restart');
$w0 = $srv->watcher_pid;
ok($w0 && kill('KILL', $w0), 'watcher killed with SIGKILL');
ok(new_watcher($w0), 'kill -9: a new watcher');
burst(2, 'after kill -9');
settle('after kill -9');

# Wait until the hub's change row has passed the newest sealed one.
my $all;
my $caught_up = wait_for(sub {
    wait_for(sub { !open_count() }, 30);    # (what counts is the cursor below)
    $all = sealed('change');
    my $d = dest($HUB, 'change');
    $d && @$all && $d->{cursor} == $all->[-1]{id} }, 60);
ok($caught_up, 'the hub row caught up with the newest change notification');
my @want = grep { $_->{id} > $cursor0 } @$all;

# What the hub accepted (200), change topic, in arrival order, mapped to ids.
my %id = map { $_->{payload} => $_->{id} } @$all;
my @acc = map { $id{ $_->{body} } // 'unknown' }
          grep { $_->{status} eq '200' && $_->{headers}{link} =~ m{notify/change>} }
          $hub->requests;
my @dedup;
for (@acc) { push @dedup, $_ unless @dedup && $dedup[-1] eq $_ }
is_deeply(\@dedup, [map { $_->{id} } @want],
          'every change notification accepted, in id order, once (bar identical resends)');
ok(scalar(grep { $_->{status} eq 'drop' } $hub->requests)
   && scalar(grep { $_->{status} eq '503' } $hub->requests), 'the hub was down (dropped, 503)')
    or diag(join "\n", $hub->log_lines);
my @p;
my %seq;
for my $i (0 .. $#want) {
    push @p, "notification $want[$i]{id}: from != previous until"
        if $i && $want[$i]{from_dt} != $want[$i - 1]{until_dt};
    $seq{$_}++ for $want[$i]{first_seq} .. $want[$i]{last_seq};
}
push @p, 'a record carried twice' if grep { $_ > 1 } values %seq;
is_deeply(\@p, [], 'delivered notifications: contiguous, every record once');
is(scalar(keys %seq), $want[-1]{last_seq} - $want[0]{first_seq} + 1,
   'delivered notifications carry an unbroken run of journal records');

# -------------------------------------------------------------- 400, ping
ok(wait_for(sub { my $bd = dest($BAD, 'change'); $bd && $bd->{cursor} == $want[-1]{id} }, 30),
   'hub answering 400: notifications skipped (cursor moved)');
like($srv->log_text, qr/hub \Q$BAD\E refused notification \d+ of its change topic \(HTTP 400\); it is skipped/,
     'hub answering 400: logged as a permanent failure');
my @pings = grep { $_->{params}{'hub.topic'} && $_->{params}{'hub.topic'} eq $change }
            $pinged->requests;
ok(@pings >= 1, 'ping hub: pinged for the change topic');
is_deeply($pings[0] && [@{ $pings[0]{params} }{qw(hub.mode hub.topic hub.url)}],
          ['publish', $change, $change], 'ping: hub.mode=publish, hub.topic and hub.url');
is($pings[0] && $pings[0]{headers}{'content-type'}, 'application/x-www-form-urlencoded',
   'ping: a form');

# Ping hub down: each version of the change topic holds the change
# notifications sealed since the previous version, merged, and starts
# where the previous one ended (Change Notification 1.0.1, section 3:
# consecutive, non-overlapping intervals), pinged or not.
ok(wait_for(sub { my $d = dest($PING, 'change'); my $a = sealed('change');
                  $d && $d->{cursor} == $a->[-1]{id} }, 30), 'ping hub caught up');
$pinged->set(answer => 503, retry_after => 30);
my $md = sub { my $x = RSTest::xpc(RSTest::doc($_[0]));
               [map { $x->findvalue("/sm:urlset/rs:md/\@$_") } qw(from until)],
               scalar(() = $x->findnodes('/sm:urlset/sm:url')) };
# The topic once it shows the newest sealed notification: [from, until], entries.
my $version = sub {
    my $want = ($md->(sealed('change')->[-1]{payload}))[0][1];
    my $r = wait_for(sub { my $v = [$md->(get($change)->content)];
                           $v->[0][1] eq $want ? $v : undef }, 30);
    return $r ? @$r : ([], 0);
};
burst(1, 'ping hub down, first');
settle('ping hub down, first');
my ($v1) = $version->();
my $last1 = sealed('change')->[-1]{id};
burst(1, 'ping hub down, second');
settle('ping hub down, second');
my ($v2, $n2) = $version->();
my @since = grep { $_->{id} > $last1 } @{ sealed('change') };
my $want2 = 0;
$want2 += $_->{count} for @since;
ok(@since && $v1->[1] && $v2->[0] eq $v1->[1],
   'the next version of the change topic starts where the previous one ended');
is_deeply([$v2->[0], $v2->[1], $n2],
          [($md->($since[0]{payload}))[0][0], ($md->($since[-1]{payload}))[0][1], $want2],
          'it merges the notifications sealed since: from the first, until the last, every entry');
$pinged->set(answer => 200);

# Status page: per topic its newest, per hub row backlog and last outcome.
sub status_has {
    my ($re) = @_;
    wait_for(sub { my $t = get("$B/rs-status?text")->content; $t =~ $re ? $t : undef }, 30);
}
my $newest = sealed('change')->[-1];
my $iso = qr/\d{4}-\d\d-\d\dT[\d:.]+Z/;
ok(status_has(qr/^notify-topic: n change last=$newest->{id} until=$iso$/m),
   'status: notify-topic line of the change topic');
ok(status_has(qr/^notify-hub: n change \Q$HUB\E mode=fat backlog=0 last-status=200 last-try=$iso attempts=0$/m),
   'status: notify-hub line, caught up, last 200');
ok(status_has(qr/^notify-hub: n change \Q$BAD\E mode=fat backlog=0 last-status=400 last-try=$iso attempts=0$/m),
   'status: the hub answering 400');

my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/
                 && !/died \(exit status or signal 9\)/ && !/refused notification .* \(HTTP 400\)/
                 && !/ResourceSyncNotifyHub \Q$PING\E ping \(set n, .*\): a ping hub fetches/ }
          split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no unexpected warnings or errors');

# ----------------------------------------------------------- subscribers
my $sub = RSWebSubPeer->subscriber(secret => 'k3y');
my $down = RSWebSubPeer->hub;
$down->set(answer => 503, retry_after => 1);
my $DOWN = $down->url;
$sub->set('deliver.gone' => 410);
$srv->stop;
my $sconf = STATE_CONF . STATUS_CONF . "LogLevel info resourcesync:debug\nResourceSyncHub on\n"
    . "ResourceSyncHubSignature sha512\nResourceSyncHubMaxBacklog 2\n"
    . "ResourceSyncHubAllowCallback 127.0.0.1\n"
    . set_conf('n', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms',
               'ResourceSyncMaxEntries 8', "ResourceSyncNotifyHub $DOWN",
               'ResourceSyncNotifyRetry 2s');
$srv->write_conf($sconf);
my $last = $all->[-1]{id};
my $far = (time + 86400) * 1_000_000;
my ($A, $G, $L, $E) = map { $sub->callback($_) } qw(a gone late expired);
# 127.0.0.2 is loopback too, but not allowed: refused when connecting.
(my $R = $sub->callback('rebound')) =~ s{//127\.0\.0\.1:}{//127.0.0.2:};
system('sqlite3', '-cmd', '.timeout 10000', $db, "INSERT INTO notify_dests (setname, topic, kind, url, secret, lease_until, "
       . "cursor) VALUES ('n', 'change', 'sub', '$A', 'k3y', $far, $last), "
       . "('n', 'change', 'sub', '$G', NULL, $far, $last), "
       . "('n', 'change', 'sub', '$L', NULL, $far, 0), "
       . "('n', 'change', 'sub', '$R', NULL, $far, $last), "
       . "('n', 'change', 'sub', '$E', NULL, 1, $last)") == 0 or die 'sqlite3 insert';
$srv->start_ok('server with subscriber rows starts');
# The down hub's row is made by the watcher at its start, from the latest
# notification then: the burst's come after it (a loaded machine may
# otherwise seal them first, and the down hub is then never tried).
wait_for(sub { dest($DOWN, 'change') }, 30);
burst(2, 'with subscriber rows');
settle('with subscriber rows');
my @d = matching($sub, 1, sub { $_->{path} eq '/cb/a' });
ok(@d >= 1, 'subscriber a: a delivery');
like($d[0] && $d[0]{headers}{'x-hub-signature'}, qr/^sha512=[0-9a-f]{128}$/,
     'X-Hub-Signature with ResourceSyncHubSignature sha512');
is($d[0] && $d[0]{sig_ok}, 1, 'signature is the HMAC of the body with the secret');
ok(status_has(qr/^notify-subscriber: n change \Q$A\E pending=0 failures=0 last-status=200 last-try=$iso lease-until=$iso$/m),
   'status: notify-subscriber line');
my %sp = map { $_->{payload} => 1 } @{ sealed('change') };
ok($d[0] && $sp{ $d[0]{body} }, 'delivery body: a stored notification payload');
ok(wait_for(sub { !dest($G, 'change') }, 30), 'subscriber answering 410: subscription ended');
ok(!grep({ $_->{path} eq '/cb/late' } $sub->requests) && !dest($L, 'change'),
   'backlog above ResourceSyncHubMaxBacklog: ended without a delivery');
like($srv->log_text, qr/subscription of \Q$L\E to its change topic ended: \d+ notifications undelivered/,
     'backlog end logged');
ok(wait_for(sub { !dest($E, 'change') }, 30)
   && !grep({ $_->{path} eq '/cb/expired' } $sub->requests),
   'expired lease: nothing delivered, the row removed');
ok(wait_for(sub { !dest($R, 'change') }, 30)
   && !grep({ $_->{path} eq '/cb/rebound' } $sub->requests),
   'callback address not allowed at delivery time: nothing sent, subscription ended');
like($srv->log_text, qr/subscription of \Q$R\E to its change topic ended: the callback refused notification \d+ \(address refused: loopback\)/,
     'refused address logged');

# A hub down for longer than ResourceSyncNotifyRetry (2 s): retried after
# each Retry-After, then skipped and logged; the other hub rows are gone.
my $nw = sealed('change')->[-1]{id};
ok(wait_for(sub { my $d = dest($DOWN, 'change'); $d && $d->{cursor} == $nw }, 60),
   'hub down past ResourceSyncNotifyRetry: the notifications are skipped');
ok(scalar(grep { $_->{status} eq '503' } $down->requests) >= 2, 'after being retried');
like($srv->log_text, qr/hub \Q$DOWN\E did not take notification \d+ of its change topic within ResourceSyncNotifyRetry \(last: 503\); it is skipped/,
     'giving up logged');
is(dest($HUB, 'change'), undef, 'a hub no longer configured lost its rows');
$srv->stop;

# ---------------------------------------------------------- startup errors
for my $c (['ResourceSyncNotifyHub ftp://x/', qr/ResourceSyncNotifyHub: 'ftp:\/\/x\/' is not an absolute http or https URL/],
           ['ResourceSyncNotifyHub http://x/ thin', qr/ResourceSyncNotifyHub: 'thin' is not fat or ping/],
           ['ResourceSyncNotifyRetry soon', qr/ResourceSyncNotifyRetry: 'soon' is not a duration/],
           ['ResourceSyncHubSignature md5', qr/ResourceSyncHubSignature: 'md5' is not sha1, sha256, sha384 or sha512/]) {
    my $s = private_server(conf => STATE_CONF . "$c->[0]\n" . set_conf('ds', 'www/data'));
    $s->populate(files => { 'www/data/x.txt' => "x\n" });
    my ($rc, $out) = $s->start;
    ok($rc != 0 && $out =~ $c->[1], "startup error: $c->[0]") or diag($out);
}
