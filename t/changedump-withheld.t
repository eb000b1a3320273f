# SPDX-License-Identifier: Apache-2.0
# A file captured for the Change Dump and then withdrawn from the listing
# leaves every package built afterwards: one set per way a file stops
# being listed -- denied by an .htaccess inside the set, denied by a
# server-level <Files> section followed by a graceful restart, excluded by
# a ResourceSyncExclude pattern added with that restart, deleted -- and
# one whose file is denied by an access file above the set's root (the
# dump builders ask httpd again when they build, whether or not the
# watcher journaled the denial).  In each, the secret file and a public
# one are created and captured; then the secret is withdrawn and the list
# closes (ResourceSyncMaxEntries 3); the package built after that holds no
# byte of the secret and no created/updated entry for it (its created
# record is written as a deletion at its datetime), and the secret's
# capture is dropped as soon as the deletion is journaled, not kept for
# the journal's retention.  A Resource Dump built after the denial above
# the root does not hold the secret either.  A destination that took its
# baseline from the Resource Dump before the denials applies every
# Change Dump package and then the Change Lists (rs-check mirror --dumps)
# without a failure, and rs-check crawl --verify-dumps passes.  Private
# server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for wait_ok put changes_of);
use RSDump qw(dump_packages save zip_names py_zip_ok bad_log_lines);
use File::Temp qw(tempdir);

my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";
my @sets = qw(hta files excl del above);
my %dir = (hta => 'www/hta', files => 'www/files', excl => 'www/excl', del => 'www/del',
           above => 'www/above/set');
my %secret = (hta => 'sub/secret.txt', files => 'secret-files.txt', excl => 'secret-excl.txt',
              del => 'secret-del.txt', above => 'secret-above.txt');
my %bytes = map { $_ => "SECRET-\U$_\E: published by mistake\n" } @sets;

plan tests => 6 + 5 * @sets + 5;

my $common = ['ResourceSyncChangeDump on', 'ResourceSyncChangeListPeriod 1h',
              'ResourceSyncMaxEntries 3', 'ResourceSyncResourceDump 1'];
sub conf {
    my ($later) = @_;
    my $c = STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
        . qq(<Directory "\@DIR\@/www/hta/sub">\n    AllowOverride All\n</Directory>\n)
        . qq(<Directory "\@DIR\@/www/above">\n    AllowOverride All\n</Directory>\n)
        . join('', map { set_conf($_, $dir{$_}, @$common,
                                  $later && $_ eq 'excl' ? 'ResourceSyncExclude secret-excl.txt'
                                                         : ()) } @sets);
    $c .= qq(<Files "secret-files.txt">\n    Require all denied\n</Files>\n) if $later;
    return $c;
}
my $srv = started_server(conf => conf(0), dirs => ['www/hta/sub'],
                         files => { map { ("$dir{$_}/base.txt" => "base of $_\n") } @sets });
my $B = $srv->base;
my $D = $srv->dir;
my $tmp = tempdir(CLEANUP => 1);

wait_ok(sub { !grep { get("$B/resourcesync/$_/changelist.xml")->code != 200 } @sets }, 60,
        'every set serves its Change List Index (its baseline is taken)');
# A destination's baseline of each set, from its first Resource Dump, before
# the files are made (so that it applies every change after it).
my $have_check = -x $rs_check;
my %mirror;
SKIP: {
    skip "no rs-check at $rs_check", 1 unless $have_check;
    my $ok = 1;
    for my $s (@sets) {
        dump_packages("$B/resourcesync/$s/resourcedump.xml", 60);
        $mirror{$s} = "$tmp/mirror-$s";
        (my $base = "$B/$dir{$s}/") =~ s{/www/}{/};
        my $out = `$rs_check mirror $B $mirror{$s} --set /$s/ --dumps --url-base $base 2>&1`;
        $ok &&= $? == 0 or diag("$s baseline: $out");
    }
    ok($ok, 'rs-check mirror --dumps: a baseline of every set from its Resource Dump');
}

