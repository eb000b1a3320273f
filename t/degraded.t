# SPDX-License-Identifier: Apache-2.0
# Degraded mode with the real inotify limit: another process of the
# server's run user holds all but three of the user's inotify watches
# (fs.inotify.max_user_watches), so the watcher cannot watch every
# directory of the set.  The set must say so once (error log, status
# page), go on with full rescans that keep its documents honest, and
# return to watching once the watches are free again.  Nothing here
# changes a system setting: the watches are used up, not the limit
# lowered.  Needs root (the server runs as www-data, a user nothing else
# in the suite uses, so the shared test server is not starved).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use POSIX qw(_exit);
use RSTest qw(private_server set_conf STATE_CONF STATUS_CONF put get wait_for);
use RSTest::Destination;

my $USER = 'www-data';
my ($uid, $gid) = (getpwnam($USER))[2, 3];
plan skip_all => 'needs root (the server and the process using up the watches run as www-data)'
    unless $> == 0 && defined $uid;
open my $mw, '<', '/proc/sys/fs/inotify/max_user_watches' or plan skip_all => 'no inotify';
chomp(my $MAX = <$mw>);
plan skip_all => "fs.inotify.max_user_watches is $MAX: too many to use up in a test"
    if $MAX > 1_000_000;
require 'syscall.ph';
plan tests => 16;

my $FREE = 3;           # watches left for the watcher; the set has 10 directories
my $srv = private_server(user => $USER, group => (getgrgid($gid))[0],
                         conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('g', 'www/g', 'ResourceSyncHash sha-256') . STATUS_CONF);
$srv->populate(files => { 'www/g/top.txt' => "top\n", map { ("www/g/d$_/f.txt" => "f $_\n") } 0 .. 8 });
my $d = $srv->dir;
my $W = "$d/www/g";

# The hog: as the run user, inotify instances each watching the same
# directories, until the kernel answers ENOSPC; then it frees $FREE
# watches, reports, and holds the rest until its pipe is closed.
my $per = int($MAX / 100) + 1;
my $hogdir = "$d/hog";
make_path(map { "$hogdir/$_" } 1 .. $per);
pipe(my $ready_r, my $ready_w) or die $!;
pipe(my $hold_r, my $hold_w) or die $!;
my $hog = fork // die "fork: $!";
if (!$hog) {
    close $ready_r;
    close $hold_w;
    $) = "$gid $gid";
    $( = $gid;
    $< = $> = $uid;
    my ($n, @last, $err) = (0);
  FILL: for my $inst (1 .. 120) {
        my $fd = syscall(&SYS_inotify_init1, 0);
        if ($fd < 0) { $err = "inotify_init1: $!"; last }
        for my $i (1 .. $per) {
            my $path = "$hogdir/$i";
            my $wd = syscall(&SYS_inotify_add_watch, $fd, $path, 0x100);
            if ($wd < 0) {
                $err = "$!" unless $!{ENOSPC};
                last FILL;
            }
            $n++;
            push @last, [$fd, $wd];
            shift @last if @last > $FREE;
        }
    }
    if (!$err && @last == $FREE) {
        syscall(&SYS_inotify_rm_watch, @$_) for @last;
        $n -= $FREE;
    }
    syswrite $ready_w, ($err ? "error $err\n" : "ok $n\n");
    close $ready_w;
    my $x = <$hold_r>;      # until the test closes the pipe
    _exit(0);
}
close $ready_w;
close $hold_r;
my $said = <$ready_r> // "error: the hog died\n";
chomp $said;
like($said, qr/^ok \d+/, "the watches of $USER are used up but $FREE ($said)");

$srv->start_ok;
my $B = $srv->base;
sub status { get("$B/rs-status?text")->content }

my $st = wait_for(sub { my $s = status(); $s =~ /set: g .*mode=rescans/ ? $s : undef }, 30) // status();
like($st, qr/set: g .*mode=rescans/, 'status page: the set runs on rescans');
like($st, qr/^watcher-state: degraded/m, 'status page: the watcher is degraded');
sub warnings { scalar(() = $srv->log_text =~ /cannot watch directory/g) }
is(warnings(), 1, 'the error log says so once');
like($srv->log_text, qr/\[resourcesync:warn\].*set g: cannot watch directory .*max_user_watches.*rescans every 1 s/,
     'the warning names the set, the limit and the rescan interval');

# Changes in directories that are not watched are found by the rescans.
my $dest = RSTest::Destination->new(base => $B, set => 'g', src => $W, root => "$B/g/");
$dest->baseline;
put("$W/d8/new.txt", "new in d8\n");
unlink "$W/d7/f.txt";
put("$W/d6/f.txt", "rewritten\n");
make_path("$W/d9/e");
put("$W/d9/e/deep.txt", "deep\n");
is($dest->sync_until_equal(60), '', 'degraded: baseline + changes rebuild the tree');
put("$W/d5/later.txt", "later\n");
is($dest->sync_until_equal(60), '', 'degraded: a later change too');
is_deeply($dest->errors, [], 'degraded: order and validity held');
is(warnings(), 1, 'still one warning after several rescans');
like(status(), qr/set: g .*mode=rescans/, 'still on rescans while the watches are used up');

# The watches are free again: the next rescan watches everything.
close $hold_w;
waitpid($hog, 0);
$st = wait_for(sub { my $s = status(); $s =~ /set: g .*mode=watching/ ? $s : undef }, 30) // status();
like($st, qr/set: g .*mode=watching/, 'status page: the set is watched again');
like($st, qr/^watcher-state: watching/m, 'status page: the watcher is no longer degraded');
like($srv->log_text, qr/set g: every directory is watched again/, 'the error log says it is watched again');
put("$W/d9/e/after.txt", "after\n");
rename "$W/d8", "$W/d8-renamed";
is($dest->sync_until_equal(60), '', 'watching again: baseline + changes rebuild the tree');
unlike($srv->log_text, qr/\[resourcesync:(error|crit|alert|emerg)\]/, 'no module errors');
$srv->stop;
