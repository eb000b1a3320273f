# SPDX-License-Identifier: Apache-2.0
# The Resource Dump (ResourceSyncResourceDump): resourcedump.xml, its ZIP
# packages and manifest copies.  Every package opens with Python's zipfile
# and unzip, holds manifest.xml first, and every member is the file's bytes
# as the manifest describes them; a destination rebuilds the tree from the
# dump alone.  Private server.
use strict;
use Encode ();
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get req doc xpc validate wait_for strong_etag put);
use Digest::MD5 qw(md5_hex);
use File::Find ();
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use URI::Escape qw(uri_unescape);

plan tests => 45;

my %files = (
    'www/data/a.txt'              => "alpha\n",
    'www/data/manifest.xml'       => "<not-the-manifest/>\n",
    'www/data/sub/b.bin'          => join('', map { chr($_ % 256) } 0 .. 4999),
    'www/data/sub/deep/c d%#.txt' => "odd name\n",
    'www/data/empty'              => '',
);
my $srv = started_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncRescanInterval 1\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1')
                                 . set_conf('dx', 'www/idx', 'ResourceSyncResourceDump 1',
                                            'ResourceSyncMaxEntries 2', 'ResourceSyncDumpMaxEntries 1'),
                         files => { %files, map { ("www/idx/f$_", "file $_\n") } 1 .. 5 });
my $B = $srv->base;
my $root = $srv->dir . '/www/data';
my $dump_url = "$B/resourcesync/ds/resourcedump.xml";

my $cap = get("$B/resourcesync/ds/capabilitylist.xml");
is(xpc(doc($cap->content))->findvalue(
       '/sm:urlset/sm:url[rs:md/@capability="resourcedump"]/sm:loc'), $dump_url,
   'Capability List lists the Resource Dump');

my $r = wait_for(sub { my $r = get($dump_url); $r->code == 503 ? undef : $r }, 60);
is($r && $r->code, 200, 'resourcedump.xml is built after the first snapshot');
is(validate($r->content), undef, 'resourcedump.xml validates (lenient XSD)');
my $x = xpc(doc($r->content));
is($x->findvalue('/sm:urlset/rs:md/@capability'), 'resourcedump', 'capability resourcedump');
is($x->findvalue('/sm:urlset/rs:ln[@rel="up"]/@href'), "$B/resourcesync/ds/capabilitylist.xml",
   'rs:ln up to the Capability List');
my @pkgs = $x->findnodes('/sm:urlset/sm:url');
is(scalar @pkgs, 1, 'one package for a small set');

