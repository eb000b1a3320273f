# SPDX-License-Identifier: Apache-2.0
# HTTP semantics of the Resource Dump's files: a package, a manifest copy
# and resourcedump.xml answer HEAD, conditional requests (304), single and
# multiple ranges, If-Range, unsatisfiable ranges like static files, with
# EnableSendfile On and Off (one private server each).  Bad package names
# and traversal attempts are exactly 404, never a 500, and nothing in the
# error log shows an error or a crash.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get req strong_etag);
use RSDump qw(dump_packages bad_log_lines);
use Digest::MD5 qw(md5_hex);

my @MODES = ('On', 'Off');
plan tests => @MODES * 53;

# A package big enough for ranges well inside it: members of mixed sizes.
my %files = (
    'www/data/a.txt'       => "alpha\n",
    'www/data/big.bin'     => join('', map { chr(($_ * 7) % 251) } 1 .. 300_000),
    'www/data/sub/b.txt'   => ("bravo " x 5000) . "\n",
    'www/data/sub/c.empty' => '',
);

# Parts of a multipart/byteranges body: list of [content-range, bytes].
sub byteranges {
    my ($r) = @_;
    my ($b) = ($r->header('Content-Type') // '') =~ /^multipart\/byteranges;\s*boundary="?([^";]+)"?/
        or return ();
    my @parts;
    my $body = $r->content;
    while ($body =~ /--\Q$b\E\r\n(.*?)\r\n\r\n/sg) {
        my $h = $1;
        my ($from, $to) = $h =~ /Content-Range: bytes (\d+)-(\d+)\/\d+/i or return ();
        my $start = pos($body);
        push @parts, [ "$from-$to", substr($body, $start, $to - $from + 1) ];
        pos($body) = $start + $to - $from + 1;
    }
    return @parts;
}

# The checks every immutable file of the dump passes; $what names it,
# $cc is the Cache-Control it must have, $type its Content-Type (regexp).
sub check_file {
    my ($what, $url, $cc, $type) = @_;
    my $g = get($url);
    is($g->code, 200, "$what: GET 200");
    my $body = $g->content;
    my $len = length $body;
    like($g->header('Content-Type') // '', $type, "$what: Content-Type");
    is($g->header('Cache-Control'), $cc, "$what: Cache-Control");
    my $etag = strong_etag($g);
    ok($etag, "$what: strong ETag") or diag($g->header('ETag') // 'no ETag');
    $etag //= '"none"';
    is($g->header('Content-Length'), $len, "$what: Content-Length");

    my $h = req('HEAD', $url);
    is($h->code, 200, "$what: HEAD 200");
    is_deeply([map { $h->header($_) } qw(Content-Type Content-Length ETag Last-Modified
                                         Cache-Control Accept-Ranges)],
              [map { $g->header($_) } qw(Content-Type Content-Length ETag Last-Modified
                                         Cache-Control Accept-Ranges)],
              "$what: HEAD has the headers of GET");
    is($h->content, '', "$what: HEAD has no body");

    is(req('GET', $url, 'If-None-Match' => $etag)->code, 304, "$what: If-None-Match 304");
    is(req('GET', $url, 'If-Modified-Since' => $g->header('Last-Modified'))->code, 304,
       "$what: If-Modified-Since 304");

    my ($a, $z) = (int($len / 3), int($len / 3) + 99);
    my $r = req('GET', $url, Range => "bytes=$a-$z");
    is($r->code, 206, "$what: Range 206");
    is($r->header('Content-Range'), "bytes $a-$z/$len", "$what: Content-Range");
    ok($r->content eq substr($body, $a, 100), "$what: Range has exactly those bytes");

    my @want = ([0, 9], [$a, $a + 49], [$len - 20, $len - 1]);
    $r = req('GET', $url, Range => 'bytes=' . join(',', map { "$_->[0]-$_->[1]" } @want));
    is($r->code, 206, "$what: multi-range 206");
    like($r->header('Content-Type') // '', qr{^multipart/byteranges}, "$what: multipart/byteranges");
    is_deeply([byteranges($r)],
              [map { [ "$_->[0]-$_->[1]", substr($body, $_->[0], $_->[1] - $_->[0] + 1) ] } @want],
              "$what: each part has exactly its bytes");

    $r = req('GET', $url, Range => 'bytes=5-14', 'If-Range' => $etag);
    is($r->code, 206, "$what: If-Range with the current ETag 206");
    ok($r->content eq substr($body, 5, 10), "$what: ... with the range's bytes");
    $r = req('GET', $url, Range => 'bytes=5-14', 'If-Range' => '"0-0-0"');
    is($r->code, 200, "$what: If-Range with a stale ETag 200");
    ok($r->content eq $body, "$what: ... with the whole body");
    is(req('GET', $url, Range => "bytes=$len-")->code, 416, "$what: unsatisfiable range 416");
    return $body;
}

for my $mode (@MODES) {
    my $srv = started_server(conf => STATE_CONF . "EnableSendfile $mode\nEnableMMAP Off\n"
                                     . "LogLevel info resourcesync:debug\n"
                                     . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1'),
                             files => \%files, name => "server with EnableSendfile $mode starts");
    my $B = $srv->base;
    my $dump_url = "$B/resourcesync/ds/resourcedump.xml";
    my @pkgs = dump_packages($dump_url);
    is(scalar @pkgs, 1, "$mode: one package");
    my $p = $pkgs[0] || { loc => "$B/none", manifest => "$B/none" };

    my $zip = check_file("$mode package", $p->{loc}, 'max-age=31536000, immutable',
                         qr{^application/zip$});
    is(length $zip, $p->{length}, "$mode: package length as listed");
    is('md5:' . md5_hex($zip), $p->{hash}, "$mode: package hash as listed");
    check_file("$mode manifest", $p->{manifest}, 'max-age=31536000, immutable', qr{xml});

    # resourcedump.xml changes with every dump: no-cache, but the same
    # validators and ranges.
    my $d = get($dump_url);
    is($d->header('Cache-Control'), 'no-cache', "$mode resourcedump.xml: Cache-Control no-cache");
    my $etag = strong_etag($d) // '"none"';
    is(req('GET', $dump_url, 'If-None-Match' => $etag)->code, 304,
       "$mode resourcedump.xml: If-None-Match 304");
    my $h = req('HEAD', $dump_url);
    is($h->header('Content-Length') . '|' . $h->content, length($d->content) . '|',
       "$mode resourcedump.xml: HEAD Content-Length, no body");
    my $r = req('GET', $dump_url, Range => 'bytes=3-12');
    is($r->code . '|' . $r->content, '206|' . substr($d->content, 3, 10),
       "$mode resourcedump.xml: Range");

    # Bad input.  Names come from the package's own URL: the package
    # directory and its file name, altered.
    my ($dir, $name) = $p->{loc} =~ m{^(.*/resourcedump)/([^/]+)$};
    $dir //= "$B/resourcesync/ds/resourcedump";
    $name //= 'x.zip';
    (my $stem = $name) =~ s/\.zip$//;
    my @bad = ("$dir/nope.zip", "$dir/$name.tmp", "$dir/.tmp-$name", "$dir/$name" . 'x',
               "$dir/$name/", "$dir/$name%00", "$dir/$stem.xmlx", "$dir/$stem.ZIP",
               "$dir/$stem-1.zip", "$dir/0$name", "$dir/$name;x",
               "$dir/" . ('9' x 40) . ".zip", "$dir/$stem" . ('9' x 40) . '.zip',
               "$dir/ffffffff-" . ('9' x 25) . "-1.zip", "$dir/ffffffff-1-" . ('9' x 25) . ".zip",
               "$dir/00000000-1-1.zip", "$dir/zzzzzzzz-1-1.zip", "$dir/-1-1.zip",
               "$dir/..%2f..%2fresourcedump.xml", "$dir/%2e%2e%2fresourcedump.xml",
               "$dir/%2e%2e/%2e%2e/nosuchset/resourcedump.xml",
               "$dir/$name/..%2f..%2f..%2fetc%2fpasswd", "$dir/..%2f..%2f..%2f..%2fstate",
               "$dir/%2e%2e%2f%2e%2e%2f%2e%2e%2fstate%2fdumps", "$dir/%252e%252e%252fx.zip",
               "$dir/", "$dir", "$dir.xml.bak",
               "$B/resourcesync/nosuchset/resourcedump/$name",
               "$B/resourcesync/ds/resourcedump/$name/$name");
    # Wrong history: the history part of the name (before the first -)
    # swapped for another one.
    push @bad, "$dir/" . ($name =~ /^0/ ? '1' : '0') . substr($name, 1) if $name =~ /^[0-9a-f]/;
    my %codes = map { $_ => get($_)->code } @bad;
    is_deeply(\%codes, { map { $_ => 404 } @bad }, "$mode: bad names and traversal: exactly 404");
    is(get($p->{loc})->code, 200, "$mode: the package still answers after bad input");

    my @badlog = bad_log_lines($srv->log_text);
    is_deeply(\@badlog, [], "$mode: no error or crash in the error log");
    $srv->stop;
}
