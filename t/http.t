# SPDX-License-Identifier: Apache-2.0
# HTTP behaviour of the documents (validators, conditional requests, HEAD,
# Range, methods, URLs that are not documents, malformed requests) and the
# Link: <capability list>; rel="resourcesync" header on resources.
use strict;
use warnings;
use Test::More;
use Apache::Test ();
use FindBin;
use lib "$FindBin::Bin/lib";
use HTTP::Date ();
use RSTest qw(get head req doc xpc wait_for sd_url cap_url rl_url base vhost_base strong_etag);
use RSTest::Docs qw(media_type part_urls);

my $B = base();
my $V = vhost_base();

# Wait for the first scan (resourcelist.xml answers 503 before it).
for my $u (rl_url('main'), rl_url('small'), rl_url('vset', $V, '/rs')) {
    my $ok = wait_for(sub { get($u)->code == 200 }, 60);
    ok($ok, "$u available");
}
my ($part1) = part_urls(xpc(doc(get(rl_url('small'))->content)));
ok($part1, "small has a part: " . ($part1 // 'none'));

my %DOCS = (
    'SD'                => sd_url(),
    'SD (vhost)'        => sd_url($V),
    'capability list'   => cap_url('main'),
    'capability list (vhost)' => cap_url('vset', $V, '/rs'),
    'resource list'     => rl_url('main'),
    'resource list (vhost)' => rl_url('vset', $V, '/rs'),
    'index'             => rl_url('small'),
    'part'              => $part1 // rl_url('small') . '-no-part',
);

# --- validators, conditional requests, HEAD ------------------------------
for my $kind (sort keys %DOCS) {
    my $u = $DOCS{$kind};
    my $r = get($u);
    is($r->code, 200, "$kind: GET $u") or next;
    is(media_type(scalar $r->header('Content-Type')), 'application/xml',
       "$kind: Content-Type application/xml");
    # Every ETag is strong ("..." without W/): the bytes of a document never
    # change under its ETag (snapshot files are never rewritten).
    my $etag = strong_etag($r);
    my $lm   = $r->header('Last-Modified');
    ok(defined $etag, "$kind: a strong ETag") or diag($r->header('ETag') // 'none');
    ok(defined $lm && defined HTTP::Date::str2time($lm), "$kind: Last-Modified")
        or diag($lm // 'none');
    my $body = $r->content;
    is($r->header('Content-Length'), length $body, "$kind: Content-Length = body length");
    ok(length($body) > 0 && eval { doc($body) }, "$kind: body is XML");
    next unless defined $etag && defined $lm;

    my $c = get($u, 'If-None-Match' => $etag);
    is($c->code, 304, "$kind: If-None-Match with the ETag -> 304");
    is($c->header('ETag'), $etag, "$kind: 304 carries the ETag");
    is(length($c->content), 0, "$kind: 304 has no body");
    $c = get($u, 'If-None-Match' => '"something-else"');
    is($c->code, 200, "$kind: If-None-Match with another ETag -> 200");
    $c = get($u, 'If-None-Match' => "\"x\", $etag");
    is($c->code, 304, "$kind: If-None-Match with a list containing the ETag -> 304");
    $c = get($u, 'If-Modified-Since' => $lm);
    is($c->code, 304, "$kind: If-Modified-Since Last-Modified -> 304");
    $c = get($u, 'If-Modified-Since' => HTTP::Date::time2str(HTTP::Date::str2time($lm) - 86400));
    is($c->code, 200, "$kind: If-Modified-Since a day earlier -> 200");
    is($c->content, $body, "$kind: ... with the same body");

    my $h = head($u);
    is($h->code, 200, "$kind: HEAD -> 200");
    is($h->header('Content-Type'), $r->header('Content-Type'), "$kind: HEAD same Content-Type");
    is($h->header('Content-Length'), $r->header('Content-Length'), "$kind: HEAD same Content-Length");
    is($h->header('ETag'), $etag, "$kind: HEAD same ETag");
    is(length($h->content), 0, "$kind: HEAD has no body");
    is(head($u, 'If-None-Match' => $etag)->code, 304, "$kind: conditional HEAD -> 304");

    # A query string is ignored.
    $c = get("$u?x=1&y=../../etc/passwd");
    is($c->code, 200, "$kind: with a query string -> 200");
    is($c->content, $body, "$kind: ... and the same body");

    # Methods other than GET and HEAD.
    for my $m (qw(POST PUT DELETE)) {
        my $mr = req($m, $u, 'Content-Type' => 'application/xml', 'Content-Length' => 0);
        is($mr->code, 405, "$kind: $m -> 405");
        my %allow = map { uc($_) => 1 } split /\s*,\s*/, ($mr->header('Allow') // '');
        ok($allow{GET} && $allow{HEAD}, "$kind: $m: Allow lists GET and HEAD")
            or diag('Allow: ' . ($mr->header('Allow') // 'none'));
        ok(!$allow{$m}, "$kind: $m: Allow does not list $m");
    }
    # OPTIONS: the handler answers every method but GET and HEAD with a 405
    # and the Allow list.
    my $o = req('OPTIONS', $u);
    is($o->code, 405, "$kind: OPTIONS -> 405");
    my %allow = map { uc($_) => 1 } split /\s*,\s*/, ($o->header('Allow') // '');
    ok($allow{GET} && $allow{HEAD} && !$allow{POST}, "$kind: OPTIONS: Allow lists GET and HEAD, not POST")
        or diag('Allow: ' . ($o->header('Allow') // 'none'));
    # TRACE: answered as the core answers it (TraceEnable is On here), as
    # the Allow list says.
    my $t = req('TRACE', $u);
    is($t->code . ' ' . ($t->header('Content-Type') // ''), '200 message/http',
       "$kind: TRACE -> 200 message/http, like any URL of the server");
    ok($allow{TRACE}, "$kind: Allow lists TRACE, which is answered")
        or diag('Allow: ' . ($o->header('Allow') // 'none'));
}

# --- Range on a part ------------------------------------------------------
{
    my $u = $DOCS{part};
    my $full = get($u)->content;
    my $len = length $full;
    ok($len > 40, "part is long enough for the Range tests ($len bytes)");
    my $r = get($u, Range => 'bytes=10-29');
    is($r->code, 206, 'Range bytes=10-29 -> 206');
    is($r->content, substr($full, 10, 20), '... the right 20 bytes');
    is($r->header('Content-Range'), "bytes 10-29/$len", '... Content-Range');
    $r = get($u, Range => 'bytes=-15');
    is($r->code, 206, 'Range bytes=-15 -> 206');
    is($r->content, substr($full, -15), '... the last 15 bytes');
    my $etag = strong_etag(get($u));
    ok(defined $etag, 'the part has a strong ETag (If-Range needs one)');
    $r = get($u, Range => 'bytes=0-9', 'If-Range' => $etag // '"none"');
    is($r->code, 206, 'If-Range with the ETag -> 206');
    is($r->content, substr($full, 0, 10), '... the first 10 bytes');
    $r = get($u, Range => 'bytes=0-9', 'If-Range' => '"other"');
    is($r->code, 200, 'If-Range with another ETag -> 200');
    is($r->content, $full, '... the whole part');

    # Bogus ranges.  Parts are static files; Range is httpd's byterange
    # filter: a header it cannot parse is ignored (200, the whole part, no
    # Content-Range), a range that starts past the end is unsatisfiable
    # (416), and a header value with a control character is refused while
    # the request is read (400).  Never a 206 or a 5xx.
    my @bogus = (
        # [Range, status]
        ['bytes=abc', 200], ['bytes=5-2', 200], ['bytes=-0', 200], ['chars=1-2', 200],
        ['bytes=', 200], ['bytes', 200],
        ['bytes=99999999-', 416],
        ['bytes=18446744073709551616-', 200], ['bytes=-18446744073709551616', 200],
        ['bytes=1-2-3', 200], ['bytes=--1', 200],
        ['bytes=' . '0-1,' x 300 . '0-1', 200],     # more overlaps than MaxRangeOverlaps
        ['bytes=0x10-0x20', 200],
        ["bytes=\x{7f}1-2", 400],
        ['bytes=  1 - 2 ', 200],
    );
    for my $c (@bogus) {
        my ($rg, $status) = @$c;
        my $br = get($u, Range => $rg);
        my $show = length($rg) > 40 ? substr($rg, 0, 40) . '...' : $rg;
        $show =~ s/([^\x20-\x7e])/sprintf('\\x%02x', ord $1)/ge;
        is($br->code, $status, "Range '$show' -> $status") or diag($br->status_line);
        if ($status == 200) {
            ok($br->content eq $full && !defined $br->header('Content-Range'),
               "Range '$show' ignored: whole part, no Content-Range");
        }
        else {
            ok(index($br->content, $full) < 0 && !defined $br->header('Content-Range'),
               "Range '$show': an error document, not the part");
        }
    }
}

# --- URLs under the prefix that are no documents: 404 ---------------------
for my $p ('/resourcesync/nope/capabilitylist.xml', '/resourcesync/main/nothing.xml',
           '/resourcesync/', '/resourcesync', '/resourcesync/main', '/resourcesync/main/',
           '/resourcesync/main/capabilitylist.xml/', '/resourcesync/main/resourcelist/',
           '/resourcesync/main/resourcelist', '/resourcesync/MAIN/capabilitylist.xml',
           '/resourcesync/main/CAPABILITYLIST.XML', '/resourcesync/vset/capabilitylist.xml',
           '/rs/vset/capabilitylist.xml', '/.well-known/resourcesync/',
           '/.well-known/resourcesync.xml') {
    my $r = get("$B$p");
    is($r->code, 404, "GET $p -> 404") or diag($r->status_line);
}
for my $p ('/rs/nope/capabilitylist.xml', '/rs/', '/rs', '/rs/vset/nothing.xml',
           '/resourcesync/vset/capabilitylist.xml', '/resourcesync/main/capabilitylist.xml') {
    my $r = get("$V$p");
    is($r->code, 404, "vhost GET $p -> 404") or diag($r->status_line);
}

# --- malformed requests: an exact answer, never a 5xx ----------------------
# httpd decodes the URL and removes dot segments before the module sees it;
# what it refuses never reaches the module.  The module answers 404 for
# anything under the prefix that is no document and serves a document
# whatever the query string.
my %BODY = (cap => get(cap_url('main'))->content, rl => get(rl_url('main'))->content,
            sd => get(sd_url())->content);
my @malformed = (
    # [path, status, the document served (200)]
    # dot segments resolved by httpd: /etc/passwd, no such file
    ['/resourcesync/main/%2e%2e/%2e%2e/etc/passwd', 404],
    # dot segments above the root: refused by httpd
    ['/resourcesync/main/../../../etc/passwd', 400],
    ['/resourcesync/%2e%2e/%2e%2e/%2e%2e/etc/passwd', 400],
    # an encoded slash or NUL: httpd answers 404 (AllowEncodedSlashes Off)
    ['/resourcesync/main/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', 404],
    ['/resourcesync/main%2Fcapabilitylist.xml', 404], ['/resourcesync/small/resourcelist%2F1-1.xml', 404],
    ['/resourcesync/main/capabilitylist.xml%00', 404], ['/resourcesync/main/%00', 404],
    ['/resourcesync/%00/capabilitylist.xml', 404], ['/resourcesync/main/capabilitylist.xml%00.txt', 404],
    # no document of the set: the module's 404
    ['/resourcesync/main/%ff%fe', 404],
    # a broken escape: refused by httpd
    ['/resourcesync/main/%', 400], ['/resourcesync/main/%zz', 400],
    # long, but within LimitRequestLine: the module's 404
    ['/resourcesync/main/' . ('a' x 5000), 404], ['/resourcesync/' . ('x/' x 2500), 404],
    ['/resourcesync/small/resourcelist/' . ('9' x 5000) . '-1.xml', 404],
    # longer than LimitRequestLine (8190): refused by httpd
    ['/resourcesync/main/' . ('a' x 9000), 414],
    # a query string is ignored
    ['/resourcesync/main/capabilitylist.xml?' . ('q' x 5000), 200, 'cap'],
    ['/resourcesync/main/resourcelist.xml?%00', 200, 'rl'], ['/.well-known/resourcesync?%ff', 200, 'sd'],
    # dot segments resolved by httpd: the prefix alone, no document (the module's 404)
    ['/.well-known/%2e%2e/resourcesync', 404],
    # '.' segments removed and slashes merged by httpd: the document
    ['/resourcesync/main/./capabilitylist.xml', 200, 'cap'],
    ['/resourcesync//main//capabilitylist.xml', 200, 'cap'],
);
for my $c (@malformed) {
    my ($p, $status, $doc) = @$c;
    my $r = get("$B$p");
    my $show = length($p) > 60 ? substr($p, 0, 60) . '...' : $p;
    is($r->code, $status, "$show -> $status") or diag($r->status_line);
    if ($doc) {
        is($r->content, $BODY{$doc}, "$show: the $doc document");
    }
    else {
        unlike($r->content, qr/^root:/m, "$show: no file outside the tree");
    }
}

# --- Link: <capability list>; rel="resourcesync" ---------------------------
# rel="resourcesync" targets of a response's Link headers
sub rs_links {
    my ($r) = @_;
    my @t;
    for my $v ($r->header('Link')) {
        for my $l (split /,(?=\s*<)/, $v) {
            push @t, $1 if $l =~ /^\s*<([^>]*)>\s*;.*\brel\s*=\s*"?resourcesync"?/;
        }
    }
    return @t;
}

my $ims_file = "$B/generated/main/README.txt";
my $etag = get($ims_file)->header('ETag');
# Only successful answers about a file the set lists carry it (the
# Capability List must cover the linking resource): not error responses,
# not directories, hidden, excluded or unlisted symbolic-linked names.
my @link_cases = (
    # [what, method, url, headers, expected status, expected capability list]
    ['200 in main',       'GET',  $ims_file, [], 200, cap_url('main')],
    ['HEAD in main',      'HEAD', $ims_file, [], 200, cap_url('main')],
    ['206 in main',       'GET',  $ims_file, ['Range' => 'bytes=0-0'], 206, cap_url('main')],
    ['304 in main',       'GET',  $ims_file, ['If-None-Match' => $etag // '"none"'], 304, cap_url('main')],
    ['404 in main',       'GET',  "$B/generated/main/no-such-file.txt", [], 404, undef],
    ['200 in small',      'GET',  "$B/generated/small/f01.txt", [], 200, cap_url('small')],
    ['200 in rules',      'GET',  "$B/generated/rules/ok.txt", [], 200, cap_url('rules')],
    ['200 in rules/sub',  'GET',  "$B/generated/rules/sub/ok2.txt", [], 200, cap_url('rules')],
    ['200 anchored pattern not matching', 'GET', "$B/generated/rules/sub/drafts/d.txt", [], 200,
     cap_url('rules')],
    ['200 symlink inside', 'GET', "$B/generated/rules/link-in.txt", [], 200, cap_url('rules')],
    ['403 Require denied', 'GET', "$B/generated/rules/denied/d.txt", [], 403, undef],
    ['403 <Files> denied', 'GET', "$B/generated/rules/secret.txt", [], 403, undef],
    ['403 unreadable',    'GET',  "$B/generated/rules/unreadable.txt", [], 403, undef],
    ['401 basic auth',    'GET',  "$B/generated/rules/private/p.txt", [], 401, undef],
    ['200 excluded *.tmp', 'GET', "$B/generated/rules/scratch.tmp", [], 200, undef],
    ['200 excluded directory', 'GET', "$B/generated/rules/sub/cache/c.txt", [], 200, undef],
    ['200 excluded /drafts/*', 'GET', "$B/generated/rules/drafts/d.txt", [], 200, undef],
    ['200 dotfile',       'GET',  "$B/generated/rules/.hidden", [], 200, undef],
    ['200 in a dot directory', 'GET', "$B/generated/rules/.dotdir/x.txt", [], 200, undef],
    ['200 symlink leaving the set', 'GET', "$B/generated/rules/link-out.txt", [], 200, undef],
    ['200 through a symlinked directory', 'GET', "$B/generated/rules/link-dir/ok2.txt", [], 200, undef],
    ['200 dotfile in dots', 'GET', "$B/generated/dots/.dotfile", [], 200, cap_url('dots')],
    ['a directory of a set', 'GET', "$B/generated/rules/sub/", [], undef, undef],
    ['200 aliased',       'GET',  "$B/aliased/a1.txt", [], 200, cap_url('aliased')],
    ['404 aliased',       'GET',  "$B/aliased/missing.txt", [], 404, undef],
    ['200 vset',          'GET',  "$V/vdata/v1.txt", [], 200, cap_url('vset', $V, '/rs')],
    ['404 vset',          'GET',  "$V/vdata/missing.txt", [], 404, undef],
    ['outside: /index.html',     'GET', "$B/index.html", [], 200, undef],
    ['outside: 404 /missing',    'GET', "$B/missing.html", [], 404, undef],
    ['outside: vhost /outside.txt', 'GET', "$V/outside.txt", [], 200, undef],
    ['outside: the SD',          'GET', sd_url(), [], 200, undef],
    ['outside: the vhost SD',    'GET', sd_url($V), [], 200, undef],
);
for my $c (@link_cases) {
    my ($what, $m, $u, $h, $status, $want) = @$c;
    my $r = req($m, $u, @$h);
    is($r->code, $status, "Link/$what: $m $u -> $status") if defined $status;
    is_deeply([rs_links($r)], [defined $want ? ($want) : ()],
              "Link/$what: " . (defined $want ? "rel=resourcesync to $want" : 'no rel=resourcesync'))
        or diag('Link: ' . join(' | ', $r->header('Link')));
}

done_testing();
