# Odd file names in the Resource Dump: every file survives the round trip
# file name -> ZIP member name -> manifest <loc> and rs:md path.  For each
# file the manifest's <loc> percent-decodes to the set's URL followed by
# the file's relative path; its path is "/" and the name of a member
# holding exactly the file's bytes: "resources/<relative path>" literally
# when that is valid UTF-8 without control characters, else
# "encoded/<relative path percent-encoded>" (ASCII); the member has the
# language-encoding flag (bit 11) exactly when its name is valid non-ASCII
# UTF-8, and Python's zipfile and unzip test the package clean.  Private
# server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc);
use RSDump qw(dump_packages save zip_names zip_member zip_flags py_zip_ok unzip_ok bad_log_lines);
use Encode ();
use File::Temp qw(tempdir);
use URI::Escape qw(uri_unescape);

# Relative paths as bytes (this file is not under "use utf8": the UTF-8
# names below are their UTF-8 bytes).
my @names = ('sp ace.txt', 'pct%20x.txt', '100%.txt', 'hash#x.txt', 'q?x=1.txt', 'dq"x.txt',
             "sq'x.txt", 'plus+x.txt', 'amp&x;y.txt', 'lt<gt>.txt', "caf\xc3\xa9.txt",
             "\xe6\x97\xa5\xe6\x9c\xac/\xe8\xaa\x9e.txt", "\xff\xfe.txt", "bad\xc3(/x.txt",
             'manifest.xml', 'resources', 'a/b/c/d/e/f/g/h/i/j/deep name %41.txt',
             'tab?#%/x y+z.txt', 'plain.txt', "ctl\x01x\x7f.txt", 'a%FF.txt', "a\xff.txt");
my %files = map { ("www/data/$names[$_]" => "content $_ of $names[$_]\n" x ($_ + 1)) } 0 .. $#names;

plan tests => 9 + 4 * @names;

my $srv = started_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1'),
                         files => \%files);
my $B = $srv->base;
my @pkgs = dump_packages("$B/resourcesync/ds/resourcedump.xml");
ok(scalar @pkgs, 'the dump lists packages');

my $tmp = tempdir(CLEANUP => 1);
my (%entry, @zips, $all_py, $all_unzip);
($all_py, $all_unzip) = (1, 1);
for my $i (0 .. $#pkgs) {
    my $zip = "$tmp/p$i.zip";
    my $r = get($pkgs[$i]{loc});
    save($zip, $r->content);
    $all_py &&= py_zip_ok($zip);
    $all_unzip &&= unzip_ok($zip);
    my $m = get($pkgs[$i]{manifest});
    my $x = xpc(doc($m->content));
    for my $u ($x->findnodes('/sm:urlset/sm:url')) {
        my $loc = $x->findvalue('sm:loc', $u);
        $entry{$loc} = { path => $x->findvalue('rs:md/@path', $u), zip => $zip };
    }
    push @zips, $zip;
}
ok($all_py, 'python3 -m zipfile -t accepts every package');
ok($all_unzip, 'unzip -t accepts every package');

# Every <loc> decodes to the set's URL and a file's path; one entry a file.
my %by_rel;
for my $loc (keys %entry) {
    my $rel = $loc =~ m{^\Q$B\E/data/(.*)$} ? uri_unescape($1) : "?$loc";
    $by_rel{$rel} = $entry{$loc};
}
is_deeply([sort keys %by_rel], [sort @names], 'one manifest entry a file, <loc> decodes to its path');
ok(!grep({ m{[^A-Za-z0-9\-._~!\$&'()*+,;=:@/%]} } keys %entry),
   'every <loc> is percent-encoded (no raw space, #, ?, quote, <, non-ASCII)');

my %flags = map { %{ zip_flags($_) } } @zips;
for my $rel (@names) {
    my $e = $by_rel{$rel} // { path => '', zip => $zips[0] // "$tmp/none" };
    my $path = Encode::encode('UTF-8', $e->{path});
    my $plain = $rel !~ /[\x00-\x1f\x7f]/
                && eval { Encode::decode('UTF-8', "$rel", Encode::FB_CROAK); 1 };
    if ($plain) {
        is($path, "/resources/$rel", "path of '$rel' is its member name, literally");
    }
    else {
        ok($path =~ m{^/encoded/([\x21-\x7e]+)$} && uri_unescape($1) eq $rel,
           "path of '$rel' is an ASCII member name below encoded/ that decodes to it");
    }
    my $member = substr($path, 1);
    ok(exists $flags{$member}, "'$rel': a member of that name exists");
    ok(zip_member($e->{zip}, $member) eq $files{"www/data/$rel"}, "'$rel': member holds the file's bytes");
    my $non_ascii_utf8 = $member =~ /[\x80-\xff]/
                         && eval { Encode::decode('UTF-8', "$member", Encode::FB_CROAK); 1 } ? 1 : 0;
    is(((($flags{$member} // 0) & 0x800) ? 1 : 0), $non_ascii_utf8,
       "'$rel': language-encoding flag " . ($non_ascii_utf8 ? 'set' : 'clear'));
}
my %first = map { $_ => (zip_names($_))[0] } @zips;
is_deeply([values %first], [('manifest.xml') x @zips], 'manifest.xml is every package\'s first member');
is(scalar(grep { $_ eq 'manifest.xml' } map { zip_names($_) } @zips), scalar @zips,
   'the root file manifest.xml does not clash with the manifest member');
is_deeply([bad_log_lines($srv->log_text)], [], 'no error or crash in the error log');
