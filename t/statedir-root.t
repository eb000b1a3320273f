# SPDX-License-Identifier: Apache-2.0
# The state directory's boundary between root and the run user (issue 23,
# section 1).  The run user owns the state directory and can put anything
# under any name in it; root (the httpd parent at every restart, rs-tool
# run by the operator) must never follow, open or read what it finds there:
#   - snapshots/ and changelists/ replaced by symbolic links to root's
#     directories: a graceful and a full restart leave their owner and mode
#     alone, and the server answers;
#   - history replaced by a FIFO, by a symbolic link to a FIFO or a file
#     only root may read, by a large file: a graceful restart completes,
#     the parent lives, the site answers and the lists come back;
#   - every directory of the state directory is 0700 and every file 0600,
#     owned by the run user, after a start as root under umask 022 and 000
#     and as a plain user under umask 000, with every kind of state file
#     present (store and its -wal and -shm, snapshots, Change Lists, both
#     dumps, captures, notification topics, the hub's spool, locks); the
#     children, mod_status and rs-tool still read what they need;
#   - an older version's state directory (0750, state.db 0644) is made
#     private at the start;
#   - rs-tool as root follows nothing planted there: forget-set's lock and
#     tree removal, status with a FIFO for a lock file, backup of a store
#     that is a symbolic link; a state directory of root holding the run
#     user's files is refused.
# Private servers; root only (httpd gives the directory to User nobody).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Fcntl qw(:mode O_WRONLY O_NONBLOCK);
use File::Basename qw(dirname);
use File::Find ();
use HTTP::Request ();
use POSIX qw(mkfifo);
use URI::Escape qw(uri_escape);
use RSTest qw(get ua started_server private_server set_conf STATE_CONF STATUS_CONF wait_for
              put list_entries);

plan skip_all => 'root only: httpd gives the state directory to its run user' unless $> == 0;
plan tests => 66;

my $NOBODY = getpwnam('nobody');
my $NOGROUP = getgrnam('nogroup');
my $tool = dirname(RSTest::Server::module_path()) . '/rs-tool';

