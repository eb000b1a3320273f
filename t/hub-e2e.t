# SPDX-License-Identifier: Apache-2.0
# Notifications end to end, as subscribers of the built-in hub see them:
# subscriptions through the hub endpoint (one subscriber with a secret,
# every X-Hub-Signature checked; one without, none sent); a mutating tree
# (creates, repeated updates, deletes, a rename, a directory removed); every
# journaled change reaches each subscriber exactly once, in order, in
# contiguous notifications with the right entry counts; framework
# notifications of a new Resource List, a closed Change List and a dump
# package; renewal, unsubscription and lease expiry; callbacks answering
# 404 and 500 (retried, in order), answering after the transfer timeout
# (ResourceSyncNotifyTimeout: 5 s here; retried) or 410 (subscription
# ended); a slow subscriber (3 s, within the timeout) does not hold the
# others up (order of arrival).  Every payload received validates.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Request ();
use JSON::PP ();
use URI::Escape qw(uri_escape);
use File::Path qw(remove_tree);
use Time::HiRes qw(sleep time);
use RSTest qw(started_server set_conf STATE_CONF ua wait_for wait_ok changes_of doc xpc validate);
use RSWebSubPeer ();

plan tests => 55;

my $s1 = RSWebSubPeer->subscriber(secret => 's3cret');
my $s2 = RSWebSubPeer->subscriber;
my $srv = started_server(
    conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
            . "ResourceSyncHub on\nResourceSyncHubLease 2 600\nResourceSyncNotifyTimeout 5s\n"
            . "ResourceSyncHubAllowCallback 127.0.0.1\n"
            . set_conf('n', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms',
                       'ResourceSyncMaxEntries 8', 'ResourceSyncChangeListPeriod 3s',
                       'ResourceSyncResourceDump 1'),
    files => { 'www/data/a.txt' => "a\n", 'www/data/d/x.txt' => "x\n",
               'www/data/d/y.txt' => "y\n", 'www/data/old.txt' => "old\n" });
my $B = $srv->base;
my $D = $srv->dir . '/www/data';
my $db = $srv->dir . '/state/state.db';
my %topic = map { $_ => "$B/resourcesync/n/notify/$_" } qw(change framework);

sub rows {
    my ($sql) = @_;
    return [] unless -s $db;
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    return [] if $out =~ /^\s*$/ || $out =~ /database is locked/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}
sub sealed { rows("SELECT id, from_dt, until_dt, count, payload FROM notifications "
                  . "WHERE setname = 'n' AND topic = '$_[0]' AND sealed = 1 ORDER BY id") }
