# SPDX-License-Identifier: Apache-2.0
# Wall-clock steps.  A private server (and so its watcher) runs under
# libfaketime, driven through a timestamp file: changes with the clock
# right, then with the clock stepped back two hours (with a graceful
# restart while it is back), then stepped forward past the original time.
# Change List datetimes must keep increasing per set, (loc, datetime) stay
# unique, every document validate, the Change List Index's from/until chain
# stay continuous, the Resource Lists' `at` stay honest (completed >= at),
# and destinations that took their baseline before, during and after the
# step must rebuild the tree.  The test checks that the server's clock
# really is stepped (HTTP Date, Last-Modified after the restart, the
# datetimes the watcher gives), so it cannot pass with the faking absent.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use HTTP::Date ();
use List::Util qw(max min);
use Time::HiRes qw(time);
use Time::Local ();
use RSTest qw(private_server set_conf STATE_CONF put get doc xpc validate wait_for fetch_list
              cap_url);
use RSTest::Destination;

# The variant for threaded programs: its clock functions take a lock
# around libfaketime's cached state (the watcher and event MPM children
# read the clock from several threads).
my $FAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
unless (-e $FAKETIME) {
    plan tests => 1;
    fail("libfaketime is installed ($FAKETIME; Debian package libfaketime, see make deps)");
    exit 0;
}
plan tests => 33;

my $BACK = 2 * 3600;          # the step back
my $AHEAD = 600;              # where the clock is stepped forward to, from the real time
my $SLACK = 300;              # tolerance when comparing a clock with the expected one

# The clock of the server is the real one plus the offset in faketime.rc,
# read at every call (FAKETIME_NO_CACHE); the monotonic clock and file
# times are left alone, as a real step of the wall clock leaves them.
my $srv = private_server(env => { LD_PRELOAD => $FAKETIME,
                                  FAKETIME_TIMESTAMP_FILE => '@DIR@/faketime.rc',
                                  FAKETIME_NO_CACHE => 1, FAKETIME_DONT_FAKE_MONOTONIC => 1,
                                  NO_FAKE_STAT => 1 },
                         conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . "ResourceSyncChangeListPeriod 2s\n"
                                 . set_conf('c', 'www/c', 'ResourceSyncHash sha-256',
                                            'ResourceSyncMaxEntries 8'));
my $dir = $srv->dir;
my $W = "$dir/www/c";
my $RC = "$dir/faketime.rc";

sub set_clock {
    my ($offset) = @_;
    put("$RC.tmp", "$offset\n");
    chmod 0644, "$RC.tmp";
    rename "$RC.tmp", $RC or die "$RC: $!";
}

