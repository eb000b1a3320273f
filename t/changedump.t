# SPDX-License-Identifier: Apache-2.0
# Change Dumps (ResourceSyncChangeDump): one ZIP package per closed Change
# List, with every created/updated version's bytes as the journal hashed
# them, listed in changedump.xml.  A destination rebuilds the tree from the
# Resource Dump alone, then applies Change Dump packages only (creates,
# updates, a file updated three times in a period, deletions, a rename, a
# removed directory) and equals the tree: before and after a graceful
# restart, a hard restart, a stop/start, and kill -9 of the watcher while
# a package is built.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF get req doc xpc validate wait_for wait_ok put iso2epoch
              strong_etag);
use Digest::MD5 qw(md5_hex);
use Digest::SHA qw(sha256_hex);
use Encode ();
use File::Find ();
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use Time::HiRes qw(sleep time);
use URI::Escape qw(uri_unescape);

plan tests => 39;

my $srv = started_server(
    conf => STATE_CONF . STATUS_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
            . set_conf('cd', 'www/cd', 'ResourceSyncResourceDump 1', 'ResourceSyncChangeDump on',
                       'ResourceSyncChangeListPeriod 2s')
            . set_conf('ret', 'www/ret', 'ResourceSyncChangeDump on', 'ResourceSyncChangeListPeriod 2s',
                       'ResourceSyncJournalRetention 6s'),
    files => { 'www/cd/keep.txt' => "kept\n", 'www/cd/old/one.txt' => "one\n",
               'www/cd/old/two.txt' => "two\n", 'www/cd/moved.txt' => "move me\n",
               'www/cd/x.txt' => "x0\n", 'www/ret/r.txt' => "r0\n" });
my $B = $srv->base;
my $src = $srv->dir . '/www/cd';
my $cdir = $srv->dir . '/state/changedumps/cd';
my $cd_url = "$B/resourcesync/cd/changedump.xml";
my $tmp = tempdir(CLEANUP => 1);
my $dest = "$tmp/dest";
my @problems;           # every package or document that failed a check
my %applied;            # package URL => 1
my %versions;           # relative path => [bytes of each created/updated member, in order]
my $n = 0;

my $cap = xpc(doc(get("$B/resourcesync/cd/capabilitylist.xml")->content));
is($cap->findvalue('/sm:urlset/sm:url[rs:md/@capability="changedump"]/sm:loc'), $cd_url,
   'Capability List lists the Change Dump');

sub save {
    my ($path, $bytes) = @_;
    make_path($1) if $path =~ m{^(.*)/};
    open my $o, '>:raw', $path or die "$path: $!";
    print $o $bytes;
    close $o;
}

sub slurp {
    my ($path) = @_;
    open my $i, '<:raw', $path or return undef;
    local $/;
    my $d = <$i>;
    return $d // '';
}

# Download a package, check it with zipfile and unzip, extract it; returns
# (directory, manifest bytes, first member name) or () after noting why.
sub open_package {
    my ($url) = @_;
    my $r = get($url);
    if ($r->code != 200) { push @problems, "$url: " . $r->code; return (); }
    my $k = ++$n;
    save("$tmp/p$k.zip", $r->content);
    if (system('python3', '-m', 'zipfile', '-t', "$tmp/p$k.zip") >> 8) { push @problems, "$url: zipfile -t"; return (); }
    if (system("unzip -tqq $tmp/p$k.zip >/dev/null 2>&1") >> 8) { push @problems, "$url: unzip -t"; return (); }
    my $first = `python3 -c 'import sys,zipfile; print(zipfile.ZipFile(sys.argv[1]).namelist()[0])' $tmp/p$k.zip`;
    chomp $first;
    system('python3', '-c', 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])',
           "$tmp/p$k.zip", "$tmp/p$k") == 0 or do { push @problems, "$url: extract"; return (); };
    return ("$tmp/p$k", slurp("$tmp/p$k/manifest.xml"), $first, $r);
}

