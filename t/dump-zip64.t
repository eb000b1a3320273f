# SPDX-License-Identifier: Apache-2.0
# ZIP64 by size: a set holding a file over 4 GiB (sparse, with marked
# regions around the 4 GiB boundary and at its end) gets a package that
# Python's zipfile opens over HTTP (every read a Range request), whose
# member has the file's length, and whose bytes at the marked regions,
# fetched with Range requests past 4 GiB into the package, are the
# file's.  The package is written for real (4 GiB to the state
# directory), so the test is skipped when that file system has less than
# 10 GiB free.  ZIP64 by member count is in the rs_zip unit tests
# (zip64_many_members): packages stay below 65,536 members here.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc t_dir);
use RSDump qw(dump_packages bad_log_lines);
use Digest::MD5 qw(md5_hex);
use File::Path qw(make_path);

my $GIB = 1 << 30;
my $SIZE = 4 * $GIB + 4097;

my ($bavail) = `stat -f -c '%a %S' '${\ t_dir()}/logs'` =~ /^(\d+) (\d+)/
    ? ($1 * $2) : (0);
# Four GiB are written and read back: once per suite is enough.  The
# AddressSanitizer run has nothing to add here (the same code paths run on
# small packages in every other dump test).
if ($ENV{RS_ASAN}) {
    plan skip_all => 'the 4 GiB package is built in the normal run only';
}
if ($bavail < 10 * $GIB) {
    plan skip_all => sprintf('the state directory\'s file system has %.1f GiB free, under 10 GiB',
                             $bavail / $GIB);
}
plan tests => 10;

# The marked regions: [offset, bytes].
my @marks = ([0, "head of the big file\n"],
             [4 * $GIB - 700, join('', map { chr(($_ * 13 + 5) % 256) } 1 .. 1400)],
             [$SIZE - 33, "the last 33 bytes of the big file"]);
my $srv = RSTest::private_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\n"
                                         . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1'));
my $root = $srv->dir . '/www/data';
make_path($root);
RSTest::put("$root/small.txt", "small\n");
open my $fh, '+>:raw', "$root/big.bin" or die $!;
truncate $fh, $SIZE or die "truncate: $!";
for my $m (@marks) {
    sysseek $fh, $m->[0], 0 or die $!;
    syswrite $fh, $m->[1] or die $!;
}
close $fh or die $!;
$srv->start_ok;
my $B = $srv->base;

# The big file is hashed on the hashing lane: a first dump may come
# without it; the next one holds it.
my @pkgs;
my $big = RSTest::wait_for(sub {
    @pkgs = dump_packages("$B/resourcesync/ds/resourcedump.xml", 900);
    return (grep { $_->{length} > 4 * $GIB } @pkgs)[0];
}, 900);
ok($big, 'a package over 4 GiB is listed') or diag(join ' ', map { "$_->{loc}=$_->{length}" } @pkgs);
$big //= { loc => "$B/none", manifest => "$B/none", length => 0 };
my $h = RSTest::head($big->{loc});
is($h->header('Content-Length'), $big->{length}, 'HEAD: Content-Length over 4 GiB as listed');

# The manifest entry of the big file.
my $mx = xpc(doc(get($big->{manifest})->content));
my ($e) = grep { $mx->findvalue('sm:loc', $_) =~ m{/big\.bin$} } $mx->findnodes('/sm:urlset/sm:url');
is($e ? $mx->findvalue('rs:md/@length', $e) : '', $SIZE, 'manifest: the big file\'s length');
my $member = $e ? substr($mx->findvalue('rs:md/@path', $e), 1) : 'resources/big.bin';

# Python's zipfile on the package over HTTP: the member list, the
# member's size and ZIP64 fields, and each marked region read by Range.
my $py = <<'PY';
import sys, io, zipfile, struct, hashlib, urllib.request
url, name = sys.argv[1], sys.argv[2]
regions = [tuple(map(int, a.split(':'))) for a in sys.argv[3:]]
def get(a, b):
    r = urllib.request.urlopen(urllib.request.Request(url, headers={'Range': 'bytes=%d-%d' % (a, b - 1)}))
    assert r.status == 206, r.status
    d = r.read()
    assert len(d) == b - a, (len(d), b - a)
    return d
class RangeFile(io.RawIOBase):
    def __init__(self):
        self.pos = 0
        self.size = int(urllib.request.urlopen(urllib.request.Request(url, method='HEAD')).headers['Content-Length'])
    def seekable(self): return True
    def readable(self): return True
    def tell(self): return self.pos
    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos
    def readinto(self, b):
        n = min(len(b), self.size - self.pos)
        if n <= 0: return 0
        b[:n] = get(self.pos, self.pos + n)
        self.pos += n
        return n
z = zipfile.ZipFile(io.BufferedReader(RangeFile(), 1 << 16))
names = z.namelist()
i = z.getinfo(name)
lh = get(i.header_offset, i.header_offset + 30)
assert lh[:4] == b'PK\x03\x04'
nlen, elen = struct.unpack('<HH', lh[26:30])
data = i.header_offset + 30 + nlen + elen
print('first', names[0])
print('has', int(name in names))
print('size', i.file_size, i.compress_size, i.compress_type)
print('offset_over_4g', int(data + i.file_size > 1 << 32))
for off, ln in regions:
    print('region', off, hashlib.md5(get(data + off, data + off + ln)).hexdigest())
PY
open my $pyh, '-|', 'python3', '-c', $py, $big->{loc}, $member,
    map { "$_->[0]:" . length($_->[1]) } @marks or die "python3: $!";
my @out = <$pyh>;
close $pyh;
chomp @out;
my %o = map { /^(\w+) (.*)$/ ? ($1 => $2) : ('junk' => $_) } grep { !/^region/ } @out;
is($o{first}, 'manifest.xml', 'zipfile opens the package: manifest.xml first') or diag(join "\n", @out);
is($o{has}, 1, 'zipfile: the package has the member the manifest names');
is($o{size}, "$SIZE $SIZE 0", 'zipfile: the member is stored with the file\'s length');
is($o{offset_over_4g}, 1, 'the member\'s bytes end past 4 GiB into the package');
is_deeply([grep { /^region/ } @out],
          [map { "region $_->[0] " . md5_hex($_->[1]) } @marks],
          'the marked regions, fetched by Range from the package, are the file\'s bytes');
is_deeply([bad_log_lines($srv->log_text)], [], 'no error or crash in the error log');
$srv->stop;
# The package and the sparse file are large: do not leave them behind.
File::Path::remove_tree($root, $srv->dir . '/state');