# W3C datetime -> integer microseconds (exact, unlike floating seconds).
sub usec {
    my ($s) = @_;
    my ($Y, $M, $D, $h, $m, $sec, $frac) =
        ($s // '') =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?Z$/ or return undef;
    return Time::Local::timegm($sec, $m, $h, $D, $M - 1, $Y) * 1_000_000
        + ($frac ? substr($frac . '00000', 0, 6) : 0);
}

# The server's clock minus the real one, in seconds, from an HTTP Date.
sub server_offset {
    my $r = get(cap_url('c', $srv->base));
    my $d = HTTP::Date::str2time($r->header('Date') // '') // return undef;
    return $d - time();
}
sub offset_near {
    my ($want) = @_;
    my $o = wait_for(sub { my $o = server_offset(); defined $o && abs($o - $want) < $SLACK ? $o : undef }, 30);
    return $o;
}

$srv->populate(files => { (map { ("www/c/base-$_.txt" => "base $_\n") } 1 .. 4),
                          'www/c/d1/one.txt' => "one\n",
                          (map { ("www/c/d1/r$_.txt" => "r $_\n") } 1 .. 4),
                          'www/c/d2/two.txt' => "two\n" });
set_clock('+0');
$srv->start_ok('server starts under libfaketime');
my $B = $srv->base;
ok(defined offset_near(0), 'with offset +0 the server clock is the real one (HTTP Date)')
    or diag('offset ' . (server_offset() // 'none'));

my $d1 = RSTest::Destination->new(base => $B, set => 'c', src => $W, root => "$B/c/");
$d1->baseline;
ok(wait_for(sub { get("$B/resourcesync/c/changelist.xml")->code == 200 }, 30),
   'the Change List Index answers');

# Changes made in one phase: what the destination must see.
my $seen = 0;
sub phase {
    my ($tag, $n) = @_;
    my @want;
    make_path("$W/$tag");
    for my $i (1 .. 3) {
        put("$W/$tag/f$i.txt", "$tag $i\n");
        push @want, [created => "$tag/f$i.txt"];
    }
    put("$W/base-$n.txt", "base $n, rewritten in $tag\n");
    push @want, [updated => "base-$n.txt"];
    rename "$W/d1/r$n.txt", "$W/d1/s$n.txt" or die $!;
    push @want, [deleted => "d1/r$n.txt"], [created => "d1/s$n.txt"];
    symlink "s$n.txt", "$W/d1/l$n.txt" or die $!;     # never closed: settles
    push @want, [created => "d1/l$n.txt"];
    unlink "$W/d1/one.txt" if $n == 2;
    push @want, [deleted => 'd1/one.txt'] if $n == 2;
    put("$W/d2/$tag.txt", "$tag\n");
    push @want, [created => "d2/$tag.txt"];
    # every entry in the lists that is new since the last phase, once all
    # of this phase's changes are there
    my $new = wait_for(sub {
        my $all = $d1->changes or return undef;
        my @n = @$all[$seen .. $#$all];
        for my $w (@want) {
            return undef unless grep { $_->{change} eq $w->[0] && $_->{loc} eq "$B/c/$w->[1]" } @n;
        }
        return \@n;
    }, 30);
    ok($new, "$tag: every change is listed") or diag(explain($d1->changes));
    $new ||= [];
    $seen += @$new;
    return [ map { usec($_->{datetime}) } @$new ];
}

# The Resource List once its `at` is after `after` (µs): { at, completed, docs }.
sub resource_list_after {
    my ($after) = @_;
    return wait_for(sub {
        my $l = eval { fetch_list('c', $B) } or return undef;
        my $md = xpc(doc($l->{docs}[0]));
        my $at = usec($md->findvalue('/*/rs:md/@at'));
        return undef unless defined $at && $at > $after;
        return { at => $at, completed => usec($md->findvalue('/*/rs:md/@completed')),
                 docs => $l->{docs} };
    }, 30);
}

# 1. The clock is right.
my $A = phase('a', 1);
my $maxA = max(@$A);

# 2. Stepped back by two hours.
my $t_back = int(time() * 1_000_000);
set_clock("-" . ($BACK / 3600) . "h");
ok(defined offset_near(-$BACK), 'with offset -2h the server clock is two hours back (HTTP Date)')
    or diag('offset ' . (server_offset() // 'none'));
my $Bk = phase('b', 2);
ok(@$Bk && min(@$Bk) > $maxA, 'clock back: datetimes go on after the last one before the step');
ok(@$Bk && max(@$Bk) < $t_back, "clock back: the watcher's clock is back (datetimes stay just after the last one, not at the real time)")
    or diag("max datetime " . (max(@$Bk) // 'none') . ", step at $t_back");
my $rl = resource_list_after(max(@$Bk));
ok($rl, 'clock back: a new Resource List is published, its at after every change so far');
ok($rl && $rl->{completed} >= $rl->{at} && $rl->{at} < $t_back,
   'clock back: its completed >= at, and both are on the stepped-back timeline')
    or diag(explain($rl));
my $d2 = RSTest::Destination->new(base => $B, set => 'c', src => $W, root => "$B/c/");
$d2->baseline;

# 3. A graceful restart while the clock is back.
my $w0 = $srv->watcher_pid;
$srv->graceful;
ok(wait_for(sub { my $w = $srv->watcher_pid; $w && (!$w0 || $w != $w0) }, 30),
   'graceful restart: a new watcher runs');
ok(wait_for(sub {
    my $r = get(cap_url('c', $B));
    my $lm = HTTP::Date::str2time($r->header('Last-Modified') // '') // return undef;
    abs($lm - time() + $BACK) < $SLACK }, 30),
   "graceful restart: the new generation's Last-Modified is on the stepped-back clock");
my $C = phase('c', 3);
ok(@$C && min(@$C) > max(@$Bk), 'after the restart: datetimes go on increasing');
ok(@$C && max(@$C) < $t_back, 'after the restart: still on the stepped-back timeline');

# 4. Stepped forward past the original time.
my $t_fwd = int(time() * 1_000_000);
set_clock("+" . ($AHEAD / 60) . "m");
ok(defined offset_near($AHEAD), 'with offset +10m the server clock is ten minutes ahead (HTTP Date)')
    or diag('offset ' . (server_offset() // 'none'));
my $D = phase('d', 4);
ok(@$D && min(@$D) > max(@$C) && min(@$D) >= $t_fwd + ($AHEAD - $SLACK) * 1_000_000,
   'clock forward: datetimes follow the clock ahead again');
$rl = resource_list_after(max(@$D));
ok($rl && $rl->{completed} >= $rl->{at} && $rl->{at} >= $t_fwd + ($AHEAD - $SLACK) * 1_000_000,
   'clock forward: a new Resource List, completed >= at, on the clock ahead')
    or diag(explain($rl));
my $d3 = RSTest::Destination->new(base => $B, set => 'c', src => $W, root => "$B/c/");
$d3->baseline;
put("$W/d2/last.txt", "last\n");

# The Change List Index: one continuous chain of lists, the last one open.
my $idx = wait_for(sub {
    my $i = $d1->index or return undef;
    # the open list from before the step forward closes at a tick
    return @$i > 1 && usec($i->[-1]{from}) >= $t_fwd ? $i : undef;
}, 30);
ok($idx, 'the Change List Index has lists, the open one from after the step forward');
$idx ||= [];
my @chain = grep { $idx->[$_]{until} ne $idx->[$_ + 1]{from} } 0 .. $#$idx - 1;
is_deeply(\@chain, [], "every closed list's until is the next list's from") or diag(explain($idx));
ok(!grep({ !$_->{until} } @$idx[0 .. $#$idx - 1]) && @$idx && !$idx->[-1]{until},
   'every list but the last is closed');
ok(!grep({ usec($_->{until}) <= usec($_->{from}) } @$idx[0 .. $#$idx - 1]),
   'every closed list has from < until');
ok(grep({ usec($_->{from}) < $t_back && $_->{until} && usec($_->{until}) < $t_back } @$idx) >= 1,
   'lists were closed (by size) while the clock was back');

# Every destination rebuilds the tree; the invariants held in every document.
for ([$d1, 'baseline before the step'], [$d2, 'baseline while the clock was back'],
     [$d3, 'baseline after the step forward']) {
    my ($d, $what) = @$_;
    is($d->sync_until_equal(60), '', "$what: baseline + changes rebuild the tree");
    is_deeply($d->errors, [], "$what: datetimes increase, (loc, datetime) unique, documents valid");
}
my $all = $d1->changes || [];
my @dts = map { usec($_->{datetime}) } @$all;
ok(@dts >= @$A + @$Bk + @$C + @$D && !grep({ $dts[$_] <= $dts[$_ - 1] } 1 .. $#dts),
   'over the whole journal, across both steps, datetimes strictly increase');

# Every document validates, and, if it has entries (the official sitemap
# schema wants at least one; see t/xsd/README.md), with the official schema.
sub invalid {
    my ($xml) = @_;
    return validate($xml) // ($xml =~ /<url>/ ? validate($xml, 'strict') : undef);
}
my @bad;
my $ir = get("$B/resourcesync/c/changelist.xml");
push @bad, "index: $_" for grep { defined } invalid($ir->content);
for my $l (@$idx) {
    my $r = get($l->{loc});
    my $err = $r->code == 200 ? invalid($r->content) : $r->status_line;
    push @bad, "$l->{loc}: $err" if defined $err;
}
for my $x (@{ fetch_list('c', $B)->{docs} }) {
    push @bad, "resource list: $_" for grep { defined } invalid($x);
}
is_deeply(\@bad, [], 'the index, every list and the Resource List validate (also the official schema when not empty)');

unlike($srv->log_text, qr/\[resourcesync:(error|crit|alert|emerg)\]/, 'no module errors');
set_clock('+0');
$srv->stop;
