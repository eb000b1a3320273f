# SPDX-License-Identifier: Apache-2.0
# Discovery outside the ResourceSync URLs: ResourceSyncRobots (a Sitemap
# line per set appended to /robots.txt, ResourceSync 1.1 section 6.3.4)
# and ResourceSyncHostMeta (/.well-known/host-meta and host-meta.json,
# RFC 6415, linking to the Source Description).  Private server: the main
# server with a set and neither directive (both off by default), and
# name-based virtual hosts with and without them, several sets, the
# operator's robots.txt present, absent, changing, denied to clients and
# unreadable to the run user, and the operator's own host-meta.  A second
# private server has them at server level: inherited by a virtual host,
# overridden by off, and an Alias deciding which file /robots.txt is.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use JSON::PP ();
use RSTest qw(started_server set_conf STATE_CONF req doc free_port wait_for put);

plan tests => 82;

my $XRD_NS = 'http://docs.oasis-open.org/ns/xri/xrd-1.0';
my $vport = free_port();

# vhost($name, $root, $sets, @directives): a name-based virtual host
# whose DocumentRoot is @DIR@/$root, declaring the sets of @$sets (each in
# $root/<name>), in that order.
sub vhost {
    my ($name, $root, $sets, @dirs) = @_;
    return qq(<VirtualHost 127.0.0.1:$vport>\n    ServerName $name\n    DocumentRoot "\@DIR\@/$root"\n)
        . join('', map { "    $_\n" } @dirs)
        . join('', map { set_conf($_, "$root/$_") } @$sets) . "</VirtualHost>\n";
}

my $ROBOTS_ON = "User-agent: *\nDisallow: /private/";    # no final newline
my $MAIN_ROBOTS = "User-agent: *\nDisallow: /\n";
my $SECRET = "User-agent: *\nDisallow: /secret-area/\n";
my $conf = STATE_CONF . set_conf('m', 'www/m') . <<"CONF"
Listen 127.0.0.1:$vport
<Directory "\@DIR\@/hosts">
    Require all granted
</Directory>
CONF
    . vhost('on.example', 'hosts/on', [qw(a b)], 'ResourceSyncRobots on', 'ResourceSyncHostMeta on')
    . vhost('bare.example', 'hosts/bare', ['c'], 'ResourceSyncRobots on', 'ResourceSyncHostMeta on')
    . vhost('denied.example', 'hosts/denied', ['d'], 'ResourceSyncRobots on',
            '<Files "robots.txt">', '    Require all denied', '</Files>')
    . vhost('unread.example', 'hosts/unread', ['u'], 'ResourceSyncRobots on')
    . vhost('nosets.example', 'hosts/nosets', [], 'ResourceSyncRobots on', 'ResourceSyncHostMeta on')
    . vhost('off.example', 'hosts/off', ['o'])
    # Sets on the DocumentRoot itself: robots.txt listed, and excluded.
    . vhost('inset.example', 'hosts/inset', [], 'ResourceSyncRobots on')
    . vhost('excl.example', 'hosts/excl', [], 'ResourceSyncRobots on');
$conf =~ s{(DocumentRoot "\@DIR\@/hosts/inset"\n)}{$1 . set_conf('i', 'hosts/inset')}e or die;
$conf =~ s{(DocumentRoot "\@DIR\@/hosts/excl"\n)}
          {$1 . set_conf('e', 'hosts/excl', 'ResourceSyncExclude robots.txt')}e or die;
my $srv = started_server(
    conf => $conf,
    files => { 'www/robots.txt' => $MAIN_ROBOTS, 'www/m/x.txt' => "x\n",
               'hosts/on/robots.txt' => $ROBOTS_ON, 'hosts/on/a/x.txt' => "a\n",
               'hosts/on/b/x.txt' => "b\n", 'hosts/bare/c/x.txt' => "c\n",
               'hosts/bare/.well-known/host-meta' => "operator's host-meta\n",
               'hosts/denied/robots.txt' => $SECRET, 'hosts/denied/d/x.txt' => "d\n",
               'hosts/unread/u/x.txt' => "u\n", 'root-only.txt' => $SECRET,
               'hosts/nosets/robots.txt' => $MAIN_ROBOTS, 'hosts/off/o/x.txt' => "o\n",
               'hosts/inset/robots.txt' => $MAIN_ROBOTS, 'hosts/excl/robots.txt' => $MAIN_ROBOTS },
    name => 'starts with the discovery directives on in some virtual hosts');