# Each set: the secret and a public file, journaled and captured.
for my $s (@sets) {
    put("$D/$dir{$s}/$secret{$s}", $bytes{$s});
    put("$D/$dir{$s}/pub.txt", "public $s\n");
}
# Whether a capture of the set holds the secret's bytes (whatever its name).
sub captured {
    my ($s) = @_;
    opendir my $dh, "$D/state/capture/$s" or return 0;
    for my $f (grep { !/^\./ } readdir $dh) {
        open my $fh, '<:raw', "$D/state/capture/$s/$f" or next;
        local $/;
        return 1 if (<$fh> // '') eq $bytes{$s};
    }
    return 0;
}
ok(wait_for(sub { !grep { !captured($_) || changes_of($_, $B) < 2 } @sets }, 60),
   'every secret is journaled and captured');

# The secrets stop being listed.
put("$D/www/hta/sub/.htaccess", "Require all denied\n");
unlink "$D/$dir{del}/$secret{del}" or die $!;
my $old = $srv->watcher_pid;
$srv->write_conf(conf(1));
$srv->graceful;
# Above the root of "above", once the new watcher's first scans are done
# (they would find the denial, as they check every file again after a
# configuration change): nothing the watcher follows changes, so only the
# builders can see it.  The first scans of every set come before any
# job, so a package of "files" (whose list closes with the deletion its
# first scan journals) says they are done.  A third change closes the
# list of "above", and makes a snapshot, and so a Resource Dump, due.
wait_ok(sub { my $w = $srv->watcher_pid; $w && $w != $old }, 30,
        'graceful restart: a new watcher runs');
wait_ok(sub { scalar dump_packages("$B/resourcesync/files/changedump.xml", 30) }, 60,
        'graceful restart: the new watcher\'s first scans are done (a package of "files")');
put("$D/www/above/.htaccess", "<Files \"secret-above.txt\">\n    Require all denied\n</Files>\n");
put("$D/$dir{above}/more.txt", "more\n");

# The packages of a set once its first list closed: [zip path, manifest].
my $n = 0;
sub packages {
    my ($s) = @_;
    my @pk;
    wait_for(sub {
        @pk = map { my $zip = "$tmp/p" . ++$n . '.zip';
                    save($zip, get($_->{loc})->content);
                    [$zip, get($_->{manifest})->content] }
              dump_packages("$B/resourcesync/$s/changedump.xml", 30);
        @pk > 0 }, 60);
    return @pk;
}
# Whether the file holds the line s (grep -F: one pattern, no newline).
sub holds { my ($zip, $s) = @_; $s =~ s/\n\z//; system('grep', '-qaF', '--', $s, $zip) == 0 }

for my $s (@sets) {
    my @pk = packages($s);
    ok(scalar(@pk), "$s: a package is built after the secret stopped being listed");
    ok(@pk && !grep({ holds($_->[0], $bytes{$s}) } @pk), "$s: no package holds a byte of the secret");
    my $loc = "$B/$dir{$s}/$secret{$s}" =~ s{/www/}{/}r;
    my @changes = map { my $x = xpc(doc($_->[1]));
                        map { $x->findvalue('rs:md/@change', $_) }
                        $x->findnodes("/sm:urlset/sm:url[sm:loc='$loc']") } @pk;
    ok(@changes && !grep({ $_ ne 'deleted' } @changes),
       "$s: the manifest names the secret only as deleted (@changes)");
    ok(!grep({ !py_zip_ok($_->[0]) } @pk) && grep({ holds($_->[0], "public $s\n") } @pk),
       "$s: the packages test clean and hold the public file's bytes");
    if ($s eq 'above') {
        # Nobody journaled the denial: no collection is due; the Resource
        # Dump built after it (more.txt's snapshot) leaves the secret out.
        my $ok = wait_for(sub {
            my @rd = dump_packages("$B/resourcesync/above/resourcedump.xml", 30);
            my @m = map { get($_->{manifest})->content } @rd;
            (grep { index($_, '/more.txt<') >= 0 } @m) ? [\@rd, \@m] : undef }, 60);
        ok($ok && !grep({ index($_, 'secret-above') >= 0 } @{ $ok->[1] })
           && !grep({ index(get($_->{loc})->content, $bytes{above}) >= 0 } @{ $ok->[0] }),
           'above: the Resource Dump built after the denial neither lists nor holds the secret');
    }
    else {
        ok(wait_for(sub { !captured($s) }, 30),
           "$s: the secret's capture is dropped once its deletion is journaled");
    }
}

SKIP: {
    skip "no rs-check at $rs_check", 3 unless $have_check;
    my $ok = 1;
    for my $s (@sets) {
        my $out = `$rs_check mirror $B $mirror{$s} --set /$s/ --dumps 2>&1`;
        my $rc = $?;
        $ok &&= $rc == 0 && $out =~ /change dumps: [1-9]\d* changes applied/ or diag("$s: $out");
    }
    ok($ok, 'rs-check mirror --dumps applies every package and Change List after the denials');
    my $same = 1;
    for my $s (@sets) {
        my $out = `$rs_check compare $mirror{$s} $D/$dir{$s} --exclude '*secret*' --exclude .htaccess 2>&1`;
        $same &&= $? == 0 or diag("$s: $out");
    }
    ok($same, 'each destination equals its set without the secret');
    my $out = `$rs_check crawl $B --verify-dumps --fetch-resources 0 2>&1`;
    ok($? == 0 && $out =~ / 0 failed$/m, 'rs-check crawl --verify-dumps: 0 failed')
        or diag($out);
}
is_deeply([bad_log_lines($srv->log_text)], [], 'no error or crash in the error log');
ok(!grep({ /\[warn\]/ && /Change Dump/ } split /\n/, $srv->log_text), 'no Change Dump warning');