sub open_count { rows("SELECT COUNT(*) AS c FROM notifications WHERE sealed = 0")->[0]{c} // 0 }
sub journal_count { rows("SELECT COUNT(*) AS c FROM journal WHERE setname = 'n'")->[0]{c} // 0 }
sub row_of { rows("SELECT * FROM notify_dests WHERE kind = 'sub' AND url = '$_[0]'")->[0] }

sub post {
    my (%f) = @_;
    my $body = join '&', map { uri_escape($_) . '=' . uri_escape($f{$_}) } sort keys %f;
    ua()->request(HTTP::Request->new(POST => "$B/resourcesync/hub",
        ['Content-Type' => 'application/x-www-form-urlencoded'], $body))->code;
}
# Subscribe (or unsubscribe) and wait for the row to appear (go).
sub subscribe {
    my ($cb, $t, %more) = @_;
    my $code = post('hub.mode' => 'subscribe', 'hub.callback' => $cb,
                    'hub.topic' => $topic{$t}, %more);
    return $code == 202 && wait_for(sub { row_of($cb) }, 30);
}
sub unsubscribe {
    my ($cb, $t) = @_;
    my $code = post('hub.mode' => 'unsubscribe', 'hub.callback' => $cb, 'hub.topic' => $topic{$t});
    return $code == 202 && wait_for(sub { !row_of($cb) }, 30);
}
# Wait until $n changes are journaled and every one is in a sealed
# notification: one test, named after $what (the step that made them).
sub settle {
    my ($n, $what) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    wait_ok(sub { journal_count() >= $n && !open_count() }, 30,
            "$what: journaled and sealed ($n records)");
}
# Deliveries (POSTs) that reached callback $name of peer $p, answered $status.
sub got {
    my ($p, $name, $status) = @_;
    grep { $_->{method} eq 'POST' && $_->{path} eq "/cb/$name"
           && (!defined $status || $_->{status} eq $status) } $p->requests;
}
# Wait until callback $name has taken (200) the newest sealed notification of $t
# (at most $secs, 60 unless given).
sub caught_up {
    my ($p, $name, $t, $secs) = @_;
    wait_for(sub { my $last = sealed($t)->[-1] or return;
                   grep { $_->{body} eq $last->{payload} } got($p, $name, 200) }, $secs // 60);
}
sub md { my ($x) = @_; my $c = xpc(doc($x));
         (scalar $c->findvalue('/sm:urlset/rs:md/@from'),
          scalar $c->findvalue('/sm:urlset/rs:md/@until'),
          scalar(() = $c->findnodes('/sm:urlset/sm:url'))) }

my ($A, $FA) = ($s1->callback('a'), $s1->callback('fa'));
my ($Bc, $FB) = ($s2->callback('b'), $s2->callback('fb'));
ok(subscribe($A, 'change', 'hub.secret' => 's3cret') && subscribe($Bc, 'change')
   && subscribe($FA, 'framework', 'hub.secret' => 's3cret') && subscribe($FB, 'framework'),
   'four subscriptions through the hub endpoint');
# A new subscription starts after the topic's newest sealed notification.
my %c0 = map { $_ => row_of($_)->{cursor} } $FA, $FB;

# ------------------------------------------------------- a mutating tree
my $j = journal_count();
RSTest::put("$D/new$_.txt", "new $_\n") for 1 .. 4;
settle($j += 4, 'four files created');
for my $i (1 .. 3) { RSTest::put("$D/a.txt", "a version $i\n"); settle(++$j, "a.txt version $i") }
unlink "$D/new1.txt", "$D/new2.txt";
settle($j += 2, 'two files deleted');
rename "$D/old.txt", "$D/renamed.txt" or die "rename: $!";
settle($j += 2, 'a rename');
remove_tree("$D/d");
settle($j += 2, 'a directory removed: every change');

my $all = sealed('change');
ok(caught_up($s1, 'a', 'change') && caught_up($s2, 'b', 'change'),
   'both subscribers took the newest change notification');
my %id = map { $_->{payload} => $_->{id} } @$all;
for my $c ([$s1, 'a'], [$s2, 'b']) {
    my ($p, $n) = @$c;
    is_deeply([map { $id{ $_->{body} } // 'unknown' } got($p, $n, 200)],
              [map { $_->{id} } @$all], "$n: every change notification once, in id order");
}
# Contiguity and counts, as a subscriber reads them from the bodies.
my @prob;
my ($prev, @entries);
for my $r (got($s2, 'b', 200)) {
    my ($from, $until, $cnt) = md($r->{body});
    my ($row) = grep { $_->{payload} eq $r->{body} } @$all;
    push @prob, "from $from != previous until $prev" if defined $prev && $from ne $prev;
    push @prob, "count $cnt != $row->{count}" if !$row || $cnt != $row->{count};
    push @prob, "more than 8 entries" if $cnt > 8;
    my $err = validate($r->{body}) // validate($r->{body}, 'strict');
    push @prob, "invalid: $err" if $err;
    my $x = xpc(doc($r->{body}));
    push @entries, map { join ' ', $x->findvalue('sm:loc', $_), $x->findvalue('rs:md/@change', $_),
                         $x->findvalue('rs:md/@datetime', $_) } $x->findnodes('/sm:urlset/sm:url');
    $prev = $until;
}
is_deeply(\@prob, [], 'contiguous (from == previous until), entry counts right, valid (lenient and official schemas)');
my @cl = map { join ' ', $_->{loc}, $_->{change}, $_->{datetime} } changes_of('n', $B);
is_deeply(\@entries, \@cl, 'the entries received are the Change Lists\' entries, in order');
is(scalar @entries, journal_count(), 'one entry per journal record');
ok(!grep({ ($_->{sig_ok} // -1) != 1 } got($s1, 'a'), got($s1, 'fa')),
   'subscriber with a secret: every X-Hub-Signature is the HMAC of the body');
ok(!grep({ exists $_->{headers}{'x-hub-signature'} } got($s2, 'b'), got($s2, 'fb')),
   'subscriber without a secret: no X-Hub-Signature');

# ---------------------------------------------------- framework topic
sub fw_has {
    my ($p, $n, $re) = @_;
    wait_for(sub { grep { $_->{body} =~ $re } got($p, $n, 200) }, 60);
}
ok(fw_has($s1, 'fa', qr/capability="resourcelist"/) && fw_has($s2, 'fb', qr/capability="resourcelist"/),
   'framework: a new Resource List');
ok(fw_has($s1, 'fa', qr/change="updated" capability="changelist"/),
   'framework: a closed Change List');
ok(fw_has($s1, 'fa', qr/capability="resourcedump"/), 'framework: a new dump package');
# The tree keeps making framework notifications (dump packages, lists
# closing): those sealed before the subscribers catch up must all arrive;
# caught_up waits for the newest sealed at each of its looks, so at least
# these.
my $fall = sealed('framework');
ok(caught_up($s1, 'fa', 'framework') && caught_up($s2, 'fb', 'framework'), 'framework caught up');
# What a subscriber got must be the sealed ones since it subscribed, in
# order, from the first up to at least those.  What it got is read before
# the sealed ones, so every delivered notification is among them.
for my $c ([$s1, 'fa', $FA], [$s2, 'fb', $FB]) {
    my ($p, $n, $cb) = @$c;
    my @bodies = map { $_->{body} } got($p, $n, 200);
    my $now = sealed('framework');
    my %fid = map { $_->{payload} => $_->{id} } @$now;
    my @ids = grep { $_ eq 'unknown' || $_ > $c0{$cb} } map { $fid{$_} // 'unknown' } @bodies;
    my @want = map { $_->{id} } grep { $_->{id} > $c0{$cb} } @$now;
    my $least = scalar grep { $_->{id} > $c0{$cb} } @$fall;
    ok(@ids >= $least, "framework $n: got at least the $least sealed before it caught up");
    is_deeply(\@ids, [@want[0 .. $#ids]],
              "framework $n: every notification since it subscribed once, in id order");
}
my @fprob = map { validate($_->{body}) // validate($_->{body}, 'strict') // () } got($s1, 'fa', 200), got($s2, 'fb', 200);
is_deeply(\@fprob, [], 'framework notifications received: valid (lenient and official schemas)');

# --------------------------------------------- 404 and 500, then 200
$s2->set('deliver.b' => 404);
RSTest::put("$D/e1.txt", "e1\n");
settle(++$j, 'e1.txt');
wait_ok(sub { got($s2, 'b', 404) >= 2 }, 30, 'b answered 404 twice');
$s2->set('deliver.b' => 500);
RSTest::put("$D/e2.txt", "e2\n");
settle(++$j, 'e2.txt');
wait_ok(sub { got($s2, 'b', 500) >= 2 }, 30, 'b answered 500 twice');
$s2->set('deliver.b' => 200);
# The next attempt is due after a back-off that grows with every failed
# one (full jitter, doubling): on a busy machine more than a minute away.
my $due = (row_of($Bc)->{next_try} // 0) / 1e6 - time;
ok(caught_up($s2, 'b', 'change', ($due > 0 ? $due : 0) + 60), '404 then 500 then 200: caught up')
    or diag(explain row_of($Bc));
$all = sealed('change');
%id = map { $_->{payload} => $_->{id} } @$all;
is_deeply([map { $id{ $_->{body} } // 'unknown' } got($s2, 'b', 200)],
          [map { $_->{id} } @$all], 'after 404 and 500: still every notification once, in order');
ok(got($s2, 'b', 404) >= 2 && got($s2, 'b', 500) >= 2, 'the 404 and 500 answers were retried');

# ------------------------------------------------------ slow subscriber
# s (slow) takes 3 s per delivery; a must get three notifications in the
# time s takes its first.
my $S = $s1->callback('slow');
ok(subscribe($S, 'change', 'hub.secret' => 's3cret'), 'slow subscriber subscribed');
# (A new subscription starts after the newest sealed notification: it has
# nothing to catch up with before the changes below.)
$s1->set('deliver.slow' => 'slow:3000');
my $before = sealed('change')->[-1]{id};
for my $i (1 .. 3) { RSTest::put("$D/s$i.txt", "s$i\n"); settle(++$j, "s$i.txt") }
ok(caught_up($s1, 'a', 'change'), 'a slow subscriber: the other took the three notifications');
my $new = sub { my ($n) = @_; grep { my $x = $id{ $_->{body} }; $x && $x > $before }
                                   got($s1, $n, 200) };
%id = map { $_->{payload} => $_->{id} } @{ sealed('change') };
my @fast = $new->('a');
my @slow = $new->('slow');
ok(caught_up($s1, 'slow', 'change'), 'a slow subscriber: took the three notifications too');
@slow = $new->('slow');
# (A request is recorded when answered: the slow ones 3 s after arrival.)
ok(@fast >= 3 && @slow >= 3 && $fast[2]{seq} < $slow[1]{seq},
   'a slow subscriber: the other took three notifications before its second (order of arrival)')
    or diag(explain [map { "$_->{path} $_->{seq}" } @fast, @slow]);
$s1->set('deliver.slow' => 200);

# ------------------------------------------------------------- timeout
# A callback that answers after the transfer timeout (5 s here, the
# default is 30 s): retried.
my $T = $s2->callback('t');
ok(subscribe($T, 'change'), 't: subscribed');
$s2->set('deliver.t' => 'slow:10000');
RSTest::put("$D/t.txt", "t\n");
settle(++$j, 't.txt');
ok(wait_for(sub { my $r = row_of($T); $r && $r->{attempts} >= 1 }, 60),
   't: the delivery timed out, a retry is due')
    or diag(explain row_of($T));
$s2->set('deliver.t' => 200);
ok(caught_up($s2, 't', 'change'), 't: delivered after the timeout');

# ------------------------------------------------------------------ 410
$s1->set('deliver.slow' => 410);
RSTest::put("$D/g.txt", "g\n");
settle(++$j, 'g.txt');
ok(wait_for(sub { !row_of($S) }, 30), '410: subscription ended, row gone');

# ------------------------------------ renewal, unsubscription, expiry
my $L = $s2->callback('l');
ok(subscribe($L, 'change', 'hub.lease_seconds' => 3), 'l: subscribed with a 3 s lease');
my $end0 = row_of($L)->{lease_until};
ok(subscribe($L, 'change', 'hub.lease_seconds' => 600)
   && wait_for(sub { row_of($L)->{lease_until} > $end0 }, 30), 'l: lease renewed');
my $E = $s2->callback('e');
ok(subscribe($E, 'change', 'hub.lease_seconds' => 2), 'e: subscribed with a 2 s lease');
ok(unsubscribe($Bc, 'change'), 'b: unsubscribed');
ok(wait_for(sub { !row_of($E) }, 30), 'e: row gone when its lease ended');
# Past l's first lease (a time to pass, not a condition that can fail).
my $past = $end0 / 1e6 + 1 - time;
sleep $past if $past > 0;
my $nb = got($s2, 'b');
my $ne = got($s2, 'e');
RSTest::put("$D/h.txt", "h\n");
settle(++$j, 'h.txt');
ok(caught_up($s2, 'l', 'change') && caught_up($s1, 'a', 'change'),
   'renewed subscription still delivered to, past its first lease');
is_deeply([scalar got($s2, 'b'), scalar got($s2, 'e')], [$nb, $ne],
          'after unsubscription and lease expiry: no more deliveries');

my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no warnings or errors') or diag(join "\n", @bad);