my $D = $srv->dir;
chmod 0600, "$D/root-only.txt";
symlink("$D/root-only.txt", "$D/hosts/unread/robots.txt") or die $!;

my $B = $srv->base;
my $V = "http://127.0.0.1:$vport";
sub at { my ($host, $path, @h) = @_; req('GET', "$V$path", Host => $host, @h) }
sub head_at { my ($host, $path, @h) = @_; req('HEAD', "$V$path", Host => $host, @h) }
sub lines { join '', map { "Sitemap: http://$_[0]:$vport/resourcesync/$_/resourcelist.xml\n" } @_[1 .. $#_] }

# --- robots.txt with the operator's file, two sets in declaration order.
my $r = at('on.example', '/robots.txt');
is($r->code, 200, 'on.example: /robots.txt 200');
is($r->content, "$ROBOTS_ON\n" . lines('on.example', qw(a b)),
   'on.example: the operator\'s bytes, a newline, then one Sitemap line per set in order');
is($r->header('Content-Type'), 'text/plain', 'robots.txt is text/plain');
my $etag = RSTest::strong_etag($r);
ok($etag, 'robots.txt has a strong ETag') or diag $r->header('ETag');
ok(defined $r->header('Last-Modified'), 'robots.txt has Last-Modified');
RSTest::wait_ok(sub { req('GET', "$V/resourcesync/b/resourcelist.xml", Host => 'on.example')->code == 200 },
                30, 'the Resource List named in robots.txt is served at that URL');
is(at('on.example', '/robots.txt', 'If-None-Match' => $etag)->code, 304,
   'robots.txt: If-None-Match with its ETag is a 304');
is(at('on.example', '/robots.txt', 'If-Modified-Since' => $r->header('Last-Modified'))->code, 304,
   'robots.txt: If-Modified-Since its Last-Modified is a 304');
my $h = head_at('on.example', '/robots.txt');
is(join(' ', $h->code, $h->content, $h->header('Content-Length'), $h->header('ETag')),
   join(' ', 200, '', length($r->content), $etag),
   'robots.txt: HEAD has no body, the GET\'s length and ETag');

# The file changes: the bytes follow and the ETag changes (size kept, so
# only the bytes tell them apart).
(my $changed = $ROBOTS_ON) =~ s/private/privatE/;
put("$D/hosts/on/robots.txt", "$changed\n");
$r = at('on.example', '/robots.txt');
is($r->content, "$changed\n" . lines('on.example', qw(a b)),
   'the file changed: its new bytes are served (its final newline kept, none added)');
isnt(RSTest::strong_etag($r) // '', $etag, 'the file changed: the ETag changed');
is(at('on.example', '/robots.txt', 'If-None-Match' => $etag)->code, 200,
   'the old ETag no longer gets a 304');
# Bytes changed under an mtime set back (cp -p, rsync -t): If-Modified-Since
# the Last-Modified served before must not be a 304.
my $lm = $r->header('Last-Modified');
my $etag2 = RSTest::strong_etag($r);
sleep 1;    # Last-Modified has whole seconds: the change must be in a later one
put("$D/hosts/on/robots.txt", "$ROBOTS_ON\n");
utime(time - 86400, time - 86400, "$D/hosts/on/robots.txt") or die $!;
$r = at('on.example', '/robots.txt', 'If-Modified-Since' => $lm);
is($r->code, 200, 'bytes changed with the mtime set back a day: If-Modified-Since is a 200');
is($r->content, "$ROBOTS_ON\n" . lines('on.example', qw(a b)), '... with the new bytes');
isnt(RSTest::strong_etag($r) // '', $etag2, '... and a new ETag');

# --- without the operator's file: just the lines.
$r = at('bare.example', '/robots.txt');
is($r->code . ' ' . $r->content, '200 ' . lines('bare.example', 'c'),
   'bare.example: no robots.txt file: just the Sitemap line of its one set');
ok(RSTest::strong_etag($r), 'bare.example: a strong ETag');
my $bare_etag = RSTest::strong_etag($r);

# A robots.txt past the 500 KiB crawlers read is left as it is (lines
# after it might never be read), with an info line; gone, the lines return.
my $big = ("# padding\n" x 51200) . "User-agent: *\n";    # 512,014 bytes
put("$D/hosts/bare/robots.txt", $big);
$r = at('bare.example', '/robots.txt');
ok($r->code == 200 && $r->content eq $big, 'bare.example: a robots.txt of 512,014 bytes is served unchanged')
    or diag $r->code . ' ' . length($r->content);
like($srv->log_text, qr/\[resourcesync:info\].*\Q$D\E\/hosts\/bare\/robots\.txt has 512014 bytes, more than crawlers read \(512000\): served without Sitemap lines/,
     '... and an info line says why');
unlink "$D/hosts/bare/robots.txt";
is(at('bare.example', '/robots.txt')->content, lines('bare.example', 'c'), 'removed: the line alone again');

# --- a robots.txt denied to clients, and one the run user cannot read.
$r = at('denied.example', '/robots.txt');
is($r->code, 403, 'denied.example: robots.txt denied by its <Files> section: 403');
unlike($r->content, qr/secret-area|Sitemap/, 'denied.example: nothing of the file or the lines leaks');
$r = at('unread.example', '/robots.txt');
is($r->code, 403, 'unread.example: robots.txt links to a file only root may read: 403');
unlike($r->content, qr/secret-area|Sitemap/, 'unread.example: nothing of the file leaks');
is(head_at('unread.example', '/robots.txt')->code, 403, 'unread.example: HEAD is a 403 too');

# --- a robots.txt that its set lists keeps the bytes the lists describe;
# excluded from the set, it gets the lines.
RSTest::wait_ok(sub { req('GET', "$V/resourcesync/i/resourcelist.xml", Host => 'inset.example')->code == 200 },
                30, 'inset.example: the first Resource List is written');
my $listed = req('GET', "$V/resourcesync/i/resourcelist.xml", Host => 'inset.example')->content;
like($listed, qr{<loc>http://inset\.example:$vport/robots\.txt</loc>\s*<lastmod>[^<]+</lastmod>\s*<rs:md[^>]* length="@{[length $MAIN_ROBOTS]}"},
     'inset.example: its set lists robots.txt with the file\'s length');
$r = at('inset.example', '/robots.txt');
is($r->code . ' ' . $r->content, "200 $MAIN_ROBOTS", 'inset.example: the listed robots.txt is served unchanged');
is($r->header('Link'), "<http://inset.example:$vport/resourcesync/i/capabilitylist.xml>; rel=\"resourcesync\"",
   'inset.example: with the Link header of a listed file');
$r = at('excl.example', '/robots.txt');
is($r->content, $MAIN_ROBOTS . lines('excl.example', 'e'),
   'excl.example: robots.txt excluded from the set gets the Sitemap line');

# --- off: the main server (no directive) and off.example.
$r = req('GET', "$B/robots.txt");
is($r->code . ' ' . $r->content, "200 $MAIN_ROBOTS", 'main server (off by default): its robots.txt unchanged');
unlink "$D/www/robots.txt";
is(req('GET', "$B/robots.txt")->code, 404, 'main server: without a file, /robots.txt is a 404');
is(at('off.example', '/robots.txt')->code, 404, 'off.example (a set, no directive): 404');
is(at('nosets.example', '/robots.txt')->content, $MAIN_ROBOTS,
   'nosets.example (directives on, no set): its robots.txt unchanged');
for my $p ('/.well-known/host-meta', '/.well-known/host-meta.json') {
    is(req('GET', "$B$p")->code, 404, "main server (off by default): $p is a 404");
    is(at('off.example', $p)->code, 404, "off.example: $p is a 404");
    is(at('nosets.example', $p)->code, 404, "nosets.example (no set): $p is a 404");
}

# --- host-meta in XRD and JRD.
my $sd = "http://on.example:$vport/.well-known/resourcesync";
is(at('on.example', '/.well-known/resourcesync')->code, 200, 'on.example: the Source Description is served');
$r = at('on.example', '/.well-known/host-meta');
is($r->code, 200, 'host-meta: 200');
is($r->header('Content-Type'), 'application/xrd+xml', 'host-meta: application/xrd+xml');
my $x = eval { doc($r->content) };
ok($x, 'host-meta parses as XML') or diag $@;
my $root = $x ? $x->documentElement : undef;
is($root && $root->namespaceURI . ' ' . $root->localname, "$XRD_NS XRD", 'host-meta: root is xrd:XRD');
my @links = $root ? $root->getChildrenByTagNameNS($XRD_NS, 'Link') : ();
is(scalar(@links), 1, 'host-meta: one Link');
is(join(' ', map { $_->getAttribute('rel') . '=' . $_->getAttribute('href') } @links),
   "resourcesync=$sd", 'host-meta: rel="resourcesync", href the Source Description');
is(join(' ', map { $_->getAttribute('type') // '' } @links), 'application/xml',
   'host-meta: the link\'s type is application/xml');
is(scalar(grep { $_->nodeType == 1 } $root ? $root->childNodes : ()), 1,
   'host-meta: no other element in XRD');
my $xrd_etag = RSTest::strong_etag($r);
ok($xrd_etag, 'host-meta: a strong ETag');

$r = at('on.example', '/.well-known/host-meta.json');
is($r->code, 200, 'host-meta.json: 200');
is($r->header('Content-Type'), 'application/json', 'host-meta.json: application/json');
my $j = eval { JSON::PP->new->decode($r->content) };
ok($j, 'host-meta.json parses as JSON') or diag $@;
is_deeply($j, { links => [ { rel => 'resourcesync', type => 'application/xml', href => $sd } ] },
          'host-meta.json: exactly one link, rel resourcesync to the Source Description');
my $jrd_etag = RSTest::strong_etag($r);
ok($jrd_etag, 'host-meta.json: a strong ETag');
isnt($jrd_etag // '', $xrd_etag // '', 'the two documents have their own ETags');

for ([ '/.well-known/host-meta', $xrd_etag ], [ '/.well-known/host-meta.json', $jrd_etag ]) {
    my ($p, $e) = @$_;
    my $g = at('on.example', $p);
    is(at('on.example', $p, 'If-None-Match' => $e)->code, 304, "$p: If-None-Match is a 304");
    is(at('on.example', $p, 'If-Modified-Since' => $g->header('Last-Modified'))->code, 304,
       "$p: If-Modified-Since is a 304");
    my $hh = head_at('on.example', $p);
    is(join(' ', $hh->code, $hh->content, $hh->header('Content-Length'), $hh->header('ETag')),
       join(' ', 200, '', length($g->content), $e), "$p: HEAD without a body, same length and ETag");
    is(req('POST', "$V$p", Host => 'on.example')->code, 405, "$p: POST is a 405");
}

# --- the operator's own host-meta wins, with one notice naming it.
$r = at('bare.example', '/.well-known/host-meta');
is($r->code . ' ' . $r->content, "200 operator's host-meta\n",
   'bare.example: the operator\'s own host-meta is served');
$r = at('bare.example', '/.well-known/host-meta.json');
is($r->code, 200, 'bare.example: host-meta.json (no file of the operator\'s) is the module\'s');
is_deeply(eval { JSON::PP->new->decode($r->content) },
          { links => [ { rel => 'resourcesync', type => 'application/xml',
                         href => "http://bare.example:$vport/.well-known/resourcesync" } ] },
          'bare.example: host-meta.json links to its own Source Description');
my $file = "$D/hosts/bare/.well-known/host-meta";
my @notices = grep { /\[resourcesync:notice\].*ResourceSyncHostMeta: \Q$file\E is the operator's own file/ }
              split /\n/, $srv->log_text;
is(scalar(@notices), 1, 'one notice names the operator\'s host-meta') or diag explain \@notices;
# A file created while the server runs wins as well.
put("$D/hosts/bare/.well-known/host-meta.json", "{}\n");
is(at('bare.example', '/.well-known/host-meta.json')->content, "{}\n",
   'a host-meta.json created while the server runs is the operator\'s');

# --- the lines change: a restart with a second set on bare.example.
$srv->stop;
my $conf2 = $conf;
my $c_set = set_conf('c', 'hosts/bare/c');
my $cc = $c_set . set_conf('c2', 'hosts/bare/c2');
$conf2 =~ s/\Q$c_set\E/$cc/ or die 'set c not found in the configuration';
$srv->populate(files => { 'hosts/bare/c2/x.txt' => "c2\n" });
$srv->write_conf($conf2);
$srv->start_ok('restarts with a second set on bare.example');
$r = at('bare.example', '/robots.txt');
is($r->content, lines('bare.example', qw(c c2)), 'after the restart: a line for each set');
isnt(RSTest::strong_etag($r) // '', $bare_etag, 'the lines changed: the ETag changed');
@notices = grep { /ResourceSyncHostMeta: .* is the operator's own file/ } split /\n/, $srv->log_text;
is(scalar(@notices), 3, 'each start logs one notice per operator file (one, then two)')
    or diag explain \@notices;

my @bad = grep { /\[resourcesync:(warn|error)\]/ } split /\n/, $srv->log_text;
is(scalar(grep { /\[resourcesync:error\].*mod_resourcesync: cannot read \Q$D\E\/hosts\/unread\/robots\.txt/
                 && /Permission denied/ } @bad), 2,
   'each request (GET, HEAD) for the unreadable robots.txt logs the cause once');
is_deeply([grep { !/cannot read \Q$D\E\/hosts\/unread\/robots\.txt/ } @bad], [],
          'no other warning or error');
$srv->stop;

# --- a second server: the directives at server level are inherited by a
# virtual host that does not set them, and overridden by one that says
# off; an Alias decides which file /robots.txt is.
my $vport2 = free_port();
my $srv2 = started_server(
    conf => STATE_CONF . "ResourceSyncRobots on\nResourceSyncHostMeta on\n"
            . qq(Alias /robots.txt "\@DIR\@/shared/robots.txt"\n<Directory "\@DIR\@/shared">\n    Require all granted\n</Directory>\n)
            . set_conf('m', 'www/m') . "Listen 127.0.0.1:$vport2\n"
            . qq(<Directory "\@DIR\@/hosts">\n    Require all granted\n</Directory>\n)
            . join('', map { my ($n, @d) = @$_;
                             qq(<VirtualHost 127.0.0.1:$vport2>\n    ServerName $n\n    DocumentRoot "\@DIR\@/hosts/$n"\n)
                             . join('', map { "    $_\n" } @d) . set_conf("s-$n", "hosts/$n/s") . "</VirtualHost>\n" }
                       ['inherit.example'], ['off.example', 'ResourceSyncRobots off', 'ResourceSyncHostMeta off']),
    files => { 'www/m/x.txt' => "m\n", 'shared/robots.txt' => $MAIN_ROBOTS, 'www/robots.txt' => "not this one\n",
               'hosts/inherit.example/s/x.txt' => "i\n", 'hosts/off.example/s/x.txt' => "o\n", },
    name => 'a second server starts with the directives at server level');
my $B2 = $srv2->base;
my $V2 = "http://127.0.0.1:$vport2";
is(req('GET', "$B2/robots.txt")->content,
   $MAIN_ROBOTS . "Sitemap: $B2/resourcesync/m/resourcelist.xml\n",
   'main server: the file its Alias maps /robots.txt to, then its line');
is(req('GET', "$V2/robots.txt", Host => 'inherit.example')->content,
   $MAIN_ROBOTS . "Sitemap: http://inherit.example:$vport2/resourcesync/s-inherit.example/resourcelist.xml\n",
   'inherit.example inherits ResourceSyncRobots on (and the Alias): the file, then its own set\'s line');
is(req('GET', "$V2/.well-known/host-meta.json", Host => 'inherit.example')->code, 200,
   'inherit.example inherits ResourceSyncHostMeta on');
$r = req('GET', "$V2/robots.txt", Host => 'off.example');
is($r->code . ' ' . $r->content, "200 $MAIN_ROBOTS", 'off.example (off over the server\'s on): its file unchanged');
is(req('GET', "$V2/.well-known/host-meta", Host => 'off.example')->code, 404,
   'off.example: no host-meta');
$srv2->stop;
