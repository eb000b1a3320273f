# SPDX-License-Identifier: Apache-2.0
# rs-tool, the operator's CLI, against the state directory of a real
# server: --version and the version the module logs; status (also with
# --url of the status page); verify, equal and different, changing
# nothing; forget-set refused while a watcher serves the set, then
# removing every row and directory of it; backup while the server runs,
# accepted by PRAGMA integrity_check, and a server started from it; the
# engine commands (scan of a missing root keeps the inventory exactly,
# list creates its output directory); and a one-line error with exit 2 for
# every misuse.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(dirname);
use File::Copy qw(copy);
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF put get wait_for wait_ok list_entries);

plan tests => 79;

my $tool = dirname(RSTest::Server::module_path()) . '/rs-tool';
my $version = do { open my $fh, '<', "$FindBin::Bin/../VERSION" or die $!; local $_ = <$fh>; chomp; $_ };

# run(@args) -> (exit status, stdout, stderr)
sub run {
    my @args = @_;
    my $out = File::Temp->new;
    my $err = File::Temp->new;
    system(join(' ', map { quotemeta } $tool, @args) . " >$out 2>$err");
    my $slurp = sub { open my $fh, '<', $_[0] or die $!; local $/; <$fh> // '' };
    return ($? >> 8, $slurp->("$out"), $slurp->("$err"));
}

sub sql {
    my ($db, $q) = @_;
    my $r = `sqlite3 -cmd ".timeout 10000" -batch $db "$q"`;
    chomp $r;
    return $r;
}

# --version, --help
my ($rc, $out, $err) = run('--version');
is("$rc|$out", "0|rs-tool $version\n", '--version prints the version of VERSION');
($rc, $out) = run('--help');
ok($rc == 0 && $out =~ /forget-set/ && $out =~ /backup/, '--help lists the commands');

my $conf_ab = STATE_CONF . STATUS_CONF . "ResourceSyncRescanInterval 1\n"
    . set_conf('a', 'www/a', 'ResourceSyncHash md5') . set_conf('b', 'www/b');
my $srv = started_server(
    conf => $conf_ab,
    files => { 'www/a/a1.txt' => "one\n", 'www/a/a2.txt' => "two\n", 'www/a/sub/a3.txt' => "three\n",
               'www/b/b1.txt' => "bee\n", 'www/b/b2.txt' => "bees\n" });
my $d = $srv->dir;
my $state = "$d/state";
my $db = "$state/state.db";
my $B = $srv->base;
is(scalar(list_entries('a', $B)), 3, 'set a is listed');
is(scalar(list_entries('b', $B)), 2, 'set b is listed');
like($srv->log_text, qr/\[resourcesync:notice\] .*mod_resourcesync\/\Q$version\E \(2 sets\) configured/,
     'the module logs its version at startup');
my $wpid = $srv->watcher_pid;
ok($wpid, 'a watcher runs');

# status
($rc, $out, $err) = run('status', '-d', $state);
is($rc, 0, 'status: exit 0');
my %st = map { /^set (\S+): (.*)$/ ? ($1 => $2) : () } split /\n/, $out;
like($st{a} // '', qr/^files 3 bytes 14 last-change \d{4}-\S+Z generation [1-9]\d* journal \d+ watcher $wpid$/,
     'status: set a with files, bytes, last change, generation, journal, watcher');
like($st{b} // '', qr/^files 2 bytes 9 .* watcher $wpid$/, 'status: set b');
like($out, qr/^store \Q$db\E bytes \d+ schema [1-9]\d* history [0-9a-f]+$/m, 'status: the store');
like($out, qr/^sets 2$/m, 'status: number of sets');
my ($gen) = ($st{a} // '') =~ /generation (\d+)/;
my $page = get("$B/rs-status?text")->content;
like($page, qr/^set: a generation=\Q$gen\E /m, 'status: generation as the status page shows it');
($rc, $out) = run('status', '-d', $state, '--url', "$B/rs-status?text");
ok($rc == 0 && $out =~ /^server \Q$B\E\/rs-status\?text\n(?s:.*)^set: a generation=/m,
   'status --url: the running server\'s status follows');
($rc, $out, $err) = run('status', '-d', $state, '--url', "$B/no-such-status");
is("$rc|$err", "1|rs-tool: status: --url '$B/no-such-status': HTTP status 404\n",
   'status --url of a page that is not there: exit 1');

# verify, equal (nothing changes in the tree meanwhile)
my $before = sql($db, 'SELECT COUNT(*), SUM(size) FROM inventory');
($rc, $out) = run('verify', '-d', $state, 'a', "$d/www/a");
is("$rc|$out", "0|verify a: files 3 listed 3 differences 0\n", 'verify: equal, exit 0');

# forget-set refused while the watcher serves the set
($rc, $out, $err) = run('forget-set', '-d', $state, 'b');
is($rc, 1, 'forget-set of a set in use: exit 1');
like($err, qr/^rs-tool: forget-set: set 'b' is in use by a running watcher \(pid $wpid\): .*apachectl stop/,
     'forget-set: names the watcher and how to stop it');
is(sql($db, "SELECT COUNT(*) FROM inventory WHERE setname = 'b'"), 2, 'forget-set refused: rows kept');

# backup while the server runs
my $bk = "$d/backup.db";
($rc, $out) = run('backup', '-d', $state, $bk);
is($rc, 0, 'backup: exit 0');
like($out, qr/^backup \Q$bk\E bytes \d+$/, 'backup: says what it wrote');
is(sql($bk, 'PRAGMA integrity_check'), 'ok', 'backup: integrity_check accepts it');
is(sql($bk, 'PRAGMA journal_mode'), 'delete', 'backup: one self-contained file');
is(sprintf('%o', (stat $bk)[2] & 07777), '600', 'backup: readable by its owner only');
is(sql($bk, "SELECT COUNT(*) FROM inventory WHERE setname = 'a' AND listed = 1"), 3,
   'backup: holds the inventory');
($rc, $out, $err) = run('backup', '-d', $state, $bk);
is("$rc|$err", "2|rs-tool: backup: FILE '$bk' exists; not overwritten\n", 'backup onto an existing file: exit 2');

# misuse: one line, exit 2
my @misuse = (
    [['frobnicate'], "unknown command 'frobnicate' (rs-tool --help lists them)"],
    [[], undef],
    [['status', '-d', "$d/nonexistent"], "status: state directory '$d/nonexistent': No such file or directory"],
    [['status', '-d', "$d/www"], "status: no state store in '$d/www': $d/www/state.db: No such file or directory"],
    [['status', '--bogus'], "status: unknown option '--bogus'"],
    [['status', '-d'], "status: -d needs a value"],
    [['verify', '-d', $state], 'verify: missing argument: SET ROOT (usage: rs-tool verify SET ROOT)'],
    [['verify', '-d', $state, 'nosuch', "$d/www/a"], "verify: no set 'nosuch' in '$state'"],
    [['verify', '-d', $state, 'a', "$d/www/none"], "verify: ROOT '$d/www/none' is not a directory: No such file or directory"],
    [['forget-set', '-d', $state], 'forget-set: missing argument: SET (usage: rs-tool forget-set SET)'],
    [['forget-set', '-d', $state, 'nosuch'], "forget-set: no set 'nosuch' in '$state'"],
    [['forget-set', '-d', $state, '../x'], "forget-set: invalid set name '../x'"],
    [['backup', '-d', $state], 'backup: missing argument: FILE (usage: rs-tool backup FILE)'],
    [['scan', "$d/x.db", 'x'], 'scan: missing argument: STATE.db SET ROOT (usage: rs-tool scan STATE.db SET ROOT)'],
    [['list', "$d/x.db", 'x', "$d/out", 'http://h/', '--max', 'many'], "list: --max 'many' is not a positive number"],
    [['list', "$d/none.db", 'x', "$d/out", 'http://h/'], "list: STATE.db '$d/none.db': No such file or directory"],
    [['scan', "$d/x.db", 'x', "$d/www/a", '--hash', 'crc'], '--hash: unknown hash \'crc\''],
    # --store: the state directory's commands only; backup leaves PostgreSQL to pg_dump
    [['status', '-d', $state, '--store', 'mysql:x'], "status: --store 'mysql:x' is not sqlite or pgsql:DSN"],
    [['status', '-d', $state, '--store', 'pgsql:'], 'status: --store pgsql: needs a connection string (pgsql:DSN)'],
    [['scan', "$d/x.db", 'x', "$d/www/a", '--store', 'sqlite'], 'scan: option --store does not apply'],
    [['backup', '-d', $state, '--store', 'pgsql:dbname=rs password=secret', "$d/pg.bk"],
     'backup: the store is PostgreSQL: back it up with pg_dump (e.g. pg_dump -Fc -f FILE DBNAME), not rs-tool'],
);
for my $m (@misuse) {
    my ($args, $msg) = @$m;
    ($rc, $out, $err) = run(@$args);
    if (defined $msg) {
        is("$rc|$err", "2|rs-tool: $msg\n", "misuse: rs-tool @$args");
    }
    else {
        ok($rc == 2 && $err =~ /^usage: rs-tool COMMAND/, 'misuse: no command prints the usage');
    }
}

# Engine commands on a store of their own: a scan of a root that does not
# exist fails and keeps the inventory exactly; list creates OUTDIR.
my $tdb = "$d/tool.db";
($rc, $out) = run('scan', $tdb, 't', "$d/www/a", '--hash', 'md5');
is("$rc|$out", "0|files 3 dirs 2 listed 3 written 3 removed 0 hashed 14\n", 'scan: a tree');
my $dump = sql($tdb, 'SELECT * FROM inventory ORDER BY dir, name');
($rc, $out, $err) = run('scan', $tdb, 't', "$d/www/gone");
is("$rc|$err", "2|rs-tool: scan: ROOT '$d/www/gone': No such file or directory\n",
   'scan of a missing root: exit 2, says so');
is(sql($tdb, 'SELECT * FROM inventory ORDER BY dir, name'), $dump, 'scan of a missing root: inventory unchanged');
($rc, $out, $err) = run('list', $tdb, 't', "$d/lists/new/dir", 'http://h/t/');
is("$rc|$out", "0|entries 3 parts 0\n", 'list into a directory that does not exist: exit 0');
ok(-s "$d/lists/new/dir/resourcelist.xml", 'list: created the directory and wrote the list');

# A change in b, so that it has journal rows too; then the server stops:
# forget-set b, verify a against a changed tree.
put("$d/www/b/b3.txt", "b3\n");
ok(wait_for(sub { sql($db, "SELECT COUNT(*) FROM journal WHERE setname = 'b'") > 0 }, 30),
   'set b has journal rows');
my %rows_b = map { $_ => sql($db, "SELECT COUNT(*) FROM $_ WHERE setname = 'b'") } qw(inventory journal_sets);
ok($rows_b{inventory} == 3 && $rows_b{journal_sets} == 1, 'set b has inventory and journal_sets rows');
$srv->stop;
wait_ok(sub { !RSTest::alive($wpid) }, 20, 'the watcher exits with the server');
($rc, $out) = run('status', '-d', $state);
like($out, qr/^set a: .* watcher none$/m, 'status: no watcher once the server stopped');
ok(-d "$state/snapshots/b" && -d "$state/changelists/b", 'set b has directories');
my @meta_b = split /\n/, sql($db, "SELECT k FROM meta WHERE k LIKE '%:b'");
ok(scalar(@meta_b) > 0, 'set b has bookkeeping rows');
($rc, $out, $err) = run('forget-set', '-d', $state, 'b');
is($rc, 0, 'forget-set: exit 0') or diag($err);
like($out, qr/^forgot set b: rows \d+ directories \d+$/, 'forget-set: says what it removed');
for my $t (qw(inventory journal changelists journal_sets notifications notify_dests)) {
    is(sql($db, "SELECT COUNT(*) FROM $t WHERE setname = 'b'"), 0, "forget-set: no rows of b in $t");
}
is(sql($db, "SELECT COUNT(*) FROM meta WHERE k LIKE '%:b'"), 0, 'forget-set: no meta keys of b');
ok(!grep({ -e "$state/$_/b" } qw(snapshots changelists dumps capture changedumps notify)),
   'forget-set: no directory of b');
is(sql($db, 'SELECT COUNT(*), SUM(size) FROM inventory'), sql($bk, "SELECT COUNT(*), SUM(size) FROM inventory WHERE setname = 'a'"),
   'forget-set: set a untouched');
($rc, $out, $err) = run('forget-set', '-d', $state, 'b');
is("$rc|$err", "2|rs-tool: forget-set: no set 'b' in '$state'\n", 'forget-set again: no such set');

put("$d/www/a/new.txt", "new\n");
put("$d/www/a/a1.txt", "one, longer\n");
unlink "$d/www/a/a2.txt";
my $inv = sql($db, 'SELECT * FROM inventory ORDER BY dir, name');
($rc, $out) = run('verify', '-d', $state, 'a', "$d/www/a");
is($rc, 1, 'verify: differences, exit 1');
is(join('', sort grep { !/^verify / } split /^/, $out), "created new.txt\ndeleted a2.txt\nupdated a1.txt\n",
   'verify: one line per difference');
like($out, qr/^verify a: files 3 listed 3 differences 3$/m, 'verify: summary');
is(sql($db, 'SELECT * FROM inventory ORDER BY dir, name'), $inv, 'verify: the inventory is unchanged');
($rc) = run('verify', '-d', $state, 'a', "$d/www/a");
is($rc, 1, 'verify again: still different (it changed nothing)');

# Restore the backup: copy it over state.db (without -wal and -shm), start.
unlink "$db-wal", "$db-shm";
copy($bk, $db) or die $!;
if ($> == 0) {
    my ($uid, $gid) = (getpwnam('nobody'))[2, 3];
    chown $uid, $gid, $db;
}
$srv->write_conf(STATE_CONF . STATUS_CONF . "ResourceSyncRescanInterval 1\n"
                 . set_conf('a', 'www/a', 'ResourceSyncHash md5'));
$srv->start_ok('the server starts from the restored backup');
my @names = ();
wait_for(sub {
    @names = sort map { $_->{loc} =~ m{/([^/]+)$} } list_entries('a', $B);
    "@names" eq 'a1.txt a3.txt new.txt';
}, 30);    # what it listed last is the next check
is("@names", 'a1.txt a3.txt new.txt', 'restored: the watcher reconciled the tree');
($rc, $out) = run('verify', '-d', $state, 'a', "$d/www/a");
is($rc, 0, 'restored: verify finds no difference');
unlike($srv->log_text, qr/\[resourcesync:(warn|error|crit|alert|emerg)\]/, 'no warning in the error log');
$srv->stop;
