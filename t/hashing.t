# SPDX-License-Identifier: Apache-2.0
# Large files are hashed on the hashing lane: they do not hold up the
# first Resource List nor the entries of other changes, the status page
# shows what is being hashed, and a file that changes while it is hashed
# is hashed again.  Files of ResourceSyncLargeFileSize (1 MiB here) or more
# go to the lane; the large file is a sparse file of 4 GiB of zeros, which
# takes seconds to read on any machine (every byte is hashed).  Nothing
# here measures time: each step waits for what it expects, with a
# deadline, and the overtaking is checked by what is listed when.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF put get wait_for fetch_list);
use RSTest::Destination;

plan tests => 19;

my $GiB = 1024 * 1024 * 1024;
# md5 of 4 GiB and of 2 GiB of zero bytes
my %MD5 = (4 * $GiB => 'c9a5a6878d97b48cc965c1e41859f034',
           2 * $GiB => 'a981130cf2b7e09f4686dc273cf7187e');

my $srv = RSTest::private_server(
    conf => STATE_CONF . "ResourceSyncRescanInterval 2\nResourceSyncLargeFileSize 1\n"
            . set_conf('h', 'www/h') . STATUS_CONF);
$srv->populate(files => { 'www/h/small.txt' => "small\n" });
my $d = $srv->dir;
my $H = "$d/www/h";
my $B = $srv->base;
my $BIG = "$B/h/big.bin";
truncate_to("$H/big.bin", 4 * $GiB);
$srv->start_ok;

sub truncate_to {
    my ($path, $size) = @_;
    open my $fh, '>>', $path or die "$path: $!";
    truncate $fh, $size or die "$path: $!";
    close $fh;
}

# The status page's "hashing:" line as { path, size, done, queue }.
sub hashing {
    my $r = get("$B/rs-status?text");
    return undef unless $r->code == 200;
    my ($path, $size, $done, $queue) = $r->content =~ /^hashing: (.+?) size=(\d+) done=(\d+) queue=(\d+)$/m
        or return undef;
    return { path => $path, size => $size, done => $done, queue => $queue };
}
sub hashing_big { my $h = hashing(); $h && $h->{path} eq 'h: big.bin' ? $h : undef }

# 1. First start: the first Resource List does not wait for the large file.
my $list = fetch_list('h', $B);
my %in = map { $_->{loc} => $_ } @{ $list->{entries} };
ok($in{"$B/h/small.txt"}, 'first Resource List: the small file is listed');
ok(!$in{$BIG}, 'first Resource List: published before the large file is hashed');
my $h = wait_for(\&hashing_big, 30);
ok($h, 'status page: the large file is being hashed');
is($h && $h->{size}, 4 * $GiB, 'status page: its size');

# 2. A small change overtakes the hashing of the large file.
my $dest = RSTest::Destination->new(base => $B, set => 'h', src => $H, root => "$B/h/");
$dest->baseline;
put("$H/new.txt", "new\n");
my $ch = wait_for(sub {
    my $c = $dest->changes or return undef;
    return (grep { $_->{loc} eq "$B/h/new.txt" } @$c) ? $c : undef;
}, 30);
ok($ch, 'the new small file is in the open Change List');
ok($ch && !grep({ $_->{loc} eq $BIG } @$ch), '... while the large file is not yet');
my $p = hashing();
ok($p && $p->{done} > 0 && $p->{done} <= 4 * $GiB, 'status page: progress of the read')
    or diag(explain($p));

# 3. The large file arrives, with its digest, in the Change List and the
# next Resource List.
my $big = wait_for(sub {
    my $c = $dest->changes or return undef;
    my ($e) = grep { $_->{loc} eq $BIG } @$c;
    return $e;
}, 180);
ok($big && $big->{change} eq 'created' && $big->{length} == 4 * $GiB
   && $big->{hash} eq "md5:$MD5{4 * $GiB}", 'the large file is created with its digest')
    or diag(explain($big));
my $rl = wait_for(sub {
    my ($e) = grep { $_->{loc} eq $BIG } @{ fetch_list('h', $B)->{entries} };
    return $e;
}, 30);
ok($rl && $rl->{hash} eq "md5:$MD5{4 * $GiB}", 'a later Resource List lists it with its digest');
my $idle = wait_for(sub { my $s = hashing(); $s && $s->{path} eq '-' && $s->{queue} == 0 ? $s : undef }, 10);
ok($idle, 'status page: nothing hashed, nothing queued');

# 4. Changed while it is hashed: hashed again; what is listed is what the
# file holds.
my $seen = scalar @{ $dest->changes };
utime undef, undef, "$H/big.bin";
ok(wait_for(\&hashing_big, 30), 'touched: the large file is hashed again');
# A small change overtakes the re-hashing of the changed large file.
put("$H/while.txt", "while\n");
my $w = wait_for(sub {
    my $c = $dest->changes or return undef;
    return (grep { $_->{loc} eq "$B/h/while.txt" } @$c) ? $c : undef;
}, 30);
ok($w && !grep({ $_->{loc} eq $BIG } @$w[$seen .. $#$w]),
   'a small file created meanwhile is listed before the changed large file');
truncate_to("$H/big.bin", 2 * $GiB);
my $last = wait_for(sub {
    my $c = $dest->changes or return undef;
    my @b = grep { $_->{loc} eq $BIG } @$c[$seen .. $#$c];
    return @b && $b[-1]{length} == 2 * $GiB ? \@b : undef;
}, 180);
ok($last, 'truncated while hashed: the new length is listed') or diag(explain($dest->changes));
ok($last && $last->[-1]{hash} eq "md5:$MD5{2 * $GiB}", '... with the digest of the new content')
    or diag(explain($last));
ok($last && !grep({ ($MD5{$_->{length}} // '') ne ($_->{hash} =~ s/^md5://r) } @$last),
   'every entry of the large file has the digest of its length') or diag(explain($last));

# Small changes still arrive while nothing is hashed.
put("$H/after.txt", "after\n");
ok(wait_for(sub { my $c = $dest->changes; $c && grep { $_->{loc} eq "$B/h/after.txt" } @$c }, 30),
   'small changes go on');

is_deeply($dest->errors, [], 'no order or validity violation in the Change Lists');
my @bad = grep { /\[resourcesync:(warn|error|crit)/ } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no warning or error in the error log');
