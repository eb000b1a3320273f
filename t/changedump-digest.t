# SPDX-License-Identifier: Apache-2.0
# Change Dump captures are named by SHA-256 whatever ResourceSyncHash
# lists: a set that lists MD5 only, given two files whose bytes differ but
# whose MD5 digests are equal (the collision of Wang et al., 2004), keeps
# a capture of each, named by the SHA-256 digest of its bytes, and its
# package holds each file's own bytes (with MD5 names the second file's
# member would be the first file's bytes: the same name, "the same
# content").  A file in the capture directory named by an MD5 digest (as
# an older version named them, or as anyone could plant one) is never
# used for the content that has that MD5.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for wait_ok put);
use RSDump qw(dump_packages save zip_member);
use Digest::MD5 qw(md5_hex);
use Digest::SHA qw(sha256_hex);
use File::Path qw(make_path);
use File::Temp qw(tempdir);

plan tests => 11;

my @pair = map { pack 'H*', $_ }
    'd131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89'
    . '55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b'
    . 'd8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0'
    . 'e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70',
    'd131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89'
    . '55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b'
    . 'd8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0'
    . 'e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70';
my $planted = "the MD5 name of this content holds other bytes\n";
my %files = ('a.bin' => $pair[0], 'b.bin' => $pair[1], 'c.txt' => $planted);

my $srv = started_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
                                 . set_conf('cd', 'www/cd', 'ResourceSyncHash md5',
                                            'ResourceSyncChangeDump on',
                                            'ResourceSyncChangeListPeriod 2s'),
                         dirs => ['www/cd']);
ok(md5_hex($pair[0]) eq md5_hex($pair[1]) && $pair[0] ne $pair[1],
   'the two contents differ and have the same MD5 digest');
my $B = $srv->base;
my $capdir = $srv->dir . '/state/capture/cd';
wait_ok(sub { get("$B/resourcesync/cd/changelist.xml")->code == 200 }, 60,
        'the Change List Index is served (the baseline is taken)');
# A first change makes the capture directory; then a capture named by
# c.txt's MD5 digest, holding other bytes of its length, is put there.
put($srv->dir . '/www/cd/first.txt', "first\n");
wait_ok(sub { -d $capdir }, 30, 'a first change makes the capture directory');
put("$capdir/" . md5_hex($planted), 'X' x length $planted);
chmod 0644, "$capdir/" . md5_hex($planted);
put($srv->dir . "/www/cd/$_", $files{$_}) for sort keys %files;

# The package with the three files, and its members by file.
my $tmp = tempdir(CLEANUP => 1);
my (%member, %hash);
wait_for(sub {
    for my $p (dump_packages("$B/resourcesync/cd/changedump.xml", 30)) {
        my $zip = "$tmp/p.zip";
        save($zip, get($p->{loc})->content);
        my $x = xpc(doc(get($p->{manifest})->content));
        for my $u ($x->findnodes('/sm:urlset/sm:url[rs:md/@change!="deleted"]')) {
            (my $rel = $x->findvalue('sm:loc', $u)) =~ s{^\Q$B\E/cd/}{};
            $member{$rel} = zip_member($zip, substr($x->findvalue('rs:md/@path', $u), 1));
            $hash{$rel} = $x->findvalue('rs:md/@hash', $u);
        }
    }
    keys(%member) == 4;
}, 90);    # what came is the next check
is_deeply([sort keys %member], [sort 'first.txt', keys %files], 'packages hold the files');
is($hash{'a.bin'}, $hash{'b.bin'}, 'their manifest entries list the same MD5 digest');
ok(defined $member{'a.bin'} && $member{'a.bin'} eq $pair[0], 'a.bin: the member holds its own bytes');
ok(defined $member{'b.bin'} && $member{'b.bin'} eq $pair[1], 'b.bin: the member holds its own bytes');
ok(defined $member{'c.txt'} && $member{'c.txt'} eq $planted,
   'c.txt: the member holds its bytes, not those of a file named by their MD5 digest');

# Every capture is named by the SHA-256 digest of its bytes; the three
# contents each have one.
opendir my $dh, $capdir or die "$capdir: $!";
my @caps = grep { !/^\./ && -f "$capdir/$_" } readdir $dh;
closedir $dh;
my %cap = map { $_ => do { local $/; open my $f, '<:raw', "$capdir/$_" or die $!; <$f> } } @caps;
is_deeply([sort grep { $_ ne md5_hex($planted) && sha256_hex($cap{$_}) ne $_ } @caps], [],
          'every capture (but the planted file) is named by the SHA-256 digest of its bytes');
is_deeply([sort grep { exists $cap{sha256_hex($_)} } values %files], [sort values %files],
          'each of the three contents has its capture');
