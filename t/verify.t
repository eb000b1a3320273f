# SPDX-License-Identifier: Apache-2.0
# ResourceSyncVerifyInterval: content that changes without an inotify
# event for its listed name is found by the verification pass.  Two cases:
# a file of the set written through a hard link outside the set, and an
# in-tree symbolic link whose target is written through a path outside the
# set (the event, if any, names the target, never the link).  With a short
# interval both are journaled; with "off" they are not.  The rescan
# interval is an hour, so no periodic full scan can find them.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use RSTest qw(set_conf STATE_CONF STATUS_CONF put get wait_for);
use RSTest::Destination;

plan tests => 9;

# A server whose set "v" holds hl.txt (hard link of outside/hl.txt),
# data/t.txt (hard link of outside/t.txt) and link.txt -> data/t.txt.
sub server {
    my ($verify) = @_;
    my $srv = RSTest::private_server(
        conf => STATE_CONF . "ResourceSyncRescanInterval 3600\nResourceSyncVerifyInterval $verify\n"
                . set_conf('v', 'www/v') . STATUS_CONF);
    $srv->populate(files => { 'outside/hl.txt' => "one\n", 'outside/t.txt' => "target one\n",
                              'www/v/plain.txt' => "plain\n" }, dirs => ['www/v/data']);
    my $d = $srv->dir;
    link "$d/outside/hl.txt", "$d/www/v/hl.txt" or die $!;
    link "$d/outside/t.txt", "$d/www/v/data/t.txt" or die $!;
    symlink 'data/t.txt', "$d/www/v/link.txt" or die $!;
    $srv->start_ok("server starts (ResourceSyncVerifyInterval $verify)");
    my $B = $srv->base;
    my $dest = RSTest::Destination->new(base => $B, set => 'v', src => "$d/www/v", root => "$B/v/");
    my $l = $dest->baseline;
    my %n = map { $_->{loc} => 1 } @{ $l->{entries} };
    die "the linked files are not listed"
        unless $n{"$B/v/hl.txt"} && $n{"$B/v/link.txt"} && $n{"$B/v/data/t.txt"};
    return ($srv, $dest);
}

# Rewrite a file in place (same inode), through its path outside the set.
sub rewrite {
    my ($path, $content) = @_;
    open my $fh, '+<', $path or die "$path: $!";
    truncate $fh, 0;
    print $fh $content;
    close $fh or die "$path: $!";
}

sub updated {
    my ($c, $loc, $content) = @_;
    return scalar grep { $_->{loc} eq $loc && $_->{change} eq 'updated'
                         && $_->{hash} eq 'md5:' . md5_hex($content) } @$c;
}

# 1. Every second: both changes are journaled with the new digests.
{
    my ($srv, $dest) = server('1s');
    my ($d, $B) = ($srv->dir, $srv->base);
    rewrite("$d/outside/hl.txt", "two, longer\n");
    rewrite("$d/outside/t.txt", "target two, longer\n");
    my $c = wait_for(sub {
        my $c = $dest->changes or return undef;
        return updated($c, "$B/v/hl.txt", "two, longer\n")
            && updated($c, "$B/v/link.txt", "target two, longer\n") ? $c : undef;
    }, 30);
    ok($c, 'hard link written outside the set: updated with its new digest');
    ok($c && updated($c, "$B/v/data/t.txt", "target two, longer\n"),
       'symlink target written outside the set: the target is updated');
    ok($c && updated($c, "$B/v/link.txt", "target two, longer\n"),
       '... and so is the link');
    ok($c && !grep({ $_->{loc} eq "$B/v/plain.txt" && $_->{change} eq 'updated' } @$c),
       'an unchanged file is not journaled again');
    is_deeply($dest->errors, [], 'no order or validity violation');
    my @bad = grep { /\[resourcesync:(warn|error|crit)/ } split /\n/, $srv->log_text;
    is_deeply(\@bad, [], 'no warning or error in the error log');
    $srv->stop;
}

# 2. off: the same changes are not journaled.  A marker file created 3 s
# after the changes (three intervals of the first case) shows that the
# watcher has journaled what it noticed until then.
{
    my ($srv, $dest) = server('off');
    my ($d, $B) = ($srv->dir, $srv->base);
    rewrite("$d/outside/hl.txt", "two, longer\n");
    rewrite("$d/outside/t.txt", "target two, longer\n");
    sleep 3;
    put("$d/www/v/marker.txt", "m\n");
    my $c = wait_for(sub {
        my $c = $dest->changes or return undef;
        return (grep { $_->{loc} eq "$B/v/marker.txt" } @$c) ? $c : undef;
    }, 30);
    ok($c && !updated($c, "$B/v/hl.txt", "two, longer\n")
       && !updated($c, "$B/v/link.txt", "target two, longer\n"),
       'off: changes without an event for the listed name are not noticed');
    $srv->stop;
}
