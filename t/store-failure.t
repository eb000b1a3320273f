# SPDX-License-Identifier: Apache-2.0
# Store write failures: the state directory is a small tmpfs the test
# mounts.  A full disk and immutable store files (chattr +i) must each
# become a clean "store failing: <cause>" state
# (status page, one error line), lose nothing (every change made meanwhile
# is published once the store works again), never crash the watcher
# (no SIGBUS, no respawn), and end by themselves when the cause is gone
# ("store works again", status back to watching).  Also: a store that
# cannot be opened at start is retried, while the children serve the
# Resource List on disk.  Needs root (mount, chattr).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use RSTest qw(private_server set_conf STATE_CONF STATUS_CONF put get wait_for wait_ok);
use RSTest::Destination;

plan skip_all => 'needs root (mounts a tmpfs as the state directory, uses chattr)'
    unless $> == 0;
plan skip_all => 'no chattr' unless -x '/usr/bin/chattr' || -x '/bin/chattr';
plan tests => 33;

my $srv = private_server(conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('f', 'www/f', 'ResourceSyncHash sha-256') . STATUS_CONF);
my $d = $srv->dir;
my $S = "$d/state";
my $W = "$d/www/f";
$srv->populate(files => { map { ("www/f/seed$_.txt" => "seed $_\n") } 1 .. 5 });
make_path($S);
my $mounted = system('mount', '-t', 'tmpfs', '-o', 'size=1536k,mode=0755', 'tmpfs', $S) == 0;
END { system('umount', '-l', $S) if $mounted && $S; }
ok($mounted, 'a 1.5 MB tmpfs is the state directory') or BAIL_OUT('cannot mount a tmpfs');

