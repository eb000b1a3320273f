# SPDX-License-Identifier: Apache-2.0
# A follower serves the Change Lists byte-identical to the writer's: two
# nodes on one tree and one PostgreSQL store (t/pgcluster via RSPg),
# ResourceSyncMaxEntries 3 so that lists close.  The follower, started
# after the writer closed lists, serves the Change List Index, every
# closed list and the open list with the writer's bytes and ETag, also
# while files change; after retention by age dropped a list of set g
# (no list closed with it) node b's index of g has node a's bytes, ETag
# and Last-Modified (the drop's time, from the store); a change the writer journals reaches it through
# LISTEN/NOTIFY (the time is printed, not asserted); HEAD and a Range with
# If-Range answer as on the writer; its LISTEN session killed
# (pg_terminate_backend), it says so once, still catches up (it reads the
# store every second) and listens again; the writer stopped, it takes the
# set over and continues the same lists.  Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use RSPg;
use RSTest qw(get head req doc xpc wait_for wait_ok STATE_CONF STATUS_CONF);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 29;

my $BASE = 'http://rs.example';
my $INDEX = "$BASE/resourcesync/f/changelist.xml";

sub conf {
    my ($node, $tree) = @_;
    return STATE_CONF . qq(ResourceSyncStore pgsql "${\ $pg->dsn}"\n)
        . "ResourceSyncNodeName $node\nResourceSyncFailover 2\nResourceSyncRescanInterval 1\n"
        . "ResourceSyncBaseURL $BASE\n" . qq(DocumentRoot "$tree"\n)
        . qq(<Directory "$tree">\n    Require all granted\n</Directory>\n)
        . qq(<Directory "$tree/f">\n    ResourceSyncSet f\n    ResourceSyncMaxEntries 3\n</Directory>\n)
        . qq(<Directory "$tree/g">\n    ResourceSyncSet g\n    ResourceSyncChangeListPeriod 1s\n)
        . qq(    ResourceSyncJournalRetention 2s\n</Directory>\n)
        . STATUS_CONF;
}

my $na = RSTest::private_server();
my $tree = $na->dir . '/www';
$na->write_conf(conf('node-a', $tree));
$na->populate(files => { 'www/f/a.txt' => "alpha\n", 'www/g/a.txt' => "alpha\n" });
my $T = "$tree/f";
my $nb = RSTest::private_server();
$nb->write_conf(conf('node-b', $tree));

sub at { my ($srv, $url, @h) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; req('GET', $url, @h) }
sub at_head { my ($srv, $url) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; head($url) }

