# SPDX-License-Identifier: Apache-2.0
# A full disk and the Resource Dump: the dumps live on a small tmpfs
# (<statedir>/dumps); once it is full, a build fails, the failure is
# logged once as a warning (repeats at debug level), the previous dump
# keeps serving and nothing partial is published; when space returns the
# build resumes by itself.  The status page shows the bytes the set's
# dumps use, shared packages counted once.  Private server; needs root
# (mount).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF STATUS_CONF get doc xpc wait_for put);
use File::Path qw(make_path);

my $srv = private_server(conf => STATE_CONF . STATUS_CONF
                         . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
                         . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1',
                                    'ResourceSyncDumpMaxEntries 4'));
my $mnt = $srv->dir . '/state/dumps';
make_path($mnt);
if ($> != 0 || system("mount -t tmpfs -o size=2m,mode=1777 tmpfs '$mnt' 2>/dev/null") != 0) {
    plan skip_all => 'cannot mount a tmpfs (needs root)';
}
my $mounted = 1;
END { if ($mounted) { $srv->stop if $srv; system("umount '$mnt'"); } }

plan tests => 12;

$srv->populate(files => { map { ("www/data/f$_.txt", "file $_\n" x 50) } 1 .. 12 });
$srv->start_ok;
my $B = $srv->base;
my $dump_url = "$B/resourcesync/ds/resourcedump.xml";

my $first = wait_for(sub { my $r = get($dump_url); $r->code == 200 ? $r->content : undef }, 60);
ok($first, 'the first Resource Dump is published');

# Bytes of every file below the set's dump directory, each inode once.
sub disk_bytes {
    my (%seen, $sum);
    $sum = 0;
    for my $f (glob("$mnt/ds/*/*")) {
        my @st = lstat $f or next;
        next unless -f _;
        $sum += $st[7] unless $seen{"$st[0]:$st[1]"}++;
    }
    return $sum;
}
sub status_bytes {
    my ($line) = get("$B/rs-status?text")->content =~ /^(set-resource-dump: ds .*)$/m;
    return $line && $line =~ /disk-bytes=(\d+)/ ? $1 : -1;
}
my $agree = wait_for(sub { my $s = status_bytes(); $s > 0 && $s == disk_bytes() ? $s : undef }, 30);
ok($agree, 'status page: disk-bytes of the set\'s dumps, linked packages counted once')
    or diag 'status ' . status_bytes() . ' disk ' . disk_bytes();

# Fill the tmpfs, then change the set: the next build finds no space.
system("dd if=/dev/zero of='$mnt/filler' bs=64k 2>/dev/null");
put($srv->dir . '/www/data/big.bin', 'b' x 300_000);
sub log_count {
    my ($re) = @_;
    return scalar(() = $srv->log_text =~ /$re/mg);
}
my $re = qr/no space left to build the Resource Dump/;
ok(wait_for(sub { log_count(qr/\[resourcesync:warn\].*$re/) }, 60),
   'a full disk is logged as a warning');
ok(wait_for(sub { log_count(qr/\[resourcesync:debug\].*$re/) >= 2 }, 60),
   'the build is tried again (repeats at debug level)');
is(log_count(qr/\[resourcesync:warn\].*$re/), 1, '... and the warning is logged once');
my $r = get($dump_url);
is($r->code, 200, 'the previous dump keeps serving');
is($r->content, $first, '... unchanged: nothing partial is published');
my @codes = map { get($_->textContent)->code } xpc(doc($first))->findnodes('//sm:url/sm:loc');
is_deeply(\@codes, [(200) x @codes], '... and its packages are served');
is_deeply([grep { !-f "$_/resourcedump.xml" } grep { m{/\d+$} } glob("$mnt/ds/*")], [],
          'every generation directory on disk is complete');

# Space returns: the build resumes without another change.
unlink "$mnt/filler";
my $next = wait_for(sub {
    my $r = get($dump_url);
    return $r->code == 200 && $r->content ne $first ? $r->content : undef;
}, 60);
ok($next, 'space again: a new dump is published by itself');
ok(wait_for(sub { log_count(qr/space again for the Resource Dump/) }, 10),
   '... and the end of the episode is logged');
