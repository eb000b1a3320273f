# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# The WebSub test peers of t/lib/RSWebSubPeer.pm, exercised on their own
# with HTTP::Tiny so that the notification tests can rely on them: the hub
# records fat POSTs and pings in order and can be "down" (5xx or dropped
# connections); the subscriber echoes or refuses verification GETs, checks
# X-Hub-Signature and answers deliveries as told.  No module involved.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Tiny ();
use Digest::SHA qw(hmac_sha256_hex hmac_sha1_hex);
use RSWebSubPeer ();

plan tests => 41;

my $ua = HTTP::Tiny->new(timeout => 10, keep_alive => 1);

# ---- hub -------------------------------------------------------------------
my $hub = RSWebSubPeer->hub;
my $xml = qq{<?xml version="1.0"?>\n<urlset/>\n};
my $r = $ua->post($hub->url, { content => $xml,
    headers => { 'Content-Type' => 'application/xml',
                 'Link' => '<http://ex.org/c.xml>; rel="self"' } });
is($r->{status}, 200, 'hub: fat POST answered 200');
$r = $ua->post_form($hub->url, { 'hub.mode' => 'publish', 'hub.topic' => 'http://ex.org/a b',
                                 'hub.url' => 'http://ex.org/a b' });
is($r->{status}, 200, 'hub: ping answered 200');
$hub->set(answer => 503, retry_after => 5);
$r = $ua->post($hub->url, { content => $xml, headers => { 'Content-Type' => 'application/xml' } });
is($r->{status}, 503, 'hub down: 503');
is($r->{headers}{'retry-after'}, '5', 'hub down: Retry-After as set');
$hub->set(answer => 'drop');
$r = $ua->post($hub->url, { content => $xml, headers => { 'Content-Type' => 'application/xml' } });
is($r->{status}, 599, 'hub down (drop): no response at all');
$hub->set(answer => 200);
$r = $ua->post($hub->url, { content => 'again', headers => { 'Content-Type' => 'application/xml' } });
is($r->{status}, 200, 'hub up again');

my @h = $hub->wait_requests(5, 10);
is(scalar @h, 5, 'hub: five requests recorded');
is_deeply([map { $_->{seq} } @h], [1 .. 5], 'hub: in arrival order');
is($h[0]{method}, 'POST', 'fat POST: method');
is($h[0]{headers}{'content-type'}, 'application/xml', 'fat POST: Content-Type');
is($h[0]{headers}{link}, '<http://ex.org/c.xml>; rel="self"', 'fat POST: Link');
is($h[0]{body}, $xml, 'fat POST: body byte for byte');
is($h[1]{params}{'hub.mode'}, 'publish', 'ping: hub.mode');
is($h[1]{params}{'hub.topic'}, 'http://ex.org/a b', 'ping: hub.topic decoded');
is($h[1]{params}{'hub.url'}, 'http://ex.org/a b', 'ping: hub.url decoded');
is_deeply([map { $_->{status} } @h], [200, 200, 503, 'drop', 200], 'hub: answers recorded');
is($h[4]{body}, 'again', 'hub: last body');
is(scalar(my @l = $hub->log_lines), 5, 'hub: log has one line per request');
like(($hub->log_lines)[2], qr{^3 POST /hub 503$}, 'hub: log line');
$hub->stop;
is($ua->get($hub->url)->{status}, 599, 'hub stopped: nothing listens');

# ---- subscriber --------------------------------------------------------------
my $sub = RSWebSubPeer->subscriber(secret => 'Jefe');
my $cb = $sub->callback('a', 'x=1');
$r = $ua->get("$cb&hub.mode=subscribe&hub.topic=t&hub.challenge=c123&hub.lease_seconds=60");
is($r->{status}, 200, 'verify: echo answers 200');
is($r->{content}, 'c123', 'verify: echo returns the challenge');
$sub->set('verify.a' => 'refuse');
$r = $ua->get("$cb&hub.mode=subscribe&hub.topic=t&hub.challenge=c124");
is($r->{status}, 404, 'verify: refuse answers 404');
$sub->set('verify.a' => 'wrong');
$r = $ua->get("$cb&hub.mode=subscribe&hub.topic=t&hub.challenge=c125");
is($r->{content}, 'not-the-challenge', 'verify: wrong answers another body');

my $body = 'what do ya want for nothing?';
$r = $ua->post($sub->callback('a'), { content => $body, headers => {
    'Content-Type' => 'application/xml', 'X-Hub-Signature' => 'sha256=' . hmac_sha256_hex($body, 'Jefe') } });
is($r->{status}, 200, 'delivery: 200 by default');
$ua->post($sub->callback('a'), { content => $body, headers => {
    'Content-Type' => 'application/xml', 'X-Hub-Signature' => 'sha1=' . hmac_sha1_hex($body, 'Jefe') } });
$ua->post($sub->callback('a'), { content => $body, headers => {
    'Content-Type' => 'application/xml', 'X-Hub-Signature' => 'sha256=' . hmac_sha256_hex($body, 'nope') } });
$ua->post($sub->callback('a'), { content => $body, headers => { 'Content-Type' => 'application/xml' } });
$sub->set('deliver.b' => 410);
is($ua->post($sub->callback('b'), { content => $body })->{status}, 410, 'delivery to b: 410 as set');
is($ua->post($sub->callback('a'), { content => $body })->{status}, 200, 'delivery to a unaffected');
$sub->set(deliver => 500);
is($ua->post($sub->callback('c'), { content => $body })->{status}, 500, 'default for every callback: 500');
$sub->set(deliver => 'slow:300');
is($ua->post($sub->callback('c'), { content => $body })->{status}, 200, 'slow: 200 in the end');

my @s = $sub->wait_requests(11, 10);
is(scalar @s, 11, 'subscriber: eleven requests recorded');
is($s[0]{method}, 'GET', 'verification recorded as GET');
is($s[0]{target}, '/cb/a?x=1&hub.mode=subscribe&hub.topic=t&hub.challenge=c123&hub.lease_seconds=60',
   'verification: target with the callback query kept');
is($s[0]{params}{'hub.challenge'}, 'c123', 'verification: params decoded');
is_deeply([map { $_->{status} } @s[0 .. 2]], [200, 404, 200], 'verification answers recorded');
is_deeply([map { $_->{sig_ok} } @s[3 .. 5]], [1, 1, 0], 'signatures: sha256 ok, sha1 ok, wrong key');
ok(!defined $s[6]{sig_ok}, 'no signature: sig_ok undefined');
is($s[3]{body}, $body, 'delivery body recorded');
is($s[7]{path}, '/cb/b', 'delivery path');
is($s[7]{status}, 410, 'delivery status recorded');

# Concurrency: a slow callback does not hold up another one.
$sub->set(deliver => 200, 'deliver.slow' => 'slow:3000');
my $pid = fork;
if (!$pid) { HTTP::Tiny->new(timeout => 10)->post($sub->callback('slow'), { content => 's' }); exit 0 }
my $fast = HTTP::Tiny->new(timeout => 10)->post($sub->callback('fast'), { content => 'f' });
is($fast->{status}, 200, 'fast callback answered while the slow one sleeps');
my @recorded = $sub->requests;
is(scalar(grep { $_->{path} eq '/cb/slow' } @recorded), 0,
   'the slow request was not recorded yet when the fast one was answered');
waitpid $pid, 0;
$sub->stop;