# The baseline: the Resource Dump alone.
my $rd = wait_for(sub { my $r = get("$B/resourcesync/cd/resourcedump.xml"); $r->code == 200 ? $r : undef }, 60);
ok($rd, 'resourcedump.xml is built');
my $rx = xpc(doc($rd->content));
my $since = iso2epoch($rx->findvalue('/sm:urlset/rs:md/@at'));
for my $u ($rx->findnodes('/sm:urlset/sm:url')) {
    my ($dir, $man) = open_package($rx->findvalue('sm:loc', $u));
    next unless $dir;
    my $mx = xpc(doc($man));
    for my $e ($mx->findnodes('/sm:urlset/sm:url')) {
        my $rel = uri_unescape(substr($mx->findvalue('sm:loc', $e), length("$B/cd/")));
        save("$dest/$rel", slurp($dir . Encode::encode('UTF-8', $mx->findvalue('rs:md/@path', $e))));
    }
}

# The problems found so far, as diagnostics and in
# t/logs/changedump-problems.txt (kept when a run fails).
sub note_problems {
    diag(join "\n", @problems);
    if (open my $o, '>>', RSTest::t_dir() . '/logs/changedump-problems.txt') { print $o map { "$_\n" } @problems; }
    return 0;
}

# Apply every package of changedump.xml not applied yet, oldest first,
# with the changes whose datetime is not before the dump's `at`.  Each
# package and manifest is checked; a listed package that fails is a
# problem (never a partial one).
sub apply_changes {
    my $r = get($cd_url);
    return 0 unless $r->code == 200;
    if (my $e = validate($r->content)) { push @problems, "changedump.xml: $e"; }
    my $x = xpc(doc($r->content));
    push @problems, 'changedump.xml capability' unless $x->findvalue('/sm:urlset/rs:md/@capability') eq 'changedump';
    push @problems, 'changedump.xml has until' if $x->findvalue('/sm:urlset/rs:md/@until') ne '';
    my $prev_until = '';
    for my $u ($x->findnodes('/sm:urlset/sm:url')) {
        my $loc = $x->findvalue('sm:loc', $u);
        my $from = $x->findvalue('rs:md/@from', $u);
        push @problems, "$loc: from $from before the previous until $prev_until"
            if $prev_until ne '' && iso2epoch($from) < iso2epoch($prev_until);
        $prev_until = $x->findvalue('rs:md/@until', $u);
        next if $applied{$loc};
        my ($dir, $man, $first, $pr) = open_package($loc);
        return 0 unless $dir;
        push @problems, "$loc: first member $first" unless $first eq 'manifest.xml';
        push @problems, "$loc: length" unless length($pr->content) == $x->findvalue('rs:md/@length', $u);
        push @problems, "$loc: hash" unless $x->findvalue('rs:md/@hash', $u) eq 'md5:' . md5_hex($pr->content);
        push @problems, "$loc: ETag" unless strong_etag($pr);
        my $copy = get($x->findvalue('rs:ln[@rel="contents"]/@href', $u))->content;
        push @problems, "$loc: manifest copy differs" unless $copy eq $man;
        if (my $e = validate($man)) { push @problems, "$loc manifest: $e"; }
        my $mx = xpc(doc($man));
        push @problems, "$loc: manifest capability"
            unless $mx->findvalue('/sm:urlset/rs:md/@capability') eq 'changedump-manifest';
        push @problems, "$loc: manifest from/until"
            unless $mx->findvalue('/sm:urlset/rs:md/@from') eq $from
                && $mx->findvalue('/sm:urlset/rs:md/@until') eq $prev_until;
        push @problems, "$loc: manifest rs:ln up is not the Capability List"
            unless $mx->findvalue('/sm:urlset/rs:ln[@rel="up"]/@href') eq "$B/resourcesync/cd/capabilitylist.xml";
        my $last = '';
        for my $e ($mx->findnodes('/sm:urlset/sm:url')) {
            my $rel = uri_unescape(substr($mx->findvalue('sm:loc', $e), length("$B/cd/")));
            my $change = $mx->findvalue('rs:md/@change', $e);
            my $dt = $mx->findvalue('rs:md/@datetime', $e);
            # As times: "...25.562Z" (trailing zeros dropped) is before "...25.562131Z".
            push @problems, "$loc: $dt not after $last"
                if $last ne '' && iso2epoch($dt) <= iso2epoch($last);
            $last = $dt;
            if ($change eq 'deleted') {
                push @problems, "$loc: deletion with a path" if $mx->findvalue('rs:md/@path', $e) ne '';
                next if iso2epoch($dt) < $since;
                unlink "$dest/$rel";
                my $p = $rel;
                while ($p =~ s{/[^/]+$}{}) { rmdir "$dest/$p"; }
                next;
            }
            my $bytes = slurp($dir . Encode::encode('UTF-8', $mx->findvalue('rs:md/@path', $e)));
            push @problems, "$loc: $rel member length"
                unless defined $bytes && length($bytes) == $mx->findvalue('rs:md/@length', $e);
            my $want = 'md5:' . md5_hex($bytes // '');
            push @problems, "$loc: $rel member hash"
                unless defined $bytes && index($mx->findvalue('rs:md/@hash', $e), $want) == 0;
            push @{ $versions{$rel} }, $bytes;
            save("$dest/$rel", $bytes) if iso2epoch($dt) >= $since;
        }
        $applied{$loc} = 1;
    }
    return 1;
}

sub tree_of {
    my ($root) = @_;
    my %t;
    File::Find::find({ no_chdir => 1, wanted => sub {
        $t{substr($_, length($root) + 1)} = -f $_ ? md5_hex(slurp($_)) : 'dir' if $_ ne $root;
    } }, $root) if -d $root;
    return \%t;
}

sub same_tree {
    my $a = tree_of($src);
    my $b = tree_of($dest);
    return join("\n", map { "$_" } sort grep { ($a->{$_} // '') ne ($b->{$_} // '') } keys %$a, keys %$b);
}

# Apply packages until the destination equals the source.
sub sync_equal {
    my ($timeout) = @_;
    my $diff;
    wait_for(sub { apply_changes(); $diff = same_tree(); $diff eq '' }, $timeout);
    return $diff;
}

is(same_tree(), '', 'the tree rebuilt from the Resource Dump equals the tree');

# A period of changes: x.txt updated three times (pauses longer than the
# settling delay, so each version is journaled), a file created and
# deleted, a rename, a directory removed.
put("$src/x.txt", "x1 first\n"); sleep 1.3;
put("$src/x.txt", "x2 second!\n"); sleep 1.3;
put("$src/x.txt", "x3 third!!\n");
put("$src/gone.txt", "recorded, then deleted\n"); sleep 1.3;
unlink "$src/gone.txt";
rename "$src/moved.txt", "$src/new name.txt";
remove_tree("$src/old");
make_path("$src/sub/deep");
put("$src/sub/deep/new.txt", "new\n");
is(sync_equal(60), '', 'after creates, updates, a deletion, a rename and a removed directory: equal');
is_deeply($versions{'x.txt'}, ["x1 first\n", "x2 second!\n", "x3 third!!\n"],
          'x.txt updated three times: three members with the three versions\' bytes');
# A package built after the deletion holds no version of gone.txt
# (t/changedump-withheld.t); one built before it, its recorded bytes.
is_deeply([grep { $_ ne "recorded, then deleted\n" } @{ $versions{'gone.txt'} || [] }], [],
          'a file deleted after its change: a package has its recorded bytes or none');
is(scalar(@problems), 0, 'every package and manifest checks out') or note_problems();

# Unknown names: 404.
my $hist = (keys %applied)[0] =~ m{/changedump/([0-9a-f]{8})-} ? $1 : 'none';
my @bad = ("changedump/$hist-0.zip", "changedump/$hist-99999.zip", "changedump/$hist-1.tar",
           "changedump/00000000-1.zip", "changedump/$hist-1.zip/../x",
           "changedump/$hist-12345678901234567890.zip", "changedump/", "changedump.zip");
is_deeply([map { get("$B/resourcesync/cd/$_")->code } @bad], [(404) x @bad],
          'unknown Change Dump names: 404');
my ($some) = sort keys %applied;
my $pr = get($some);
my $rr = req('GET', $some, Range => 'bytes=4-19');
is($rr->code, 206, 'Range inside a package: 206');
is($rr->content, substr($pr->content, 4, 16), 'Range: the bytes asked for');
is(req('HEAD', $some)->header('Content-Length'), length $pr->content, 'HEAD: Content-Length');
is(req('GET', $some, 'If-None-Match' => $pr->header('ETag'))->code, 304, 'If-None-Match: 304');
like($pr->header('Cache-Control') // '', qr/immutable/, 'package: long Cache-Control');
like(get("$B/rs-status?text")->content, qr/^set-changedump: cd packages-bytes=[1-9]\d* captured-bytes=[1-9]\d*$/m,
     'status page: disk use of packages and captures');

# A file changed again after its list closed keeps its recorded bytes in
# the earlier package: the package is immutable.
my $before = get($some)->content;
put("$src/x.txt", "x4 after\n");
is(sync_equal(60), '', 'a later change: equal');
is(get($some)->content, $before, 'an earlier package keeps its bytes after the file changed');

# Restarts: graceful, hard, stop/start; changes after each.
my %round = (graceful => sub { $srv->graceful }, hard => sub { $srv->signal('HUP') },
             'stop/start' => sub { $srv->stop; $srv->start });
for my $kind ('graceful', 'hard', 'stop/start') {
    my $old = $srv->watcher_pid // 0;
    $round{$kind}->();
    # Served from disk at once, before the new watcher has done anything.
    # A connection taken by a child that the restart then stopped is the
    # client's own error (LWP's internal response): asked again.
    my $r = get($cd_url);
    for (my $i = 0; $i < 50 && ($r->header('Client-Warning') // '') eq 'Internal response'; $i++) {
        select(undef, undef, undef, 0.1);
        $r = get($cd_url);
    }
    is($r->code, 200, "$kind restart: changedump.xml answers 200 at once");
    ok(wait_for(sub { my $w = $srv->watcher_pid; $w && $w != $old }, 30), "$kind restart: a new watcher");
    (my $tag = $kind) =~ tr{/}{-};
    put("$src/after-$tag.txt", "made after the $kind restart\n");
    put("$src/x.txt", "x after $kind\n");
    is(sync_equal(60), '', "after the $kind restart: equal");
    is(scalar(@problems), 0, "after the $kind restart: every package checks out")
        or note_problems();
}

# Retention: a package goes with its Change List.
my $ret_url = "$B/resourcesync/ret/changedump.xml";
sub ret_packages {
    my $r = get($ret_url);
    return () unless $r->code == 200;
    return map { $_->textContent } xpc(doc($r->content))->findnodes('/sm:urlset/sm:url/sm:loc');
}
wait_ok(sub { get($ret_url)->code == 200 }, 30, 'short retention: changedump.xml is served');
put($srv->dir . '/www/ret/r.txt', "r1\n");
my ($ret_pkg) = wait_for(sub { my @p = ret_packages(); @p ? \@p : undef }, 30) ? ret_packages() : ();
ok($ret_pkg && get($ret_pkg)->code == 200, 'short retention: a package is listed and served');
ok(wait_for(sub { !grep { $_ eq ($ret_pkg // '') } ret_packages() }, 40)
   && get($ret_pkg // "$B/none")->code == 404,
   'when its Change List leaves retention, the package is unlisted and gone (404)');

# kill -9 of the watcher while a package is built: a large change makes
# the build long enough to be caught; no partial package is ever listed,
# and the package appears after the watcher restarts.
put("$src/big.bin", 'b' x (96 << 20));
my $caught = 0;
my $w = $srv->watcher_pid;
my $deadline = time + 30;
while (time < $deadline) {
    opendir my $dh, $cdir or last;
    if (grep { /^\.tmp-/ } readdir $dh) {
        kill 'KILL', $w;
        $caught = 1;
        last;
    }
    sleep 0.005;
}
kill 'KILL', $w unless $caught;
note($caught ? 'watcher killed while a package was being built'
             : 'the build was not caught in progress; watcher killed after it');
ok(wait_for(sub { my $n = $srv->watcher_pid; $n && $n != $w }, 60), 'kill -9: a new watcher');
is(sync_equal(90), '', 'after kill -9 during a package build: equal');
is(scalar(@problems), 0, 'after kill -9: no partial or corrupt package was listed')
    or diag(join "\n", @problems);
is(scalar(grep { defined && length == (96 << 20) } @{ $versions{'big.bin'} || [] }), 1,
   'the large version is in a package built after the restart');
opendir my $dh, $cdir or die $!;
my @left = grep { /^\.tmp-/ } readdir $dh;
closedir $dh;
is_deeply(\@left, [], 'no temporary files left in the Change Dump directory');

# The captures hold each retained version once.
opendir $dh, $srv->dir . '/state/capture/cd' or die $!;
my @caps = grep { !/^\./ } readdir $dh;
closedir $dh;
ok(scalar(grep { $_ eq sha256_hex("x2 second!\n") } @caps) == 1,
   'a captured version is named by its SHA-256 digest (the set lists MD5)');

is_deeply([grep { /:(warn|error)\].*Change Dump/ } split /\n/, $srv->log_text], [],
          'no Change Dump warnings or errors in the log');
