# SPDX-License-Identifier: Apache-2.0
# The built-in hub's subscription endpoint (<prefix>/hub): what a child
# answers and what it leaves in the spool for the watcher.  Private servers.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Request ();
use URI::Escape qw(uri_escape);
use RSTest qw(started_server set_conf STATE_CONF ua);

plan tests => 100;

my $PUBLIC_CB = 'http://93.184.216.34:8080/cb?id=7&x=%41';

sub form {
    my (%f) = @_;
    return join '&', map { uri_escape($_) . '=' . uri_escape($f{$_}) } sort keys %f;
}

# post($srv, $body, [content type]) -> HTTP::Response
sub post {
    my ($srv, $body, $type) = @_;
    my $rq = HTTP::Request->new(POST => $srv->base . '/resourcesync/hub',
                                ['Content-Type' => $type // 'application/x-www-form-urlencoded'],
                                $body);
    return ua()->request($rq);
}

sub spool_dir { $_[0]->dir . '/state/hub/spool' }

sub spool_files {
    my ($srv) = @_;
    opendir my $dh, spool_dir($srv) or return ();
    return sort grep { !/^\.\.?$/ } readdir $dh;
}

# The fields of one spool file: { key => decoded value }, plus 'magic'.
sub record {
    my ($path) = @_;
    open my $fh, '<', $path or die "$path: $!";
    my @lines = <$fh>;
    chomp @lines;
    my %r = (magic => shift @lines);
    for (@lines) {
        my ($k, $v) = /^([a-z]+)=(.*)$/ or die "bad line '$_' in $path";
        $v =~ s/%([0-9A-F]{2})/chr hex $1/ge;
        $r{$k} = $v;
    }
    return \%r;
}

# Post a request that must be spooled; returns (response, record of the
# one new file, or undef).
sub spooled {
    my ($srv, $body) = @_;
    my %before = map { $_ => 1 } spool_files($srv);
    my $r = post($srv, $body);
    my @new = grep { !$before{$_} } spool_files($srv);
    return ($r, @new == 1 && $new[0] =~ /^\d{20}-[0-9a-f]{16}\.req$/
                ? record(spool_dir($srv) . "/$new[0]") : undef);
}

# A refused request: exact status and text/plain reason, nothing spooled.
sub refused {
    my ($srv, $name, $code, $reason, $body, $type) = @_;
    my $n = () = spool_files($srv);
    my $r = post($srv, $body, $type);
    is($r->code, $code, "$name: $code");
    is($r->content, defined $reason ? "$reason\n" : $r->content, "$name: reason")
        if defined $reason;
    is(scalar(() = spool_files($srv)), $n, "$name: nothing spooled");
}

# One child (prefork): the once-only log line of a failing spool is
# checked below, and httpd closes the connection after a 503.
my $srv = started_server(mpm => 'prefork',
                         conf => "StartServers 1\nMinSpareServers 1\nMaxSpareServers 1\n"
                                 . "ServerLimit 1\nMaxRequestWorkers 1\n"
                                 . STATE_CONF . "ResourceSyncHub on\nResourceSyncHubLease 10m 2d\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncNotify on')
                                 . set_conf('quiet', 'www/quiet'),
                         files => { 'www/data/a.txt' => "a\n", 'www/quiet/q.txt' => "q\n" });
my $B = $srv->base;
my $topic = "$B/resourcesync/ds/notify/change";
# The watcher's hub intake takes spool files away within a fraction of a
# second (t/hub-subscribe.t); this file looks at what the children leave,
# so the watcher is held (SIGSTOP) and let go before each stop.
sub hold_intake {
    my ($s) = @_;
    RSTest::wait_ok(sub { $s->watcher_pid }, 20, 'a watcher runs (held while the spool is looked at)')
        and kill 'STOP', $s->watchers;
}
sub release_intake { kill 'CONT', $_[0]->watchers }
hold_intake($srv);

# --------------------------------------------------------------- accepted
my ($r, $rec) = spooled($srv, form('hub.mode' => 'subscribe', 'hub.callback' => $PUBLIC_CB,
                                   'hub.topic' => $topic, 'hub.lease_seconds' => 3600,
                                   'hub.secret' => "s3cr\xc3\xa9t 1", 'unknown' => 'ignored'));
is($r->code, 202, 'subscribe: 202 Accepted');
is($r->header('Content-Type'), 'text/plain; charset=utf-8', 'subscribe: text/plain');
ok($rec, 'subscribe: one spool file <time>-<rand>.req') or diag(join ' ', spool_files($srv));
$rec //= {};
is($rec->{magic}, 'rs-hubreq 2', 'subscribe: record format line');
is($rec->{mode}, 'subscribe', 'subscribe: mode');
is($rec->{callback}, $PUBLIC_CB, 'subscribe: callback with its query string');
is($rec->{topic}, $topic, 'subscribe: topic');
is($rec->{lease}, 3600, 'subscribe: lease');
is($rec->{secret}, "s3cr\xc3\xa9t 1", 'subscribe: secret (UTF-8 bytes)');
is_deeply([@$rec{qw(set kind client)}], ['ds', 'change', '127.0.0.1'],
          'subscribe: set ds (so the server that received it), kind change, the client');
like($rec->{received}, qr/^\d{16}$/, 'subscribe: received in microseconds');
is_deeply([grep { /^tmp-/ } spool_files($srv)], [], 'no temporary file left');

($r, $rec) = spooled($srv, form('hub.mode' => 'unsubscribe', 'hub.callback' => $PUBLIC_CB,
                                'hub.topic' => "$B/resourcesync/ds/notify/framework"));
is($r->code, 202, 'unsubscribe: 202');
is_deeply([@{ $rec // {} }{qw(mode kind lease)}], ['unsubscribe', 'framework', 2 * 86400],
          'unsubscribe: framework topic, default lease clamped to the maximum');
ok(!exists $rec->{secret}, 'unsubscribe: no secret line');

($r, $rec) = spooled($srv, form('hub.mode' => 'subscribe', 'hub.callback' => $PUBLIC_CB,
                                'hub.topic' => $topic, 'hub.lease_seconds' => 1));
is($rec && $rec->{lease}, 600, 'lease below the minimum: raised to ResourceSyncHubLease min');

# A topic that is not this server's: refused in the answer, nothing
# spooled, so nothing is ever sent to the callback (no denial GET: the hub
# would be a GET reflector for anyone).  The topic paths of a set without
# ResourceSyncNotify on are no topics (404, nothing published): the same.
for my $t ("$B/resourcesync/nosuch/notify/change", "$B/resourcesync/ds/notify/other",
           'http://elsewhere.example/resourcesync/ds/notify/change',
           "$B/resourcesync/quiet/notify/change", "$B/resourcesync/quiet/notify/framework") {
    refused($srv, "unknown topic $t", 400, 'hub.topic is not a topic of this hub',
            form('hub.mode' => 'subscribe', 'hub.callback' => $PUBLIC_CB, 'hub.topic' => $t));
}

# A callback named by a host name: the child looks nothing up (the
# watcher judges every address it connects to), so a name that resolves
# to loopback is spooled like any other, and the answer says nothing of
# what it resolves to.
($r, $rec) = spooled($srv, form('hub.mode' => 'subscribe', 'hub.callback' => 'http://localhost:9/cb',
                                'hub.topic' => $topic));
is($r->code, 202, 'callback named localhost: 202 (no lookup in the child)');
unlike($r->content, qr/127\.0\.0\.1|::1|loopback/, 'callback named localhost: the answer names no address');
is($rec && $rec->{callback}, 'http://localhost:9/cb', 'callback named localhost: spooled');

# --------------------------------------------------------------- refused
my %good = ('hub.mode' => 'subscribe', 'hub.callback' => $PUBLIC_CB, 'hub.topic' => $topic);
refused($srv, 'no callback', 400, 'hub.callback is missing',
        form(%good, 'hub.callback' => ''));
refused($srv, 'bad mode', 400, 'hub.mode is not subscribe or unsubscribe',
        form(%good, 'hub.mode' => 'publish'));
refused($srv, 'bad lease', 400, 'hub.lease_seconds is not a whole number of seconds',
        form(%good, 'hub.lease_seconds' => '10d'));
refused($srv, 'secret of 200 bytes', 400, 'hub.secret is 200 bytes or longer',
        form(%good, 'hub.secret' => 'x' x 200));
refused($srv, 'mode twice', 400, 'hub.mode given twice', form(%good) . '&hub.mode=subscribe');
refused($srv, 'ftp callback', 400, 'hub.callback is not an http or https URL',
        form(%good, 'hub.callback' => 'ftp://93.184.216.34/x'));
refused($srv, 'text/plain body', 415,
        'the body must be application/x-www-form-urlencoded (W3C WebSub 5.1)',
        form(%good), 'text/plain');
refused($srv, 'body over 8192 bytes', 413, undef, form(%good) . '&pad=' . ('p' x 9000));
# Addresses written literally, in any spelling the resolver reads: refused
# with a general reason; the log has the detail.
for my $h ('127.0.0.1', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::ffff:127.0.0.1]') {
    refused($srv, "loopback callback $h", 403, 'hub.callback address not allowed',
            form(%good, 'hub.callback' => "http://$h:9/cb"));
}
refused($srv, 'private callback (IPv4-mapped)', 403, 'hub.callback address not allowed',
        form(%good, 'hub.callback' => 'http://[::ffff:10.1.2.3]/cb'));
like($srv->log_text, qr/\[resourcesync:info\].*hub: callback http:\/\/0x7f000001:9\/cb refused: address 127\.0\.0\.1 is loopback/,
     'refused address: the log has the detail');

$r = ua()->request(HTTP::Request->new(GET => "$B/resourcesync/hub"));
is($r->code, 405, 'GET: 405');
like($r->header('Allow') // '', qr/^POST(,\s*TRACE)?$/, 'GET: Allow lists POST');

# ------------------------------------------- the spool cannot be written
# Three requests answered by the one child, which logs the failure once.
my $spost = sub {
    ua()->request(HTTP::Request->new(POST => "$B/resourcesync/hub",
                                    ['Content-Type' => 'application/x-www-form-urlencoded'],
                                    form(%good)));
};
chmod 0555, spool_dir($srv);
$r = $spost->();
is($r->code, 503, 'spool not writable: 503');
is($r->header('Retry-After'), '60', 'spool not writable: Retry-After');
is(join(' ', map { $spost->()->code } 1 .. 2), '503 503', 'spool not writable: 503 again');
chmod 0755, spool_dir($srv);
my @err = grep { /\[resourcesync:error\]/ } split /\n/, $srv->log_text;
ok(@err == 1 && $err[0] =~ /\(13\)Permission denied: .*hub: cannot write a subscription request into \S+spool/,
   'spool not writable: logged once at error, with its cause')
    or diag(join "\n", @err);
is($spost->()->code, 202, 'spool writable again: 202 (same child)');
like($srv->log_text, qr/\[resourcesync:notice\].*hub: subscription requests are written again/,
     'spool writable again: noticed');
release_intake($srv);
$srv->stop;

# ----------------------- allowed by ResourceSyncHubAllowCallback; Require
$srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n"
                              . "ResourceSyncHubAllowCallback 127.0.0.1 10.0.0.0/8\n"
                              . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
                      files => { 'www/data/a.txt' => "a\n" }, name => 'second server starts');
hold_intake($srv);
($r, $rec) = spooled($srv, form(%good, 'hub.callback' => 'http://127.0.0.1:9/cb',
                                'hub.topic' => $srv->base . '/resourcesync/ds/notify/change'));
is($r->code, 202, 'loopback callback allowed by ResourceSyncHubAllowCallback 127.0.0.1: 202');
is($rec && $rec->{callback}, 'http://127.0.0.1:9/cb', 'allowed loopback callback: spooled');
($r) = spooled($srv, form(%good, 'hub.callback' => 'http://[::ffff:10.1.2.3]/cb',
                          'hub.topic' => $srv->base . '/resourcesync/ds/notify/change'));
is($r->code, 202, 'IPv4-mapped address in an allowed CIDR block: 202');
release_intake($srv);
$srv->stop;

$srv = started_server(conf => STATE_CONF . "ResourceSyncHub on\n" . set_conf('ds', 'www/data', 'ResourceSyncNotify on')
                              . "<Location /resourcesync/hub>\n    Require all denied\n</Location>\n",
                      files => { 'www/data/a.txt' => "a\n" }, name => 'third server starts');
refused($srv, '<Location> Require all denied', 403, undef, form(%good));
$srv->stop;

# Hub off (the default): the URL is an ordinary document URL.
$srv = started_server(conf => STATE_CONF . set_conf('ds', 'www/data'),
                      files => { 'www/data/a.txt' => "a\n" }, name => 'server without hub starts');
refused($srv, 'ResourceSyncHub off', 405, undef, form(%good));
$srv->stop;
