# SPDX-License-Identifier: Apache-2.0
# Odd file names in the Resource Dump and the Change Dump: every file
# survives the round trip file name -> ZIP member name -> manifest <loc>
# and rs:md path, and no member name is one that a common extractor reads
# as something else.  For each file the manifest's <loc> percent-decodes to
# the set's URL followed by the file's relative path; its path is "/" and
# the name of a member holding exactly the file's bytes: the relative path
# literally (below "resources/", or "changes/<sequence>/" in a Change Dump)
# when every extractor makes the same path of it, else the relative path
# percent-encoded (letters, digits, "-._~%/" only, below "encoded/", or
# "changes/<sequence>/"):
# names that are not UTF-8, hold control characters, Windows separators,
# drives, streams or refused characters (\ : * ? " < > |), characters
# Windows' best-fit conversion turns into those, a segment ending with
# '.' or ' ', or a Windows device name.  The member has the
# language-encoding flag (bit 11) exactly when its name is valid non-ASCII
# UTF-8; Python's zipfile and unzip test the package clean and list no
# member with a backslash, a colon or a control character.  Private
# server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for wait_ok put);
use RSDump qw(dump_packages save zip_names zip_member zip_flags py_zip_ok unzip_ok bad_log_lines);
use Encode ();
use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use URI::Escape qw(uri_unescape);

# Relative paths as bytes (this file is not under "use utf8": the UTF-8
# names below are their UTF-8 bytes), and whether the member name is the
# path literally (1) or encoded (0).
my @cases = (
    ['sp ace.txt', 1], ['pct%20x.txt', 1], ['100%.txt', 1], ['hash#x.txt', 1],
    ["sq'x.txt", 1], ['plus+x.txt', 1], ['amp&x;y.txt', 1], ["caf\xc3\xa9.txt", 1],
    ["\xe6\x97\xa5\xe6\x9c\xac/\xe8\xaa\x9e.txt", 1], ['manifest.xml', 1], ['resources', 1],
    ['a/b/c/d/e/f/g/h/i/j/deep name %41.txt', 1], ['plain.txt', 1], ['a%FF.txt', 1],
    ['console.txt', 1], ['com10', 1], ['a..b/x..y', 1],
    ['q?x=1.txt', 0], ['dq"x.txt', 0], ['lt<gt>.txt', 0], ['tab?#%/x y+z.txt', 0],
    ["\xff\xfe.txt", 0], ["bad\xc3(/x.txt", 0], ["ctl\x01x\x7f.txt", 0], ["a\xff.txt", 0],
    ['x\\..\\..\\Windows\\System32\\evil.bat', 0], ['C:drive.txt', 0], ['ads.txt:stream', 0],
    ['pipe|star*.txt', 0], ['trail.', 0], ['trail ', 0], ['sub. /x.txt', 0], ['CON', 0],
    ['nul.txt', 0], ['dir/Com1.log', 0], ['aux .c', 0], ["fw\xef\xbc\x8f..\xef\xbc\x8fx.txt", 0],
    ["yen\xc2\xa5.txt", 0], ["c1\xc2\x85.txt", 0],
);
my @names = map { $_->[0] } @cases;
my %literal = map { ($_->[0] => $_->[1]) } @cases;
my %content = map { ($names[$_] => "content $_ of $names[$_]\n" x ($_ + 1)) } 0 .. $#names;

plan tests => 3 + 2 * (7 + 3 * @names);   # with the start and the baseline

my $srv = started_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1')
                                 . set_conf('cd', 'www/cd', 'ResourceSyncChangeDump on',
                                            'ResourceSyncChangeListPeriod 2s'),
                         dirs => ['www/cd'],
                         files => { map { ("www/data/$_" => $content{$_}) } @names });
my $B = $srv->base;
my $tmp = tempdir(CLEANUP => 1);

# The Change Dump's files are made once the set is watched: each one is a
# created change in a closed Change List.
wait_ok(sub { get("$B/resourcesync/cd/changelist.xml")->code == 200 }, 60,
        'cd: the Change List Index is served (the set is watched)');
for my $rel (@names) {
    my $path = $srv->dir . "/www/cd/$rel";
    make_path(dirname($path));
    put($path, $content{$rel});
}

# The packages of a dump document: (zip file, manifest doc) pairs, once
# every name has an entry in a manifest (a Change Dump gets packages as
# its lists close).
my $n = 0;
sub packages {
    my ($url, $want) = @_;
    my @pk;
    wait_for(sub {
        @pk = ();
        my %seen;
        for my $p (dump_packages($url)) {
            my $zip = "$tmp/p" . ++$n . '.zip';
            save($zip, get($p->{loc})->content);
            my $x = xpc(doc(get($p->{manifest})->content));
            $seen{$x->findvalue('sm:loc', $_)}++ for $x->findnodes('/sm:urlset/sm:url');
            push @pk, [$zip, $x];
        }
        keys(%seen) >= $want;
    }, 90);
    return @pk;
}

