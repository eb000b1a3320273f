# SPDX-License-Identifier: Apache-2.0
# Following the open Change List with byte ranges: a destination reads the
# list once, then only what was added (Range from its old length minus the
# closing tag, If-Range with the ETag it holds), rebuilding the document
# byte for byte.  Then the If-Range rule when the list closes or the tag is
# of another list, 416, a suffix range, HEAD and 304 with a Range.
# Private server, real files, inotify.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF put get req doc xpc wait_for wait_ok);

plan tests => 49;

my $srv = started_server(
    conf => STATE_CONF . set_conf('tail', 'www/tail', 'ResourceSyncMaxEntries 8'),
    files => { map { ("www/tail/base-$_.txt" => "base $_\n") } 1 .. 3 });
my $www = $srv->dir . '/www/tail';
my $B = $srv->base;
my $END = "</urlset>\n";

sub lists {
    my $r = get("$B/resourcesync/tail/changelist.xml");
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return [ map { { loc => $x->findvalue('sm:loc', $_), until => $x->findvalue('rs:md/@until', $_) } }
             $x->findnodes('/sm:sitemapindex/sm:sitemap') ];
}
sub nurls { my @m = $_[0] =~ m{<url>}g; scalar @m }

my $l0 = wait_ok(sub { my $l = lists(); $l && @$l ? $l : undef }, 60,
                 'the Change List Index names a list') || [{ loc => "$B/none" }];
my $open = $l0->[-1]{loc};
my $g = get($open);
is($g->code, 200, 'the open list answers 200');
is($g->header('Accept-Ranges'), 'bytes', 'the open list accepts byte ranges');
my ($doc, $etag) = ($g->content, $g->header('ETag'));
my $first_etag = $etag;
my $n = nurls($doc);
my $made = 0;

# Rounds: k new files, wait until the list shows them (plain GET), then
# read only the tail.
my %old;        # round -> [offset, etag] of the state before it
for my $k (1 .. 3) {
    $old{$k} = [length($doc) - length($END), $etag];
    put("$www/new-" . ++$made . ".txt", "new $made\n") for 1 .. $k;
    my $full = wait_for(sub { my $r = get($open); $r->code == 200 && nurls($r->content) == $n + $k ? $r : undef }, 30);
    ok($full, "round $k: the list shows $k new entries");
    my $off = length($doc) - length($END);
    my $t = req('GET', $open, Range => "bytes=$off-", 'If-Range' => $etag);
    is($t->code, 206, "round $k: 206 for the tail");
    my $total = length($full ? $full->content : '');
    is($t->header('Content-Range'), "bytes $off-" . ($total - 1) . "/$total", "round $k: Content-Range");
    is(length($t->content), $total - length($doc) + length($END),
       "round $k: the body is exactly the new entries and the closing tag");
    ok($t->content =~ m{\A(?:  <url>\n.*?  </url>\n){$k}</urlset>\n\z}s && nurls($t->content) == $k,
       "round $k: $k whole entries, then the closing tag")
        or diag($t->content);
    $doc = substr($doc, 0, $off) . $t->content;
    is($doc, $full && $full->content, "round $k: old bytes + tail = the whole document, byte for byte");
    is($t->header('ETag'), $full && $full->header('ETag'), "round $k: the 206 carries the current ETag");
    ($etag, $n) = ($t->header('ETag'), $n + $k);
}

# Nothing new: the tail is the closing tag.
my $off = length($doc) - length($END);
my $t = req('GET', $open, Range => "bytes=$off-", 'If-Range' => $etag);
ok($t->code == 206 && $t->content eq $END, 'no change: the tail is the closing tag alone');
# An earlier state of the same open list: its offset is still good.
$t = req('GET', $open, Range => "bytes=$old{2}[0]-", 'If-Range' => $old{2}[1]);
is($t->code, 206, 'If-Range with the ETag of an earlier state of the open list: 206');
is($t->content, substr($doc, $old{2}[0]), '... with everything added since that state');
# A bounded range in the middle, a suffix range.
$t = req('GET', $open, Range => 'bytes=100-149', 'If-Range' => $etag);
ok($t->code == 206 && $t->content eq substr($doc, 100, 50), 'bytes=100-149: those 50 bytes');
$t = req('GET', $open, Range => 'bytes=-15');
ok($t->code == 206 && $t->content eq substr($doc, -15)
   && $t->header('Content-Range') eq sprintf('bytes %d-%d/%d', length($doc) - 15, length($doc) - 1, length($doc)),
   'suffix range bytes=-15: the last 15 bytes');