$srv->start_ok;
my $B = $srv->base;
sub status { get("$B/rs-status?text")->content }
sub state_line { (status() =~ /^watcher-state: (.*)$/m)[0] // '' }
sub log_count { my ($re) = @_; scalar(() = $srv->log_text =~ /$re/g) }

my $dest = RSTest::Destination->new(base => $B, set => 'f', src => $W, root => "$B/f/");
wait_ok(sub { state_line() eq 'watching' }, 30, 'the status page says watching');
$dest->baseline;
is($dest->compare, '', 'baseline of the set');
my $wpid = $srv->watcher_pid;

# Make changes, wait for the failure named $cause, make more changes (found
# while failing), then end the cause with $fix and check that nothing was
# lost.  $n: failure episodes so far (the error lines expected).
my $round = 0;
sub episode {
    my ($what, $cause, $break, $fix) = @_;
    $round++;
    $break->();
    my $pid = $srv->watcher_pid;
    put("$W/r$round-$_.txt", ("change $round $_ " x 40) . "\n") for 1 .. 120;
    put("$W/seed1.txt", "seed 1 rewritten in round $round\n");
    unlink "$W/r" . ($round - 1) . "-7.txt" if $round > 1;
    my $st = wait_for(sub { my $s = state_line(); $s =~ /^store failing/ ? $s : undef }, 30)
             // state_line();
    is($st, "store failing: $cause", "$what: the status page says store failing: $cause");
    # More changes while the store fails: collected, published later.
    put("$W/late$round.txt", "late $round\n");
    unlink "$W/seed2.txt" if $round == 1;
    # A few retries go by (each logs nothing new).
    sleep 4;
    is(log_count(qr/\[resourcesync:error\].*store failing: \Q$cause\E/), 1,
       "$what: one error line says so");
    $fix->();
    $st = wait_for(sub { my $s = state_line(); $s eq 'watching' ? $s : undef }, 60) // state_line();
    is($st, 'watching', "$what: the status page is back to watching");
    is(log_count(qr/\[resourcesync:notice\].*store works again/), $round,
       "$what: 'store works again' is logged");
    is($dest->sync_until_equal(60), '', "$what: baseline + changes equal the tree");
    my $fresh = RSTest::Destination->new(base => $B, set => 'f', src => $W, root => "$B/f/");
    my $diff = 'not compared';
    wait_for(sub { $fresh = RSTest::Destination->new(base => $B, set => 'f', src => $W,
                                                     root => "$B/f/");
                   $fresh->baseline; ($diff = $fresh->compare) eq '' }, 30);
    is($diff, '', "$what: a new Resource List equals the tree");
    is($srv->watcher_pid, $pid, "$what: the same watcher runs (no crash, no respawn)");
}

# ---------------------------------------------------------- a full disk
my $fill = "$S/fill";
episode('disk full', 'No space left on device', sub {
    open my $fh, '>', $fill or die "$fill: $!";
    my $chunk = "x" x 65536;
    while (syswrite($fh, $chunk)) { }
    close $fh;
    my $small = "x" x 512;
    while (open($fh, '>>', $fill) && syswrite($fh, $small)) { close $fh }
}, sub { unlink $fill or die "$fill: $!" });

# ------------------------------------------------ immutable store files
# Files the watcher has open stay writable through chattr +i; a new
# watcher (a graceful restart) can only open them read-only.
my @db;
episode('chattr +i', 'Operation not permitted', sub {
    @db = grep { -e } map { "$S/state.db$_" } ('', '-wal', '-shm');
    system('chattr', '+i', @db) == 0 or die "chattr: $?";
    my $old = $srv->watcher_pid;
    $srv->graceful;
    $wpid = wait_ok(sub { my $p = $srv->watcher_pid; $p && $p != $old ? $p : undef }, 30,
                    'chattr +i: a graceful restart starts a new watcher');
}, sub { system('chattr', '-i', @db) == 0 or die "chattr: $?" });

unlike($srv->log_text, qr/died|could not start|SIGBUS|signal 7\b/, 'the watcher never died');

# ------------------------------------- a store that cannot be opened at start
$srv->stop;
@db = grep { -e } map { "$S/state.db$_" } ('', '-wal', '-shm');
system('chattr', '+i', @db) == 0 or die "chattr: $?";
$srv->start_ok('server starts with an immutable store');
my $st = wait_for(sub { my $s = state_line(); $s =~ /^store failing/ ? $s : undef }, 30)
         // state_line();
is($st, 'store failing: Operation not permitted', 'at start: the status page says store failing');
my $r = get("$B/resourcesync/f/resourcelist.xml");
is($r->code, 200, 'at start: children serve the Resource List on disk');
put("$W/while-stopped.txt", "made while the store could not be opened\n");
sleep 3;   # retries go by; the watcher must not give up
unlike($srv->log_text, qr/could not start/, 'at start: the watcher does not give up');
system('chattr', '-i', @db) == 0 or die "chattr: $?";
$st = wait_for(sub { my $s = state_line(); $s eq 'watching' ? $s : undef }, 60) // state_line();
is($st, 'watching', 'at start: back to watching once the store opens');
is($dest->sync_until_equal(60), '', 'at start: baseline + changes equal the tree');

# ------------------------ a store that cannot even be created at start
# (no state.db, a full disk): the watcher retries opening it, children
# serve the snapshot on disk, and the store is made once there is room.
$srv->stop;
unlink map { "$S/state.db$_" } ('', '-wal', '-shm');
{
    open my $fh, '>', $fill or die "$fill: $!";
    my $chunk = "x" x 4096;
    while (syswrite($fh, $chunk)) { }
    close $fh;
}
$srv->start_ok('server starts with a full disk and no store');
$st = wait_for(sub { my $s = state_line(); $s =~ /^store failing/ ? $s : undef }, 30)
      // state_line();
is($st, 'store failing: No space left on device', 'no store: the status page says store failing');
is(get("$B/resourcesync/f/resourcelist.xml")->code, 200,
   'no store: children serve the Resource List on disk');
put("$W/no-store.txt", "made while the store could not be created\n");
sleep 3;   # retries go by; the watcher must not give up
unlike($srv->log_text, qr/could not start/, 'no store: the watcher does not give up');
unlink $fill or die "$fill: $!";
$st = wait_for(sub { my $s = state_line(); $s eq 'watching' ? $s : undef }, 60) // state_line();
is($st, 'watching', 'no store: back to watching once the store can be made');
my $diff = 'not compared';
wait_for(sub { my $f = RSTest::Destination->new(base => $B, set => 'f', src => $W, root => "$B/f/");
               $f->baseline; ($diff = $f->compare) eq '' }, 30);
is($diff, '', 'no store: the new Resource List equals the tree');
unlike($srv->log_text, qr/died|could not start/, 'the watcher never died nor gave up');
