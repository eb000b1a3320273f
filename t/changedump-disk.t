# SPDX-License-Identifier: Apache-2.0
# A full disk and the Change Dump: the packages live on a small tmpfs
# (<statedir>/changedumps); once it is full, building a package fails, the
# failure is logged once as a warning (repeats at debug level),
# changedump.xml keeps listing only complete packages and nothing partial
# is published; when space returns the missing packages are built by
# themselves.  Private server; needs root (mount).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF get doc xpc wait_for wait_ok put);
use Digest::MD5 qw(md5_hex);
use File::Path qw(make_path);

my $srv = private_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
                         . set_conf('cd', 'www/cd', 'ResourceSyncChangeDump on',
                                    'ResourceSyncChangeListPeriod 2s'));
my $mnt = $srv->dir . '/state/changedumps';
make_path($mnt);
if ($> != 0 || system("mount -t tmpfs -o size=1m,mode=1777 tmpfs '$mnt' 2>/dev/null") != 0) {
    plan skip_all => 'cannot mount a tmpfs (needs root)';
}
my $mounted = 1;
END { if ($mounted) { $srv->stop if $srv; system("umount '$mnt'"); } }

plan tests => 12;

$srv->populate(files => { 'www/cd/start.txt' => "start\n" });
$srv->start_ok;
my $B = $srv->base;
my $src = $srv->dir . '/www/cd';
my $cd_url = "$B/resourcesync/cd/changedump.xml";

# The packages changedump.xml lists: [loc, length, md5].
sub packages {
    my $r = get($cd_url);
    return () unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return map { [$x->findvalue('sm:loc', $_), $x->findvalue('rs:md/@length', $_),
                  $x->findvalue('rs:md/@hash', $_) =~ /md5:([0-9a-f]+)/ ? $1 : ''] }
           $x->findnodes('/sm:urlset/sm:url');
}
# Whether every listed package downloads with its listed length and md5.
sub all_complete {
    for my $p (@_) {
        my $r = get($p->[0]);
        return 0 unless $r->code == 200 && length($r->content) == $p->[1]
                        && md5_hex($r->content) eq $p->[2];
    }
    return 1;
}
# Whether some listed package's manifest names the file rel.
sub packaged {
    my ($rel) = @_;
    for my $p (packages()) {
        (my $m = $p->[0]) =~ s/\.zip$/.xml/;
        return 1 if index(get($m)->content, "$B/cd/$rel<") >= 0;
    }
    return 0;
}
sub log_count {
    my ($re) = @_;
    return scalar(() = $srv->log_text =~ /$re/mg);
}

# After the baseline (a file made before it is not a change).
wait_ok(sub { get("$B/resourcesync/cd/resourcelist.xml")->code == 200
              && get($cd_url)->code == 200 }, 60,
        'the baseline is taken (the Resource List and changedump.xml are served)');
put("$src/one.txt", "one\n");
ok(wait_for(sub { packaged('one.txt') }, 60), 'a change is in a Change Dump package')
    or diag(get($cd_url)->code . ' ' . get($cd_url)->content . "\n" . join('', grep { /resourcesync:/ } split /^/, $srv->log_text));

# Fill the tmpfs, then change the set: the next package finds no space.
system("dd if=/dev/zero of='$mnt/filler' bs=64k 2>/dev/null");
my @before = packages();
put("$src/two.txt", "two\n" x 1000);
my $re = qr/no space left to build its Change Dump/;
ok(wait_for(sub { log_count(qr/\[resourcesync:warn\].*$re/) }, 60),
   'a full disk is logged as a warning');
ok(wait_for(sub { log_count(qr/\[resourcesync:debug\].*$re/) >= 2 }, 60),
   'the build is tried again (repeats at debug level)');
is(log_count(qr/\[resourcesync:warn\].*$re/), 1, '... and the warning is logged once');
my @during = packages();
is_deeply(\@during, \@before, 'changedump.xml still lists the packages built before');
ok(all_complete(@during), '... and every one of them downloads complete');
is_deeply([grep { -e "$_" } map { (my $s = $_->[0]) =~ s{.*/}{$mnt/cd/}; $s } @during],
          [map { (my $s = $_->[0]) =~ s{.*/}{$mnt/cd/}; $s } @during], '... from its files on disk');
ok(!packaged('two.txt'), 'no package holds the change made while the disk is full');

# Space returns: the missing package is built without another change.
unlink "$mnt/filler";
ok(wait_for(sub { packaged('two.txt') && all_complete(packages()) }, 60),
   'space again: the missing package is built by itself, complete');
ok(wait_for(sub { log_count(qr/space again for the Change Dump/) }, 10),
   '... and the end of the episode is logged');