# Unsatisfiable.
$t = req('GET', $open, Range => 'bytes=' . length($doc) . '-', 'If-Range' => $etag);
is($t->code, 416, 'a range starting at the end: 416');
is($t->header('Content-Range'), 'bytes */' . length($doc), '... with the length in Content-Range');
# Ranges not honoured: several, or a date, weak or malformed If-Range.
for my $c (['several ranges', Range => 'bytes=0-1,5-6'],
           ['If-Range with a date', Range => "bytes=$off-", 'If-Range' => $g->header('Last-Modified')],
           ['a weak If-Range', Range => "bytes=$off-", 'If-Range' => "W/$etag"],
           ['a malformed If-Range', Range => "bytes=$off-", 'If-Range' => '"o1-x"']) {
    my ($what, @h) = @$c;
    $t = req('GET', $open, @h);
    ok($t->code == 200 && $t->content eq $doc, "$what: 200 with the whole document");
}
# HEAD and conditionals.
my $h = req('HEAD', $open, Range => "bytes=$off-", 'If-Range' => $etag);
ok($h->code == 200 && $h->header('Content-Length') == length($doc) && $h->header('Accept-Ranges') eq 'bytes',
   'HEAD with a Range: 200 with the whole length (Range is for GET)');
is(req('GET', $open, Range => "bytes=$off-", 'If-None-Match' => $etag)->code, 304,
   'If-None-Match with the current ETag: 304, also with a Range');
$t = req('GET', $open, Range => "bytes=$off-", 'If-Range' => $etag, 'If-None-Match' => $etag);
ok($t->code == 304 && $t->content eq '',
   'a tail poll with If-Range and If-None-Match of the current state: 304 (If-None-Match first)');
$t = req('GET', $open, Range => "bytes=$old{2}[0]-", 'If-Range' => $old{2}[1], 'If-None-Match' => $old{2}[1]);
is($t->code, 206, '... with the tag of an earlier state: 206 with what was added');

# Close the list (ResourceSyncMaxEntries 8: 6 entries so far).
put("$www/new-" . ++$made . ".txt", "new $made\n") for 1 .. 3;
my $l1 = wait_for(sub { my $l = lists(); $l && @$l >= 2 && $l->[0]{until} ? $l : undef }, 30);
ok($l1 && $l1->[0]{loc} eq $open, 'the list closed');
$t = req('GET', $open, Range => "bytes=$off-", 'If-Range' => $etag);
is($t->code, 200, 'If-Range with an open-state ETag of a list now closed: 200');
ok($t->content =~ /until=/ && nurls($t->content) == 8 && $t->content eq get($open)->content,
   '... the whole closed list');
$t = req('GET', $open, Range => "bytes=$off-", 'If-Range' => $first_etag);
ok($t->code == 200 && $t->content eq get($open)->content, '... also with its first ETag');
my $open2 = $l1 ? $l1->[-1]{loc} : '';
my $g2 = wait_for(sub { my $r = get($open2); $r->code == 200 && nurls($r->content) == 1 ? $r : undef }, 30);
ok($g2, 'the next open list has the ninth change');
$t = req('GET', $open2, Range => 'bytes=' . (length($g2 ? $g2->content : '') - length($END)) . '-',
         'If-Range' => $etag);
ok($t->code == 200 && $t->content eq ($g2 ? $g2->content : 'none'),
   'If-Range with the ETag of another list: 200 with the whole document');
$t = req('GET', $open2, Range => 'bytes=' . (length($g2 ? $g2->content : '') - length($END)) . '-',
         'If-Range' => $g2 && $g2->header('ETag'));
ok($t->code == 206 && $t->content eq $END, 'the new open list follows with its own ETag');
is(get($open2)->header('Accept-Ranges'), 'bytes', 'the new open list accepts byte ranges');
ok($srv->log_text !~ /\[(?:[a-z_]+:)?(?:warn|error|crit|alert|emerg)\]/, 'no warning or error in the log')
    or diag($srv->log_text);