my $tmp = tempdir(CLEANUP => 1);
my $pkg = $pkgs[0];
my $loc = $x->findvalue('sm:loc', $pkg);
like($loc, qr{^\Q$B\E/resourcesync/ds/resourcedump/[0-9a-f]{8}-[0-9a-f]{16}\.zip$}, 'package URL');
my $pr = get($loc);
is($pr->code, 200, 'package answers 200');
is($pr->header('Content-Type'), 'application/zip', 'package is application/zip');
like($pr->header('Cache-Control') // '', qr/immutable/, 'package has a long Cache-Control');
ok(strong_etag($pr), 'package has a strong ETag');
my $zip = $pr->content;
is(length $zip, $x->findvalue('rs:md/@length', $pkg), 'package length as listed');
is('md5:' . md5_hex($zip), $x->findvalue('rs:md/@hash', $pkg), 'package hash as listed');
is($x->findvalue('rs:md/@type', $pkg), 'application/zip', 'package type');
open my $fh, '>:raw', "$tmp/p.zip" or die $!;
print $fh $zip;
close $fh;
is(system('python3', '-m', 'zipfile', '-t', "$tmp/p.zip") >> 8, 0, 'python zipfile -t');
is(system("unzip -tqq $tmp/p.zip >/dev/null") >> 8, 0, 'unzip -t');

sub zip_read {
    my ($name) = @_;
    open my $p, '-|', 'python3', '-c',
        'import sys,zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))',
        "$tmp/p.zip", $name or die $!;
    binmode $p;
    local $/;
    my $d = <$p>;
    close $p;
    return $d // '';
}
my @names = split /\n/, `python3 -c 'import sys,zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' $tmp/p.zip`;
is($names[0], 'manifest.xml', 'manifest.xml is the first member');

my $manifest = zip_read('manifest.xml');
my $mloc = $x->findvalue('rs:ln[@rel="contents"]/@href', $pkg);
my $mr = get($mloc);
is($mr->code, 200, 'manifest copy answers 200');
is($mr->content, $manifest, 'manifest copy is byte-identical to the member');
is(validate($manifest), undef, 'manifest validates (lenient XSD)');
my $mx = xpc(doc($manifest));
is($mx->findvalue('/sm:urlset/rs:md/@capability'), 'resourcedump-manifest', 'manifest capability');
is($mx->findvalue('/sm:urlset/rs:ln[@rel="up"]/@href'), "$B/resourcesync/ds/capabilitylist.xml",
   'manifest rs:ln up to the Capability List');

# A destination rebuilds the tree from the dump alone.
my $dest = "$tmp/dest";
my $ok = 1;
my @ents = $mx->findnodes('/sm:urlset/sm:url');
for my $e (@ents) {
    my $path = Encode::encode('UTF-8', $mx->findvalue('rs:md/@path', $e));
    my $locf = uri_unescape(substr($mx->findvalue('sm:loc', $e), length("$B/data/")));
    $ok &&= $path eq "/resources/$locf";
    my $bytes = zip_read(substr($path, 1));
    $ok &&= length($bytes) == $mx->findvalue('rs:md/@length', $e);
    $ok &&= 'md5:' . md5_hex($bytes) eq $mx->findvalue('rs:md/@hash', $e);
    make_path($1) if "$dest/$locf" =~ m{^(.*)/};
    open my $o, '>:raw', "$dest/$locf" or die "$dest/$locf: $!";
    print $o $bytes;
    close $o;
}

ok($ok, 'every member has its path, length and hash as the manifest says');
my %got;
File::Find::find({ no_chdir => 1, wanted => sub {
    return unless -f $_;
    open my $i, '<:raw', $_ or die $!;
    local $/;
    $got{substr($_, length($dest) + 1)} = <$i>;
} }, $dest);
my %want = map { substr($_, length('www/data/')) => $files{$_} } keys %files;
is_deeply(\%got, \%want, 'the tree rebuilt from the dump equals the tree');

# Range inside a package.
my $rr = req('GET', $loc, Range => 'bytes=10-29');
is($rr->code, 206, 'Range: 206');
is($rr->content, substr($zip, 10, 20), 'Range: the bytes asked for');
my $hr = req('HEAD', $loc);
is($hr->header('Content-Length'), length $zip, 'HEAD: Content-Length');
is(req('GET', $loc, 'If-None-Match' => $pr->header('ETag'))->code, 304, 'If-None-Match: 304');

# Unknown names.
(my $hist = $loc) =~ s{.*/([0-9a-f]{8})-.*}{$1};
(my $key = $loc) =~ s{.*-([0-9a-f]{16})\.zip$}{$1};
my @bad = ("resourcedump/$hist-1-0.zip", "resourcedump/$hist-99999-1.zip", "resourcedump/$hist-1-1.zip",
           "resourcedump/$hist-${key}0.zip",
           "resourcedump/$hist-$key.rec", "resourcedump/$hist-../$key.zip",
           "resourcedump/00000000-$key.zip",
           "resourcedump/$hist-1-1.tar", "resourcedump/00000000-1-1.zip",
           "resourcedump/$hist-1-1.zip/../x", "resourcedump/$hist-1234567890123456789012-1.zip",
           "resourcedump/", "resourcedump.xml.bak");
# Upper-case hex is not the key (a key of digits only has no upper-case form).
push @bad, "resourcedump/$hist-\U$key\E.zip" if uc($key) ne $key;
my @codes = map { get("$B/resourcesync/ds/$_")->code } @bad;
is_deeply(\@codes, [(404) x @bad], 'unknown dump names: 404');
is(get("$B/resourcesync/ds/resourcedump/$hist-0000000000000000.zip")->code, 404,
   'a key no package has: 404');

# The set changes: a new dump is built from a later snapshot; the old
# package stays downloadable.
put("$root/a.txt", "alpha two\n");
my $loc2 = wait_for(sub {
    my $r = get($dump_url);
    return undef unless $r->code == 200;
    my $l = xpc(doc($r->content))->findvalue('/sm:urlset/sm:url[1]/sm:loc');
    return $l ne $loc ? $l : undef;
}, 60);
ok($loc2, 'a new Resource Dump after a change') or diag $loc2;
my $p2 = get($loc2 // $loc);
open $fh, '>:raw', "$tmp/p.zip" or die $!;
print $fh $p2->content;
close $fh;
is(zip_read('resources/a.txt'), "alpha two\n", 'the new package holds the new version');
is(get($loc)->code, 200, 'the previous package is still served');
is(get($loc)->content, $zip, '... with the same bytes');

# A Resource Dump Index: 5 packages (one file each), 2 per document.
my $idx_url = "$B/resourcesync/dx/resourcedump.xml";
my $ir = wait_for(sub { my $r = get($idx_url); $r->code == 503 ? undef : $r }, 60);
is($ir && $ir->code, 200, 'dx: resourcedump.xml is built');
my $ix = xpc(doc($ir->content));
is($ix->findvalue('name(/*)'), 'sitemapindex', 'more packages than ResourceSyncMaxEntries: a Resource Dump Index');
is(validate($ir->content), undef, 'the index validates (lenient XSD)');
is($ix->findvalue('/sm:sitemapindex/rs:md/@capability') . ' '
   . $ix->findvalue('/sm:sitemapindex/rs:ln[@rel="up"]/@href'),
   "resourcedump $B/resourcesync/dx/capabilitylist.xml", 'index: capability and rs:ln up');
ok($ix->findvalue('/sm:sitemapindex/rs:md/@at') && $ix->findvalue('/sm:sitemapindex/rs:md/@completed'),
   'index: at and completed');
my @parts = map { $_->textContent } $ix->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc');
is(scalar @parts, 3, 'three parts');
my (@pcodes, @pkgcodes, $pok);
$pok = 1;
for my $u (@parts) {
    my $r = get($u);
    push @pcodes, $r->code;
    next unless $r->code == 200;
    my $px = xpc(doc($r->content));
    $pok &&= $px->findvalue('/sm:urlset/rs:ln[@rel="index"]/@href') eq $idx_url
             && $px->findvalue('/sm:urlset/rs:md/@capability') eq 'resourcedump'
             && !defined validate($r->content);
    push @pkgcodes, map { get($_->textContent)->code } $px->findnodes('/sm:urlset/sm:url/sm:loc');
}
is_deeply(\@pcodes, [200, 200, 200], 'every part answers 200');
ok($pok, 'every part is a valid resourcedump <urlset> with rs:ln index to the index');
is_deeply(\@pkgcodes, [(200) x 5], 'the parts list the five packages, each served');
my ($ph, $pg) = ($parts[0] // '') =~ m{/([0-9a-f]{8})-(\d+)-1\.xml$};
my @pbad = map { "$B/resourcesync/dx/resourcedump/$_" }
           ("$ph-$pg-4.xml", "$ph-$pg-0.xml", "$ph-" . ($pg + 1) . "-1.xml", "$ph-$pg-1.zip",
            "00000000-$pg-1.xml", "$ph-0$pg-1.xml");
is_deeply([map { get($_)->code } @pbad], [(404) x @pbad], 'unknown part names: 404');
