# SPDX-License-Identifier: Apache-2.0
# rs-tool withdraw SET PATH takes back what dump packages published by
# mistake.  A file is packaged in the Resource Dump and, changed, in a
# Change Dump package; then it is removed and withdrawn: the old package
# and manifest URLs answer 404 when rs-tool returns, resourcedump.xml and
# changedump.xml name new packages (the Change Dump package under a new
# name), none of which holds any byte of the file or a member for it,
# framework notifications announce them, its captures are gone, and
# rs-check (a destination that took its baseline before, and the
# crawler) passes.  A path still served is refused; misuse exits 2.  With
# httpd stopped, rs-tool removes the packages itself, and the next
# watcher builds them again without the file.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for wait_ok put);
use RSDump qw(dump_packages save zip_names py_zip_ok unzip_ok bad_log_lines);

my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";
my $tool = dirname(RSTest::Server::module_path()) . '/rs-tool';

plan tests => 30;

my $srv = started_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
                                 . "ResourceSyncHub on\n"
                                 . set_conf('w', 'www/w', 'ResourceSyncResourceDump 1',
                                            'ResourceSyncChangeDump on',
                                            'ResourceSyncChangeListPeriod 2s',
                                            'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 200ms'),
                         files => { 'www/w/keep.txt' => "kept\n", 'www/w/oops.txt' => "OOPS v1\n",
                                    'www/w/sub/other.txt' => "other\n" });
my $B = $srv->base;
my $D = $srv->dir;
my $state = "$D/state";
my $tmp = tempdir(CLEANUP => 1);
my $n = 0;

# run(@args) -> (exit status, stdout and stderr)
sub run {
    my $out = `$tool @{[ map { quotemeta } @_ ]} 2>&1`;
    return ($? >> 8, $out);
}
# Whether the bytes of url hold the line s.
sub holds {
    my ($url, $s) = @_;
    my $f = "$tmp/f" . ++$n;
    save($f, get($url)->content);
    return system('grep', '-qaF', '--', $s, $f) == 0;
}
# The package and manifest URLs of a dump document.
sub urls_of { map { ($_->{loc}, $_->{manifest}) } dump_packages($_[0], 30) }
my $rd = "$B/resourcesync/w/resourcedump.xml";
my $cd = "$B/resourcesync/w/changedump.xml";
# The framework notifications' payloads after id (in the store's outbox).
sub framework_after {
    my ($after) = @_;
    my $out = `sqlite3 -cmd '.timeout 10000' '$state/state.db' "SELECT id, payload FROM notifications WHERE setname = 'w' AND topic = 'framework' AND sealed = 1 AND id > $after ORDER BY id" 2>&1`;
    return $out;
}
sub framework_last {
    my $out = `sqlite3 -cmd '.timeout 10000' '$state/state.db' "SELECT MAX(id) FROM notifications WHERE setname = 'w' AND topic = 'framework'" 2>&1`;
    chomp $out;
    return $out =~ /^\d+$/ ? $out : 0;
}

# Published: the Resource Dump holds v1; v2 is journaled and packaged.
ok(wait_for(sub { grep { holds($_->{loc}, 'OOPS v1') } dump_packages($rd, 30) }, 60),
   'the Resource Dump holds the file');
my $mirror = "$tmp/mirror";
my $have_check = -x $rs_check;
my $base_out = $have_check ? `$rs_check mirror $B $mirror --set /w/ --dumps --url-base $B/w/ 2>&1` : '';
put("$D/www/w/oops.txt", "OOPS v2\n");
ok(wait_for(sub { grep { holds($_->{loc}, 'OOPS v2') } dump_packages($cd, 30) }, 60),
   'a Change Dump package holds the changed file');
wait_ok(sub { grep { holds($_->{loc}, 'OOPS v2') } dump_packages($rd, 30) }, 60,
        'the Resource Dump holds the changed file');
my @old = grep { holds($_, 'OOPS') || holds($_, 'oops.txt') } urls_of($rd), urls_of($cd);
ok(scalar(grep { m{/changedump/} } @old) >= 2 && scalar(grep { m{/resourcedump/} } @old) >= 2,
   'packages and manifests of both dumps name or hold the file') or diag("@old");

# Misuse, and a path that is still served.
my ($rc, $out) = run('withdraw', '-d', $state, 'w', '../etc/passwd');
is($rc, 2, 'a path with ".." is misuse (exit 2)') or diag($out);
($rc, $out) = run('withdraw', '-d', $state, 'w');
is($rc, 2, 'a missing PATH is misuse (exit 2)') or diag($out);
($rc, $out) = run('withdraw', '-d', $state, '--wait', '30', 'w', 'keep.txt');
ok($rc == 1 && $out =~ /'keep\.txt' is still served/, 'a file still served is refused (exit 1)')
    or diag($out);
($rc, $out) = run('withdraw', '-d', $state, 'nosuchset', 'keep.txt');
ok($rc == 2 && $out =~ /no set 'nosuchset'/, 'a set the state directory does not know is misuse (exit 2)')
    or diag($out);

