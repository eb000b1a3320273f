# SPDX-License-Identifier: Apache-2.0
# Mounts are followed.  Private server, as root (the test mounts tmpfs
# file systems; skipped otherwise):
#   - set r's root is a tmpfs with files: unmounted, the set is unavailable
#     (503 with Retry-After, the status page says why) and nothing is
#     journaled; a file system with the same files mounted there again,
#     it is listed exactly as before and nothing was ever journaled;
#   - set n holds an empty directory mnt: a tmpfs with files bound there
#     is listed (inotify reports no mount); unmounted, its files go.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use File::Path qw(make_path);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF STATUS_CONF get wait_for wait_ok fetch_list
              changes_of rl_url);

plan skip_all => 'needs root (the test mounts tmpfs file systems)' unless $> == 0;
my $probe = File::Temp::tempdir(CLEANUP => 1);
plan skip_all => 'cannot mount a tmpfs here'
    unless system("mount -t tmpfs -o size=1m tmpfs $probe 2>/dev/null") == 0
           && system("umount $probe") == 0;

plan tests => 15;

my @mounted;
sub mount_tmpfs { my ($dir) = @_; system('mount', '-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', $dir) == 0
                      or die "mount $dir"; push @mounted, $dir }
sub unmount { my ($dir) = @_; system('umount', $dir) == 0 or die "umount $dir";
              @mounted = grep { $_ ne $dir } @mounted }
END { system('umount', '-l', $_) for reverse @mounted }

my $srv = private_server(conf => STATE_CONF . STATUS_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('r', 'www/r') . set_conf('n', 'www/n'));
my $d = $srv->dir;
my $B = $srv->base;
make_path("$d/www/r", "$d/www/n/mnt", "$d/src", "$d/src-r");
mount_tmpfs("$d/www/r");
RSTest::put("$d/www/r/$_.txt", "$_\n") for qw(a b c);
utime 1_600_000_000, 1_600_000_000, map { "$d/www/r/$_.txt" } qw(a b c);
RSTest::put("$d/www/n/top.txt", "top\n");
$srv->start_ok;

sub locs { my ($set) = @_; join ' ', sort map { (my $l = $_->{loc}) =~ s{^\Q$B\E/}{}; $l }
                                     @{ fetch_list($set, $B)->{entries} } }
sub status { get("$B/rs-status?text")->content }
sub deleted { my ($set) = @_; scalar grep { ($_->{change} // '') eq 'deleted' } changes_of($set, $B) }

# ------------------------------------------------------ the root unmounted
is(locs('r'), 'r/a.txt r/b.txt r/c.txt', 'the files of the mounted root are listed');
wait_ok(sub { get("$B/resourcesync/r/changelist.xml")->code == 200 }, 30,
        'r: the Change List Index is served (the baseline is journaled)');
unmount("$d/www/r");
my $st = wait_for(sub { my $s = status(); $s =~ /^set-unavailable: r /m ? $s : undef }, 30) // status();
like($st, qr{^set-unavailable: r root \S*/www/r is an empty directory on another file system .*not mounted\?$}m,
     'unmounted: the status page says why');
my $r = get(rl_url('r', $B));
is($r->code, 503, 'its Resource List is a 503');
is($r->header('Retry-After'), '1', 'with Retry-After');
is(get("$B/resourcesync/r/changelist.xml")->code, 503, 'its Change Lists too');
sleep 2;    # two rescan intervals: a scan now would journal every file as deleted
# The file system comes back with its files (prepared elsewhere, then
# bound at the root: a disk mounted again).
mount_tmpfs("$d/src-r");
RSTest::put("$d/src-r/$_.txt", "$_\n") for qw(a b c);
utime 1_600_000_000, 1_600_000_000, map { "$d/src-r/$_.txt" } qw(a b c);
system('mount', '--bind', "$d/src-r", "$d/www/r") == 0 or die 'mount --bind';
push @mounted, "$d/www/r";
ok(wait_for(sub { status() !~ /^set-unavailable: r /m }, 30), 'mounted again: available');
is(locs('r'), 'r/a.txt r/b.txt r/c.txt', 'listed exactly as before');
is(deleted('r'), 0, 'no deletion was ever journaled');
is(scalar(() = changes_of('r', $B)), 0, 'nor anything else');

# ------------------------------------------------------- a mount inside a set
is(locs('n'), 'n/top.txt', 'set n: one file');
mount_tmpfs("$d/src");
RSTest::put("$d/src/$_.txt", "$_\n") for qw(x y);
system('mount', '--bind', "$d/src", "$d/www/n/mnt") == 0 or die 'mount --bind';
push @mounted, "$d/www/n/mnt";
ok(wait_for(sub { locs('n') eq 'n/mnt/x.txt n/mnt/y.txt n/top.txt' }, 30),
   'the files of a file system mounted inside the set are listed') or diag(locs('n'));
unmount("$d/www/n/mnt");
ok(wait_for(sub { locs('n') eq 'n/top.txt' }, 30), 'unmounted: they go') or diag(locs('n'));
is(deleted('n'), 2, 'their deletions are journaled');
$srv->stop;
unmount("$d/src");
unmount("$d/www/r");
unmount("$d/src-r");