sub check_kind {
    my ($kind, $set, $dir, $url, $literal_re, $encoded_re) = @_;
    my @pk = packages($url, scalar @names);
    ok(scalar @pk, "$kind: the dump lists packages");
    ok(!grep({ !py_zip_ok($_->[0]) } @pk), "$kind: python3 -m zipfile -t accepts every package");
    ok(!grep({ !unzip_ok($_->[0]) } @pk), "$kind: unzip -t accepts every package");

    my (%by_rel, @locs);
    for my $p (@pk) {
        my $x = $p->[1];
        for my $u ($x->findnodes('/sm:urlset/sm:url')) {
            my $loc = $x->findvalue('sm:loc', $u);
            push @locs, $loc;
            my $rel = $loc =~ m{^\Q$B\E/$dir/(.*)$} ? uri_unescape($1) : "?$loc";
            $by_rel{$rel} = { path => Encode::encode('UTF-8', $x->findvalue('rs:md/@path', $u)),
                              zip => $p->[0] };
        }
    }
    is_deeply([sort keys %by_rel], [sort @names], "$kind: one entry a file, <loc> decodes to its path");
    ok(!grep({ m{[^A-Za-z0-9\-._~!\$&'()*+,;=:@/%]} } @locs),
       "$kind: every <loc> is percent-encoded (no raw space, #, ?, quote, <, non-ASCII)");

    my (%flags, @members);
    for my $p (@pk) {
        %flags = (%flags, %{ zip_flags($p->[0]) });
        push @members, zip_names($p->[0]);
    }
    # What Python lists, and what unzip lists: no member a Windows or
    # macOS extractor would read as a separator, a drive or a stream.
    my @unzip = map { `unzip -Z1 '$_->[0]' 2>/dev/null` } @pk;
    chomp @unzip;
    is_deeply([grep { /[\\:\x00-\x1f\x7f]/ } @members, @unzip], [],
              "$kind: zipfile and unzip list no member name with a backslash, colon or control");
    my %first = map { $_->[0] => (zip_names($_->[0]))[0] } @pk;
    is_deeply([values %first], [('manifest.xml') x @pk], "$kind: manifest.xml is every package's first member");

    for my $rel (@names) {
        my $e = $by_rel{$rel} // { path => '', zip => $pk[0][0] // "$tmp/none" };
        my $path = $e->{path};
        if ($literal{$rel}) {
            my $lit = $path =~ $literal_re ? $1 : undef;
            ok(defined $lit && $lit eq $rel, "$kind: path of '$rel' is the path, literally");
        }
        else {
            my $enc = $path =~ $encoded_re ? $1 : undef;
            ok(defined $enc && uri_unescape($enc) eq $rel
               && $enc !~ m{(?:^|/)(?:con|prn|aux|nul|com\d|lpt\d)(?:\.|%20|/|$)}i
               && $enc !~ m{[. ](?:/|$)},
               "$kind: path of '$rel' is percent-encoded below the encoded prefix, decodes "
               . "to it, names no device and ends no segment with a dot or space");
        }
        my $member = substr($path, 1);
        ok(exists $flags{$member} && zip_member($e->{zip}, $member) eq $content{$rel},
           "$kind: '$rel': a member of that name holds the file's bytes");
        my $non_ascii_utf8 = $member =~ /[\x80-\xff]/
                             && eval { Encode::decode('UTF-8', "$member", Encode::FB_CROAK); 1 } ? 1 : 0;
        is(((($flags{$member} // 0) & 0x800) ? 1 : 0), $non_ascii_utf8,
           "$kind: '$rel': language-encoding flag " . ($non_ascii_utf8 ? 'set' : 'clear'));
    }
}

check_kind('Resource Dump', 'ds', 'data', "$B/resourcesync/ds/resourcedump.xml",
           qr{^/resources/(.+)$}s, qr{^/encoded/([A-Za-z0-9\-._~%/]+)$});
check_kind('Change Dump', 'cd', 'cd', "$B/resourcesync/cd/changedump.xml",
           qr{^/changes/\d+/(.+)$}s, qr{^/changes/\d+/([A-Za-z0-9\-._~%/]+)$});
is_deeply([bad_log_lines($srv->log_text)], [], 'no error or crash in the error log');