# The file goes, then it is withdrawn.
unlink "$D/www/w/oops.txt" or die $!;
my $fw_before = framework_last();
($rc, $out) = run('withdraw', '-d', $state, '--wait', '60', 'w', '/oops.txt');
ok($rc == 0 && $out =~ /withdrew 'oops\.txt': [1-9]\d* Change Dump and [1-9]\d* Resource Dump package/,
   'rs-tool withdraw: the packages holding the file are gone') or diag($out);
is_deeply([grep { get($_)->code != 404 } @old], [], 'every old package and manifest URL answers 404 at once');

# New packages, none holding the file.
my (@rdp, @cdp);
ok(wait_for(sub { @rdp = dump_packages($rd, 30); @rdp && !grep { my $u = $_; grep { $_ eq $u->{loc} } @old } @rdp }, 60),
   'resourcedump.xml names new packages');
ok(wait_for(sub { @cdp = dump_packages($cd, 30); grep { $_->{loc} =~ m{/changedump/[0-9a-f]{8}-\d+-1\.zip$} } @cdp }, 60),
   'changedump.xml names the rebuilt package under a new name');
my @all = map { ($_->{loc}, $_->{manifest}) } @rdp, @cdp;
is_deeply([grep { get($_)->code != 200 } @all], [], 'every listed package and manifest answers 200');
is_deeply([grep { holds($_, 'OOPS') } @all], [], 'no listed package or manifest holds any version of the file');
my @zips = map { my $f = "$tmp/z" . ++$n . '.zip'; save($f, get($_->{loc})->content); $f } @rdp, @cdp;
ok(!grep({ !py_zip_ok($_) || !unzip_ok($_) } @zips), 'python3 zipfile and unzip test every package clean');
is_deeply([grep { m{oops\.txt$} } map { zip_names($_) } @zips], [], 'no package has a member for the file');
ok(wait_for(sub { my $f = framework_after($fw_before);
                  $f =~ m{changedump\.xml</loc>.*change="updated"}s && $f =~ m{resourcedump\.xml</loc>} }, 30),
   'framework notifications announce the new Change Dump and Resource Dump')
    or diag(framework_after($fw_before));
ok(scalar(grep { holds($_->{loc}, 'kept') } @rdp), 'the other files are still packaged');
opendir my $dh, "$state/capture/w" or die $!;
my @caps = grep { !/^\./ } readdir $dh;
closedir $dh;
is_deeply([grep { my $f = "$state/capture/w/$_"; system('grep', '-qF', 'OOPS', $f) == 0 } @caps], [],
          'no capture of the file is left');

SKIP: {
    skip "no rs-check at $rs_check", 2 unless $have_check;
    my $m = `$rs_check mirror $B $mirror --set /w/ --dumps 2>&1`;
    ok($base_out =~ /baseline/ && $? == 0 && !-e "$mirror/oops.txt",
       'rs-check mirror --dumps: a destination from before the withdrawal applies it') or diag("$base_out\n$m");
    my $c = `$rs_check crawl $B --verify-dumps --fetch-resources all 2>&1`;
    ok($? == 0 && $c =~ / 0 failed$/m, 'rs-check crawl --verify-dumps: 0 failed') or diag($c);
}

# With httpd stopped: rs-tool removes the packages itself, the next
# watcher builds them again without the file.
put("$D/www/w/late.txt", "LATE secret\n");
ok(wait_for(sub { grep { holds($_->{loc}, 'LATE secret') } dump_packages($cd, 30) }, 60),
   'another file is packaged');
my @late = grep { holds($_, 'LATE') || holds($_, 'late.txt') } urls_of($cd), urls_of($rd);
unlink "$D/www/w/late.txt" or die $!;
$srv->stop;
# The Change List whose package held it, built again as revision 1.
my ($late_id) = map { m{/changedump/[0-9a-f]{8}-(\d+)\.zip$} ? $1 : () } @late;
($rc, $out) = run('withdraw', '-d', $state, 'w', 'late.txt');
ok($rc == 0 && $out =~ /no watcher serves set w now: removed the [1-9]\d* Change Dump and \d+ Resource Dump/,
   'httpd stopped: rs-tool removes the packages itself') or diag($out);
$srv->start_ok('the server starts again');
is_deeply([grep { get($_)->code != 404 } @late], [], 'their URLs answer 404 after the start');
ok($late_id && wait_for(sub { my @p = dump_packages($cd, 30);
                             @p && !grep({ holds($_->{loc}, 'LATE') } @p)
                             && grep({ $_->{loc} =~ m{-$late_id-1\.zip$} } @p) }, 60),
   'the next watcher builds the package again, under a new name, without the file');
ok(wait_for(sub { !glob("$state/withdraw/*.req") }, 30), 'and the request is done');
ok($late_id && grep({ $_->{loc} =~ m{-$late_id-1\.zip$} } dump_packages($cd, 30))
   && !glob("$state/changedumps/w/*-$late_id-2.*"),
   'the request found nothing left to withdraw: the package keeps revision 1');
is_deeply([bad_log_lines($srv->log_text)], [], 'no error or crash in the error log');
