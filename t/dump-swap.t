# SPDX-License-Identifier: Apache-2.0
# The dump builder reads only the files the inventory lists: a directory
# of the set swapped for a symbolic link to a directory outside the set
# after the scan (that directory holding a secret file of the same name,
# size and mtime as the listed one), a listed file swapped for a link to
# the secret, and a listed file swapped for a FIFO never put the secret in
# a package (nor hang the build); each build fails as for a file changed
# while read, and once the tree is as scanned again the dump holds the
# listed file.
#
# The window between the scan and the build is made exact with the engine
# commands of rs-tool, which run the module's scanner and dump builder on
# a store without httpd: "rs-tool scan", then the swap, then "rs-tool
# dump".  (In the module the same builder runs as a background job while
# the watcher follows the tree, so the time between a scan and a build
# cannot be held open from outside; t/unit/test_dump.c also swaps
# while a package is being written.)
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use POSIX qw(mkfifo);
use RSTest qw(put);

plan tests => 13;

my $tool = dirname(RSTest::Server::module_path()) . '/rs-tool';
my $t = tempdir(CLEANUP => 1);
my ($root, $outside, $db, $url) = ("$t/root", "$t/outside", "$t/state.db", 'http://example.org/s/');
make_path("$root/sub", $outside);
put("$root/a.txt", "alpha\n");
put("$root/sub/report.txt", "public report\n");
put("$outside/report.txt", "SECRET REPORT\n");
my @st = stat "$root/sub/report.txt";
utime $st[8], $st[9], "$outside/report.txt" or die $!;
# Whole seconds would do for the old builder's size and mtime check; the
# nanoseconds are copied too, so only the file's identity tells them apart.
system('touch', '-r', "$root/sub/report.txt", "$outside/report.txt") == 0 or die;

# run(@args) -> (exit status, stdout and stderr), killed after 20 s.
sub run {
    my $out = `timeout 20 $tool @{[ map { quotemeta } @_ ]} 2>&1`;
    return ($? >> 8, $out);
}

# Whether any file below dir holds the bytes s.
sub holds { my ($dir, $s) = @_; system('grep', '-rqaF', '--', $s, $dir) == 0 }

my ($rc, $out) = run('scan', $db, 's', $root);
is($rc, 0, 'rs-tool scan lists the tree') or diag($out);

sub dump_to {
    my ($name) = @_;
    make_path("$t/$name");
    return run('dump', $db, 's', $root, "$t/$name", $url);
}

# A directory swapped for a link to a directory outside the set.
rename "$root/sub", "$t/sub.moved" or die $!;
symlink $outside, "$root/sub" or die $!;
($rc, $out) = dump_to('d1');
is($rc, 1, 'a directory swapped for a link: the dump fails') or diag($out);
like($out, qr{sub/report\.txt: not the file listed}, '... naming the file that is not the one listed');
ok(!holds("$t/d1", 'SECRET'), '... and no package holds the secret');
unlink "$root/sub" or die $!;
rename "$t/sub.moved", "$root/sub" or die $!;

# The listed file swapped for a link to the secret.
rename "$root/sub/report.txt", "$t/report.moved" or die $!;
symlink "$outside/report.txt", "$root/sub/report.txt" or die $!;
($rc, $out) = dump_to('d2');
is($rc, 1, 'a file swapped for a link out of the set: the dump fails') or diag($out);
ok(!holds("$t/d2", 'SECRET'), '... and no package holds the secret');
unlink "$root/sub/report.txt" or die $!;

# The listed file swapped for a FIFO: refused, not waited on.
mkfifo("$root/sub/report.txt", 0644) or die $!;
($rc, $out) = dump_to('d3');
is($rc, 1, 'a file swapped for a FIFO: the dump fails at once (not killed by the timeout)')
    or diag($out);
unlink "$root/sub/report.txt" or die $!;

# A file moved in by rename, with the listed file's name, size and mtime
# (another inode): not the file listed either.
rename "$outside/report.txt", "$root/sub/report.txt" or die $!;
($rc, $out) = dump_to('d4');
is($rc, 1, 'another file of the same name, size and mtime: the dump fails') or diag($out);
ok(!holds("$t/d4", 'SECRET'), '... and no package holds it');
rename "$root/sub/report.txt", "$outside/report.txt" or die $!;
rename "$t/report.moved", "$root/sub/report.txt" or die $!;

# As scanned: the dump holds both listed files.
($rc, $out) = dump_to('d5');
is($rc, 0, 'the tree as scanned: the dump is written') or diag($out);
ok(holds("$t/d5", 'public report') && holds("$t/d5", 'alpha'), '... with the listed files');
ok(!holds("$t/d5", 'SECRET'), '... and never the secret');
my @zips = glob "$t/d5/*.zip";
is(scalar(grep { system('unzip', '-tqq', $_) == 0 } @zips), scalar(@zips), 'its packages test clean');
