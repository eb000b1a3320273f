# SPDX-License-Identifier: Apache-2.0
# kill -9 of the watcher while it writes a dump package: the set holds
# large (sparse) files, so a package takes a second or more to write; the
# test waits until a ".tmp-" package file under construction has grown
# past 8 MB, kills the watcher with SIGKILL, and then, until the
# respawned watcher has published a dump of every file: each version of
# resourcedump.xml lists only packages that download with their listed
# length and hash and that zipfile tests clean, no ".tmp-" file or
# "tmp-" generation survives that build, and the dump's manifests list
# every file.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for ua);
use RSDump qw(dump_packages py_zip_ok bad_log_lines);
use Digest::MD5 ();
use File::Find ();
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use POSIX ();
use Time::HiRes qw(sleep time);
use URI::Escape qw(uri_unescape);

plan tests => 8;

my $MB = 1 << 20;
my @big = map { ["big$_.bin", 250 * $MB + $_] } 1 .. 2;
my %small = map { ("small/f$_.txt" => "small file $_\n") } 1 .. 40;

my $srv = RSTest::private_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\n"
                                         . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1'));
my $root = $srv->dir . '/www/data';
my $dumps = $srv->dir . '/state/dumps/ds';
make_path("$root/small");
RSTest::put("$root/$_", $small{$_}) for keys %small;
for my $b (@big) {
    open my $fh, '+>:raw', "$root/$b->[0]" or die $!;
    truncate $fh, $b->[1] or die $!;
    for my $off (0, int($b->[1] / 2), $b->[1] - 16) {
        sysseek $fh, $off, 0;
        syswrite $fh, sprintf('%-16s', "$b->[0]\@$off");
    }
    close $fh or die $!;
}
$srv->start_ok;
my $B = $srv->base;
my $dump_url = "$B/resourcesync/ds/resourcedump.xml";

# Package files under construction: [path, size].
sub tmp_files {
    my @t;
    return @t unless -d $dumps;
    File::Find::find({ no_chdir => 1, wanted => sub {
        push @t, [$_, -s _ // 0] if m{/\.tmp-[^/]*$} && -f $_;
    } }, $dumps);
    return @t;
}

# Polled every 20 ms (the package takes a few seconds to write).
my $growing;
for (my $deadline = time + 300; !$growing && time < $deadline; sleep 0.02) {
    $growing = grep { $_->[1] > 8 * $MB } tmp_files();
}
my @w = $srv->watchers;
ok($growing && @w == 1, 'a package is being written (a .tmp- file past 8 MB) by one watcher')
    or diag("watchers: @w");
kill 'KILL', @w if $growing && @w;
my $killed_at = time;

# Until a dump of every file is published by the respawned watcher:
# every resourcedump.xml seen lists only good packages.
my $tmp = tempdir(CLEANUP => 1);
my %seen;                       # resourcedump.xml content -> verdict
my @bad;
my %want = map { ("$B/data/$_" => 1) } (keys %small, map { $_->[0] } @big);
sub verify_dump {
    my ($xml) = @_;
    my $x = xpc(doc($xml));
    my %locs;
    for my $u ($x->findnodes('/sm:urlset/sm:url')) {
        my ($loc, $len, $hash) = map { $x->findvalue($_, $u) }
                                 ('sm:loc', 'rs:md/@length', 'rs:md/@hash');
        my $r = ua()->get($loc, ':content_file' => "$tmp/p.zip");
        my $md5 = Digest::MD5->new;
        if (open my $fh, '<:raw', "$tmp/p.zip") { $md5->addfile($fh) }
        unless ($r->code == 200 && -s "$tmp/p.zip" == $len && "md5:" . $md5->hexdigest eq $hash
                && py_zip_ok("$tmp/p.zip")) {
            push @bad, "$loc: " . $r->code . ' ' . (-s "$tmp/p.zip") . " bytes";
        }
        my $m = get($x->findvalue('rs:ln[@rel="contents"]/@href', $u));
        next unless $m->code == 200;
        my $mx = xpc(doc($m->content));
        $locs{$_->textContent} = 1 for $mx->findnodes('/sm:urlset/sm:url/sm:loc');
    }
    unlink "$tmp/p.zip";
    return join("\n", sort keys %locs) eq join("\n", sort keys %want);
}
my $complete = wait_for(sub {
    my $r = get($dump_url);
    return undef unless $r->code == 200;
    $seen{$r->content} //= verify_dump($r->content);
    return $seen{$r->content} && $srv->watcher_pid && !grep({ $_ == $srv->watcher_pid } @w);
}, 600);
ok($complete, 'the respawned watcher publishes a dump of every file');
is_deeply(\@bad, [], 'every package ever listed downloads with its length and hash, zipfile -t clean');
ok(scalar(keys %seen) >= 1, 'resourcedump.xml was checked ' . scalar(keys %seen) . ' time(s)');
is_deeply([map { $_->[0] } tmp_files()], [], 'no .tmp- package file survives');
my @tmpgens = -d $dumps ? grep { -d $_ } glob("$dumps/tmp-*") : ();
is_deeply(\@tmpgens, [], 'no temporary generation directory survives');
like($srv->log_text, qr/watcher \(pid \d+\) died \(exit status or signal 9\); starting a new one/,
     'the log shows the watcher killed and started again');
$srv->stop;
File::Path::remove_tree($root, $srv->dir . '/state');