# run(@args) -> (exit status, stdout, stderr) of rs-tool, killed after 20 s
# (exit 124) if it hangs.
sub run {
    my @args = @_;
    my $out = File::Temp->new;
    my $err = File::Temp->new;
    system(join(' ', 'timeout', 20, map { quotemeta } $tool, @args) . " >$out 2>$err");
    my $slurp = sub { open my $fh, '<', $_[0] or die $!; local $/; <$fh> // '' };
    return ($? >> 8, $slurp->("$out"), $slurp->("$err"));
}

# Graceful restart; true when the new generation said it is ready within
# 20 s (a parent hanging on something in the state directory never does).
sub graceful_ok {
    my ($srv) = @_;
    my $from = length $srv->log_text;
    $srv->graceful;
    return ready_since($srv, $from);
}

sub ready_since {
    my ($srv, $from) = @_;
    return wait_for(sub { substr($srv->log_text, $from) =~ /resuming normal operations/ }, 20);
}

sub answers { get($_[0]->base . '/data/a.txt')->code == 200 }

sub list_ok {
    my ($srv) = @_;
    return wait_for(sub { get($srv->base . '/resourcesync/d/resourcelist.xml')->code == 200 }, 30);
}

sub owner_mode { my @s = lstat $_[0]; @s ? sprintf('%d %04o', $s[4], $s[2] & 07777) : 'missing' }

# Every entry below (and with) $dir that is not a directory of mode 0700
# or a regular file of mode 0600 owned by $uid: "path: what" lines.
sub not_private {
    my ($dir, $uid) = @_;
    my @bad;
    File::Find::find({ no_chdir => 1, wanted => sub {
        my @s = lstat $_ or return;           # gone meanwhile
        my $m = $s[2] & 07777;
        push @bad, "$_: uid $s[4]" if $s[4] != $uid;
        if (S_ISDIR($s[2])) { push @bad, sprintf('%s: directory %04o', $_, $m) if $m != 0700 }
        elsif (S_ISREG($s[2])) { push @bad, sprintf('%s: file %04o', $_, $m) if $m != 0600 }
        else { push @bad, "$_: neither file nor directory" }
    } }, $dir);
    return \@bad;
}

# One test: nothing below $dir is other than private to $uid (the first
# offenders and their number as a diagnostic).
sub private_ok {
    my ($dir, $uid, $name) = @_;
    my $bad = not_private($dir, $uid);
    ok(!@$bad, $name) or diag(join("\n", @$bad[0 .. ($#$bad < 14 ? $#$bad : 14)]),
                              "\n(", scalar(@$bad), ' entries)');
}

# ------------------------------------------- symbolic links, graceful and full
my $CONF = STATE_CONF . "ResourceSyncRescanInterval 1\n" . set_conf('d', 'www/data');
my $srv = started_server(conf => $CONF, files => { 'www/data/a.txt' => "a\n" });
my $d = $srv->dir;
my $state = "$d/state";
ok(list_ok($srv), 'the list is served');
ok(wait_for(sub { -d "$state/snapshots" && -d "$state/changelists" }, 20),
   'the watcher made snapshots/ and changelists/');
mkdir "$d/victim1", 0755;
mkdir "$d/victim2", 0711;
chmod 0755, "$d/victim1";
chmod 0711, "$d/victim2";
put("$d/victim1/keep", "root's\n");
# What the run user can do in its own directory.
for (['snapshots', 'victim1'], ['changelists', 'victim2']) {
    my ($name, $victim) = @$_;
    rename "$state/$name", "$state/$name.real" or die "$name: $!";
    symlink "$d/$victim", "$state/$name" or die $!;
    system('chown', '-h', 'nobody:nogroup', "$state/$name") == 0 or die 'chown';
}
ok(graceful_ok($srv), 'snapshots/ and changelists/ symbolic links: a graceful restart completes');
is(owner_mode("$d/victim1"), '0 0755', 'graceful restart: the target of snapshots/ keeps its owner and mode');
is(owner_mode("$d/victim2"), '0 0711', 'graceful restart: the target of changelists/ keeps its owner and mode');
is(owner_mode("$d/victim1/keep"), '0 0644', 'graceful restart: what is in it too');
ok(answers($srv), 'graceful restart: the server answers');
$srv->stop;
$srv->start_ok('symbolic links: a full restart starts');
is(owner_mode("$d/victim1"), '0 0755', 'full restart: the target of snapshots/ keeps its owner and mode');
is(owner_mode("$d/victim2"), '0 0711', 'full restart: the target of changelists/ keeps its owner and mode');
ok(answers($srv), 'full restart: the server answers');
for my $name (qw(snapshots changelists)) {
    unlink "$state/$name";
    rename "$state/$name.real", "$state/$name" or die "$name: $!";
}
ok(graceful_ok($srv) && list_ok($srv), 'links removed: the list is served again');

# ------------------------------------------------- history: FIFO, links, size
my $root_fifo = "$d/root-fifo";
mkfifo($root_fifo, 0600) or die $!;
put("$d/root-only", "0123456789abcdef0123456789abcdef\n");
chmod 0600, "$d/root-only";
my @cases = (
    ['a FIFO', sub { mkfifo("$state/history", 0600) or die $! }, "$state/history"],
    ['a symbolic link to a FIFO of root', sub { symlink($root_fifo, "$state/history") or die $! },
     $root_fifo],
    ['a symbolic link to a file only root may read',
     sub { symlink("$d/root-only", "$state/history") or die $! }, undef],
    ['a file of 256 MB', sub { open my $fh, '>', "$state/history" or die $!;
                              truncate $fh, 256 << 20 or die $! }, undef],
);
for my $c (@cases) {
    my ($what, $make, $fifo) = @$c;
    unlink "$state/history";
    $make->();
    system('chown', '-h', 'nobody:nogroup', "$state/history") == 0 or die 'chown';
    my $pid = $srv->pid;
    my $from = length $srv->log_text;
    my $done = graceful_ok($srv);
    ok($done && kill(0, $pid), "history is $what: a graceful restart completes, the parent lives");
    unless ($done) {
        # Let a parent that waits for a writer go on, and finish.
        if ($fifo && sysopen(my $w, $fifo, O_WRONLY | O_NONBLOCK)) { close $w }
        ready_since($srv, $from);    # (the check below says whether it came back)
    }
    ok(answers($srv) && list_ok($srv), "history is $what: the site answers and the list is back");
}
is(owner_mode("$d/root-only"), '0 0600', 'the file only root may read is untouched');

# ------------------------------------------------------------ modes
# A server with every kind of state file; returns it when all are there.
my $HUB_CB = 'http://93.184.216.34:8080/cb';
sub full_server {
    my (%o) = @_;
    my $srv = private_server(conf => STATE_CONF . STATUS_CONF
        . "ResourceSyncRescanInterval 1\nResourceSyncHub on\n"
        . "LoadModule status_module /usr/lib/apache2/modules/mod_status.so\n"
        . "<Location /server-status>\n    SetHandler server-status\n</Location>\n"
        . set_conf('f', 'www/data', 'ResourceSyncResourceDump 1', 'ResourceSyncChangeDump on',
                   'ResourceSyncChangeListPeriod 2s', 'ResourceSyncNotify on',
                   'ResourceSyncNotifyDelay 500ms'));
    $srv->populate(files => { 'www/data/a.txt' => "a\n", 'www/data/sub/b.txt' => "b\n" });
    my ($rc, $out);
    if ($o{plain}) {
        system('chown', '-R', 'nobody:nogroup', $srv->dir) == 0 or die 'chown';
        no warnings 'redefine';
        # The usual binary (the AddressSanitizer wrapper under RS_ASAN),
        # started as the run user.
        my $bin = RSTest::Server::httpd_bin();
        local *RSTest::Server::httpd_bin = sub {
            "setpriv --reuid=nobody --regid=nogroup --clear-groups $bin" };
        ($rc, $out) = $srv->start;
    }
    else {
        ($rc, $out) = $srv->start;
    }
    diag($out) if $rc;
    return ($srv, $rc == 0);
}

# Make the watcher and the children write everything, then look.
sub all_written {
    my ($srv) = @_;
    my $s = $srv->dir . '/state';
    return 0 unless wait_for(sub { -e "$s/snapshots/f" }, 30);
    put($srv->dir . '/www/data/c.txt', "c\n");
    # A subscription request, spooled by a child (the watcher held, so that
    # it stays; removed before the watcher goes on: no outbound request).
    my $watcher = wait_for(sub { $srv->watcher_pid }, 20);
    diag('no watcher runs after 20 s') unless $watcher;
    my @w = $srv->watchers;
    my $ok = wait_for(sub {
        my @g = glob("$s/changelists/f/*-*.xml");
        @g && glob("$s/changedumps/f/*.zip") && glob("$s/dumps/f/*/*.zip")
            && glob("$s/capture/f/*") && -e "$s/notify/f/change.xml" && -e "$s/locks/f"
            && -e "$s/history" && -e "$s/state.db-wal" && -e "$s/state.db-shm"
            && -e "$s/hub/intake" }, 60);
    diag('not every kind of state file after 60 s') unless $ok;
    kill 'STOP', @w;
    my $r = ua()->request(HTTP::Request->new(POST => $srv->base . '/resourcesync/hub',
        ['Content-Type' => 'application/x-www-form-urlencoded'],
        join('&', map { uri_escape($_->[0]) . '=' . uri_escape($_->[1]) }
                  ['hub.mode', 'subscribe'], ['hub.callback', $HUB_CB],
                  ['hub.topic', $srv->base . '/resourcesync/f/notify/change'])));
    my @spool = glob("$s/hub/spool/*.req");
    diag('the subscription request was answered ' . $r->code) unless $r->code == 202;
    diag('no subscription request spooled') unless @spool;
    return ($watcher && $ok && $r->code == 202 && @spool, \@w, \@spool);
}

sub release {
    my ($w, $spool) = @_;
    unlink @$spool;
    kill 'CONT', @$w;
}

my ($full, $started, $written, $w, $spool);
for my $m (['root', 022], ['root', 000], ['a plain user', 000]) {
    my ($who, $mask) = @$m;
    my $name = sprintf('started by %s, umask %03o', $who, $mask);
    umask $mask;
    ($full, $started) = full_server(plain => $who ne 'root');
    umask 022;
    ok($started, "$name: starts");
    my $ppid = wait_for(sub { $full->pid }, 20);
    diag("$name: no httpd.pid after 20 s") unless $ppid;
    $ppid //= 0;
    is((stat("/proc/$ppid"))[4], $who eq 'root' ? 0 : $NOBODY, "$name: the parent runs as $who")
        if $who ne 'root' || $mask;
    ($written, $w, $spool) = all_written($full);
    ok($written, "$name: every kind of state file is written")
        or diag(`ls -lR $full->{dir}/state`, $full->log_text);
    is(owner_mode("$full->{dir}/state"), "$NOBODY 0700", "$name: the state directory is 0700");
    private_ok("$full->{dir}/state", $NOBODY,
               "$name: every directory 0700, every file 0600, all the run user's");
    release($w, $spool);
    like(get($full->base . '/server-status?auto')->content, qr/^ResourceSyncSet: f$/m,
         "$name: mod_status reads the status");
    is(get($full->base . '/resourcesync/f/changedump.xml')->code, 200,
       "$name: children serve the Change Dump");
    last if $who ne 'root';
    $full->stop;
}

# rs-tool as root on that state directory (the plain user's server runs):
# it reads as the owner, and backup writes FILE as root.
my $fs = "$full->{dir}/state";
my ($rc, $out, $err) = run('status', '-d', $fs);
ok($rc == 0 && $out =~ /^set f: files 3 /m, 'rs-tool status as root: reads the store') or diag $err;
($rc, $out, $err) = run('backup', '-d', $fs, "$d/full.db");
is("$rc|$err", '0|', 'rs-tool backup as root: exit 0');
is(owner_mode("$d/full.db"), '0 0600', 'rs-tool backup as root: FILE is root\'s, 0600');
is(`sqlite3 $d/full.db "PRAGMA integrity_check"`, "ok\n", 'rs-tool backup: a sound copy');
is_deeply([glob("$fs/.backup-*")], [], 'rs-tool backup: no temporary copy left');
$full->stop;

# ---------------------------------------- an older version's state directory
($full, $started) = full_server();
ok($started && wait_for(sub { -e "$full->{dir}/state/snapshots/f" }, 30), 'old modes: a state directory');
$full->stop;
$fs = "$full->{dir}/state";
# What an older version leaves: no record of the walk in the store, wider
# modes.
system('sqlite3', '-cmd', '.timeout 10000', "$fs/state.db",
       "DELETE FROM meta WHERE k = 'statedir-private'") == 0 or die 'sqlite3';
unlink "$fs/state.db-wal", "$fs/state.db-shm";
chmod 0750, $fs;
chmod 0644, "$fs/state.db", "$fs/history";
chmod 0755, "$fs/snapshots", "$fs/locks";
chmod 0644, glob("$fs/snapshots/f/*/*.xml");
ok(@{ not_private($fs, $NOBODY) } > 3, 'old modes: made');
$full->start_ok('old modes: the server starts');
ok(wait_for(sub { $full->log_text =~ /entries of ResourceSyncStateDir '\Q$fs\E' made private/ }, 20),
   'old modes: the watcher says it made them private');
ok(wait_for(sub { -e "$fs/state.db-wal" }, 20), 'old modes: the store is open');
private_ok($fs, $NOBODY, 'old modes: every directory 0700, every file 0600');
$full->stop;

# ------------------------------------------------------------ rs-tool as root
# A server with sets a, b and c, stopped: forget-set may run.
my $two = started_server(conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('a', 'www/a') . set_conf('b', 'www/b')
                                 . set_conf('c', 'www/c'),
                         files => { 'www/a/1.txt' => "1\n", 'www/b/2.txt' => "2\n",
                                    'www/c/3.txt' => "3\n" });
my $ts = $two->dir . '/state';
ok(wait_for(sub { -d "$ts/snapshots/a" && -d "$ts/snapshots/b" && -d "$ts/snapshots/c" }, 30),
   'three sets listed');
$two->stop;
my $v = $two->dir;
mkdir "$v/victim-locks", 0755;
chmod 0755, "$v/victim-locks";
rename "$ts/locks", "$ts/locks.real" or die $!;
symlink "$v/victim-locks", "$ts/locks" or die $!;
system('chown', '-h', 'nobody:nogroup', "$ts/locks") == 0 or die 'chown';
($rc, $out, $err) = run('forget-set', '-d', $ts, 'c');
isnt($rc, 0, 'forget-set with locks/ a symbolic link to root\'s directory: fails');
is(owner_mode("$v/victim-locks"), '0 0755', 'forget-set: the link\'s target keeps its owner and mode');
opendir my $vd, "$v/victim-locks" or die $!;
is_deeply([grep { !/^\.\.?$/ } readdir $vd], [], 'forget-set: nothing created in it');
closedir $vd;
unlink "$ts/locks";
rename "$ts/locks.real", "$ts/locks" or die $!;

mkdir "$v/victim-tree", 0755;
put("$v/victim-tree/keep", "root's\n");
rename "$ts/snapshots/b", "$ts/snapshots-b.real" or die $!;
symlink "$v/victim-tree", "$ts/snapshots/b" or die $!;
system('chown', '-h', 'nobody:nogroup', "$ts/snapshots/b") == 0 or die 'chown';
($rc, $out, $err) = run('forget-set', '-d', $ts, 'b');
is($rc, 0, 'forget-set with snapshots/b a symbolic link to root\'s directory: exit 0') or diag $err;
ok(-e "$v/victim-tree/keep", 'forget-set: what the link points to is not removed');
ok(!-l "$ts/snapshots/b", 'forget-set: the link is removed');
is(owner_mode("$ts/locks/b"), "$NOBODY 0600", 'forget-set: its lock file is the run user\'s, 0600');

# status: a lock file replaced by a link to a FIFO of root.
unlink "$ts/locks/a";
symlink $root_fifo, "$ts/locks/a" or die $!;
($rc, $out, $err) = run('status', '-d', $ts);
ok($rc == 0 && $out =~ /^set a: .* watcher none$/m,
   'status with a lock file linked to a FIFO: answers at once') or diag "$rc: $err";
unlink "$ts/locks/a";

# backup: the store replaced by a link to a store only root may read.
rename "$ts/state.db", "$ts/state.db.real" or die $!;
system('cp', "$ts/state.db.real", "$v/root.db") == 0 or die 'cp';
chmod 0600, "$v/root.db";
symlink "$v/root.db", "$ts/state.db" or die $!;
($rc, $out, $err) = run('backup', '-d', $ts, "$v/copy.db");
ok($rc != 0 && !-e "$v/copy.db", 'backup of a store that is a symbolic link: refused, no copy')
    or diag "$rc: $out $err";
unlink "$ts/state.db";
rename "$ts/state.db.real", "$ts/state.db" or die $!;

# A state directory of root that holds the run user's files: refused.
chown 0, 0, $ts;
($rc, $out, $err) = run('status', '-d', $ts);
like("$rc|$err", qr/^1\|rs-tool: status: state directory '\Q$ts\E' belongs to root, but '[^']+' in it belongs to uid $NOBODY: give the directory/,
     'status: a state directory of root holding the run user\'s files is refused');
chown $NOBODY, $NOGROUP, $ts;
($rc, $out, $err) = run('status', '-d', $ts);
is($rc, 0, 'status: given back to the run user, it reads again') or diag $err;