# A file's ETag without the inode that a node-local validator may carry
# ("inode-size-mtime" before rs_answer_file dropped it): size and mtime.
sub ftag { my ($e) = @_; $e //= ''; $e =~ s/^"[0-9a-f]+-([0-9a-f]+-[0-9a-f]+)"$/"$1"/; $e }

# The Change List URLs of the index from $srv: closed ones, then the open one.
sub lists_of {
    my ($r) = @_;
    return () unless $r->code == 200;
    return map { $_->textContent }
        xpc(doc($r->content))->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc');
}

# '' when node b serves the index, every list it names and the open list
# as node a does (bytes, ETag, Last-Modified), else what differs.
sub differs {
    my $ia = at($na, $INDEX);
    my $ib = at($nb, $INDEX);
    return 'index: ' . $ia->code . ' ' . $ib->code unless $ia->code == 200 && $ib->code == 200;
    return 'index bytes' unless $ia->content eq $ib->content;
    return 'index ETag ' . $ia->header('ETag') . ' ' . $ib->header('ETag')
        unless ftag($ia->header('ETag')) eq ftag($ib->header('ETag'));
    return 'index Last-Modified' unless $ia->header('Last-Modified') eq $ib->header('Last-Modified');
    my @l = lists_of($ia);
    for my $i (0 .. $#l) {
        my ($ra, $rb) = (at($na, $l[$i]), at($nb, $l[$i]));
        my $open = $i == $#l;
        return "$l[$i]: " . $ra->code . ' ' . $rb->code unless $ra->code == 200 && $rb->code == 200;
        return "$l[$i] bytes" unless $ra->content eq $rb->content;
        my ($ea, $eb) = map { $open ? $_->header('ETag') : ftag($_->header('ETag')) } $ra, $rb;
        return "$l[$i] ETag $ea $eb" unless $ea eq $eb;
        return "$l[$i] Last-Modified" unless $ra->header('Last-Modified') eq $rb->header('Last-Modified');
    }
    return '';
}
sub same_ok {
    my ($what) = @_;
    my $d;
    ok(wait_for(sub { ($d = differs()) eq '' }, 30), $what) or diag("still differs: $d");
}

# The open list's URL, and whether a list the index names has an entry
# of $path: the open list, or a closed one (the change that brings the
# open list to ResourceSyncMaxEntries closes it at once, so from then on
# only the newest closed list serves it).
sub open_url { my @l = lists_of(at($_[0], $INDEX)); $l[-1] }
sub lists_name {
    my ($srv, $path) = @_;
    my $r = at($srv, $INDEX);
    return 0 unless $r->code == 200;
    for my $l (reverse lists_of($r)) {
        my $o = at($srv, $l);
        return 1 if $o->code == 200 && index($o->content, "<loc>$BASE/f/$path</loc>") >= 0;
    }
    return 0;
}
sub listen_sessions {
    $pg->psql(q(SELECT COUNT(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'));
}

$na->start_ok('node a starts and writes the set');
wait_ok(sub { at($na, "$BASE/resourcesync/f/resourcelist.xml")->code == 200 }, 60,
        "node a serves the set's Resource List");
RSTest::put("$T/early-$_.txt", "early $_\n") for 1 .. 8;
wait_ok(sub { my $r = at($na, $INDEX); $r->code == 200 && lists_of($r) >= 3 }, 30,
        'node a closed lists');

# --------------------------------------------- a follower started later
$nb->start_ok('node b starts later on the same store and tree');
ok(wait_for(sub { $nb->log_text =~ /set f: another node writes it/ }, 30),
   'node b: another node writes the set');
same_ok('node b serves the index, the closed lists and the open list as node a does');
# Set g: the list with this change closes after its period (1 s) and is
# dropped 2 s after it closed, while the rounds below run.
RSTest::put("$tree/g/g1.txt", "g1\n");

# ------------------------------------------------- while files change
for my $round (1 .. 3) {
    RSTest::put("$T/round$round-$_.txt", "round $round $_\n") for 1 .. 2;
    same_ok("round $round: node b serves the same Change Lists as node a");
}

# ------------------------------------- a change reaches the follower
# Both nodes polled every 5 ms: the time node b took after node a served
# the change.  It is the 15th record, the third of a list: the writer
# closes that list right after it, so it is served by the open list for a
# few milliseconds only, then by the newest closed list.
my ($tw, $tf);
RSTest::put("$T/timed.txt", "timed\n");
my $end = time + 30;
while (time < $end && !($tw && $tf)) {
    $tw ||= time if lists_name($na, 'timed.txt');
    $tf ||= time if lists_name($nb, 'timed.txt');
    sleep 0.005;
}
ok($tw && $tf, 'a change journaled by node a is served by node b');
diag(sprintf('node b served the change %.1f ms after node a did', 1000 * ($tf - $tw))) if $tw && $tf;
same_ok('node b serves the same Change Lists as node a after it');

# ----------------------------------- HEAD and Range on the follower
# An open list of at most one entry, so that one more change keeps it
# open (its third closes it).
for my $k (1 .. 5) {
    my $o = at($nb, open_url($nb));
    last if (() = $o->content =~ /<url>/g) < 2;
    RSTest::put("$T/fill-$k.txt", "fill $k\n");
    wait_for(sub { differs() eq '' }, 30);
}
my $ourl = open_url($nb);
my ($ha, $hb) = (at_head($na, $ourl), at_head($nb, $ourl));
my $ob = at($nb, $ourl);
is(join(' ', $hb->code, $hb->header('Content-Length'), $hb->header('ETag')),
   join(' ', 200, length($ob->content), $ob->header('ETag')),
   "HEAD of node b's open list: the GET's length and ETag");
is(join(' ', $hb->header('Content-Length'), $hb->header('ETag')),
   join(' ', $ha->header('Content-Length'), $ha->header('ETag')), "HEAD: node a's length and ETag");
my ($etag, $k) = ($ob->header('ETag'), length($ob->content) - length("</urlset>\n"));
RSTest::put("$T/ranged.txt", "ranged\n");
same_ok('caught up with the change after the Range baseline');
my @rh = ('Range' => "bytes=$k-", 'If-Range' => $etag);
my ($pa, $pb) = (at($na, $ourl, @rh), at($nb, $ourl, @rh));
is($pb->code, 206, "node b answers the Range with If-Range of the list it served with 206");
is(join('|', $pb->code, $pb->header('Content-Range'), $pb->content),
   join('|', $pa->code, $pa->header('Content-Range'), $pa->content),
   'node a and node b answer the Range alike');
like($pb->content, qr{<loc>\Q$BASE\E/f/ranged\.txt</loc>}, 'the 206 holds the new change');

# ------------------------------------- an expiry alone, on set g
# The index lost the list (and no list closed with it): node b's index is
# node a's, its mtime the time of the drop, which both read from the store.
my $GINDEX = "$BASE/resourcesync/g/changelist.xml";
my $gd;
ok(wait_for(sub {
       return 0 unless $pg->psql(q(SELECT v FROM meta WHERE k = 'journal-dropped:g')) =~ /^\d+$/;
       my ($ga, $gb) = (at($na, $GINDEX), at($nb, $GINDEX));
       $gd = join(' ', map { $_->code . ' ' . ftag($_->header('ETag')) . ' ' . ($_->header('Last-Modified') // '') } $ga, $gb);
       $ga->code == 200 && $gb->code == 200 && $ga->content eq $gb->content
           && lists_of($ga) == 1
           && ftag($ga->header('ETag')) eq ftag($gb->header('ETag'))
           && $ga->header('Last-Modified') eq $gb->header('Last-Modified');
   }, 30), "set g: after retention dropped its list, node b's index has node a's bytes, ETag and Last-Modified")
    or diag("a, b: $gd");

# ------------------------------------------- the LISTEN session killed
ok(wait_for(sub { listen_sessions() == 1 }, 10), 'one LISTEN session (node b)');
$pg->psql(q(SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'));
RSTest::put("$T/unheard-$_.txt", "unheard $_\n") for 1 .. 2;
ok(wait_for(sub { $nb->log_text =~ /cannot LISTEN for the changes of the sets other nodes write/ }, 30),
   'node b says that its LISTEN session was lost');
same_ok('node b catches up all the same');
ok(wait_for(sub { $nb->log_text =~ /LISTENing again for the changes/ && listen_sessions() == 1 }, 30),
   'node b listens again');
RSTest::put("$T/heard.txt", "heard\n");
same_ok('node b follows a change after it listens again');
is(() = $nb->log_text =~ /cannot LISTEN for the changes/g, 1, 'node b said the loss once');

# ------------------------------------------ the follower takes over
my @before = lists_of(at($nb, $INDEX));
$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over/ }, 30),
   'node b takes the set over once node a stopped');
RSTest::put("$T/after.txt", "after the takeover\n");
wait_ok(sub { lists_name($nb, 'after.txt') }, 30, 'node b lists a change it journaled');
my @after = lists_of(at($nb, $INDEX));
# The ids of the lists node a named, then node b: one run without a gap
# (retention may have dropped the oldest since).
my %ids = map { /-(\d+)\.xml$/ ? ($1 => 1) : () } @before, @after;
my @ids = sort { $a <=> $b } keys %ids;
is($ids[-1] - $ids[0] + 1, scalar(@ids), "node b's lists continue node a's ids without a gap")
    or diag("@ids");
my @c;
for my $loc (@after) {
    my $x = xpc(doc(at($nb, $loc)->content));
    push @c, map { $x->findvalue('sm:loc', $_) . ' ' . $x->findvalue('rs:md/@change', $_) }
             $x->findnodes('/sm:urlset/sm:url');
}
my %seen;
is(scalar(grep { $seen{$_}++ } @c), 0, 'every change listed once across the handover')
    or diag(join "\n", @c);
is($pg->psql(q(SELECT (COUNT(*) - COUNT(DISTINCT seq)) || ' ' || (MAX(seq) - MIN(seq) + 1 - COUNT(*))
               FROM journal WHERE setname = 'f')),
   '0 0', 'no sequence twice, no gap');
$nb->stop;
