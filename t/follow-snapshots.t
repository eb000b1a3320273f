# SPDX-License-Identifier: Apache-2.0
# A follower serves the writer's Resource List byte-identical: two nodes on
# one tree and one PostgreSQL store (t/pgcluster via RSPg), the set with
# ResourceSyncMaxEntries 20 so that its list is an index of parts.  Node b
# starts after node a published several generations; then node b's
# resourcelist.xml and every part answer 200 with node a's bytes and ETag,
# and 304 to node a's ETag; after changes to the tree node b serves the new
# generation, whose kept parts keep their URL, bytes and ETag; the store's
# rows of the set stay bounded; node a stopped, node b takes the set over
# and publishes generations whose numbers continue, keeping the parts it
# copied.  Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSCluster;
use RSPg;
use RSTest qw(get req doc xpc wait_for wait_ok);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 25;

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f',
                       set => ['ResourceSyncMaxEntries 20']);
my ($na, $nb, $T) = ($c->node('a'), $c->node('b'), $c->tree);
mkdir "$T/d$_" or die "$T/d$_: $!" for 0 .. 2;
RSTest::put(sprintf('%s/d%d/file%03d.txt', $T, $_ % 3, $_), "content $_\n") for 1 .. 90;
my $BASE = $c->base;

sub at { my ($srv, $url, @h) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; req('GET', $url, @h) }

my $RL = "$BASE/resourcesync/f/resourcelist.xml";

# The Resource List of $srv: { index => bytes, etag => {url => etag},
# body => {url => bytes}, parts => [urls] }, or undef while a document
# does not answer 200.
sub list_of {
    my ($srv) = @_;
    my $r = at($srv, $RL);
    return undef unless $r->code == 200;
    my %l = (index => $r->content, etag => { $RL => $r->header('ETag') }, body => { $RL => $r->content });
    $l{parts} = [map { $_->textContent } xpc(doc($r->content))->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc')];
    for my $p (@{ $l{parts} }) {
        my $pr = at($srv, $p);
        return undef unless $pr->code == 200;
        $l{etag}{$p} = $pr->header('ETag');
        $l{body}{$p} = $pr->content;
    }
    return \%l;
}

# '' when both nodes serve the same documents with the same ETags, else
# what differs.
sub differs {
    my ($a, $b) = (list_of($na), list_of($nb));
    return 'node a answers no list' unless $a;
    return 'node b answers no list' unless $b;
    for my $u (sort keys %{ $a->{body} }) {
        return "$u: node b has no such document" unless defined $b->{body}{$u};
        return "$u: bytes differ" unless $a->{body}{$u} eq $b->{body}{$u};
        return "$u: ETag $a->{etag}{$u} vs $b->{etag}{$u}" unless $a->{etag}{$u} eq $b->{etag}{$u};
    }
    return scalar(keys %{ $b->{body} }) == scalar(keys %{ $a->{body} }) ? '' : 'node b has more documents';
}

sub gen_of {
    my $r = get($_[0]->base . '/rs-status?auto');
    return $r->code == 200 && $r->content =~ /^SetGeneration: (\d+)$/m ? $1 : 0;
}

sub rows { $pg->psql("SELECT (SELECT COUNT(*) FROM blobfiles WHERE setname = 'f') || ' ' || "
                     . "(SELECT COUNT(*) FROM blobchunks WHERE setname = 'f')") }

$na->start_ok('node a starts and writes the set');
wait_ok(sub { my $l = list_of($na); $l && @{ $l->{parts} } >= 3 }, 60,
        "node a serves a Resource List Index of parts");
# Two more generations before node b starts.
for my $k (1 .. 2) {
    my $g = gen_of($na);
    RSTest::put("$T/d0/early-$k.txt", "early $k\n");
    wait_ok(sub { gen_of($na) > $g }, 30, "node a publishes another generation ($k)");
}
my $before = gen_of($na);

$nb->start_ok('node b starts later on the same store and tree');
ok(wait_for(sub { $nb->log_text =~ /set f: another node writes it/ }, 30), 'node b follows the set');
ok(wait_for(sub { differs() eq '' }, 30),
   "node b serves node a's Resource List Index and every part: same bytes and ETag")
    or diag(differs());
is(gen_of($nb), $before, "node b publishes node a's generation");
# Node b keeps its copy in service between its tries to take the set
# (every 0.5 s here): never a 503 once it has one.
my @seen = map { select(undef, undef, undef, 0.1); at($nb, $RL)->code } 1 .. 30;
is(join(' ', grep { $_ != 200 } @seen), '', "node b answers 200 throughout, between its tries to take the set");
my $l = list_of($na);
my @parts = @{ $l->{parts} };
my @codes = map { at($nb, $_, 'If-None-Match' => $l->{etag}{$_})->code } $RL, @parts;
is("@codes", join(' ', (304) x (1 + @parts)), "node b answers 304 to node a's ETags");
like($nb->log_text, qr/set f: follows the writer's Resource List $before \(\d+ files, 0 linked, \d+ bytes copied\)/,
     'node b copied the current generation only, from the store');
unlike($nb->log_text, qr/follows the writer's Resource List (?!$before\b)\d+/, '... and no older one');

# A part of a generation newer than node b's (behind a balancer: an index
# read from the writer, its part asked of the follower): 503 with
# Retry-After at node b, which will have it in moments; 404 at the writer,
# where no such part exists.
my ($hist) = $parts[0] =~ m{/resourcelist/([0-9a-f]+)-\d+-\d+\.xml$};
my $future = "$BASE/resourcesync/f/resourcelist/$hist-" . ($before + 50) . "-1.xml";
my $fr = at($nb, $future);
is($fr->code . ' ' . ($fr->header('Retry-After') // '-'), '503 1',
   'node b: a part of a later generation is 503 with Retry-After: 1');
is(at($na, $future)->code, 404, 'node a, the writer: 404');

# --------------------------------------------------- a change on the tree
my $old = list_of($nb);
RSTest::put("$T/d1/file045.txt", "content 45, changed\n");
ok(wait_for(sub { gen_of($na) > $before && gen_of($nb) == gen_of($na) && differs() eq '' }, 30),
   "node b serves node a's new generation") or diag(differs());
my $new = list_of($nb);
my %was = map { $_ => 1 } @{ $old->{parts} };
my @kept = grep { $was{$_} } @{ $new->{parts} };
ok(@kept >= 1 && @kept < @{ $new->{parts} }, 'the new index keeps some part URLs')
    or diag(scalar(@kept) . ' of ' . scalar(@{ $new->{parts} }));
is_deeply([map { "$new->{etag}{$_} $new->{body}{$_}" } @kept],
          [map { "$old->{etag}{$_} $old->{body}{$_}" } @kept],
          "node b's kept parts keep their bytes and ETag");
like($nb->log_text, qr/set f: follows the writer's Resource List \d+ \(\d+ files, [1-9]\d* linked, \d+ bytes copied\)/,
     "node b links the kept parts it has");

# The store's rows stay bounded while generations come and go (node a
# prunes superseded ones an hour later: their rows stay that long, a
# generation costs the rows of its new files).
my $rows0 = rows();
for my $k (1 .. 3) {
    my $g = gen_of($na);
    RSTest::put("$T/d2/more-$k.txt", "more $k\n");
    wait_for(sub { gen_of($na) > $g }, 30);
}
my ($f0, $c0) = split ' ', $rows0;
my ($f1, $c1) = split ' ', rows();
my $nparts = @{ list_of($na)->{parts} };
# Each generation: its index, info and parts files, and the one or two
# parts the change rewrote; the kept parts are references (stored whole,
# three generations would add 3 x (parts + 3) chunks).
ok($nparts >= 4 && $c1 - $c0 <= 3 * (3 + 2),
   'three generations store the chunks of their new files only, not the kept parts')
    or diag("$nparts parts; rows before $rows0, after $f1 $c1");

my %times;
$times{$_}++ for $nb->log_text =~ /set f: follows the writer's Resource List (\d+)/g;
is(join(' ', grep { $times{$_} != 1 } sort keys %times), '', 'node b followed each generation once')
    or diag(join ' ', map { "$_ x$times{$_}" } sort keys %times);

# ------------------------------------------------- node b takes over
ok(wait_for(sub { differs() eq '' }, 30), 'node b caught up') or diag(differs());
my $followed = gen_of($nb);
$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set f: no other node writes it now; this node takes it over/ }, 30),
   'node b takes the set over once node a stopped');
RSTest::put("$T/d0/by-b.txt", "by b\n");
ok(wait_for(sub { my $x = list_of($nb); $x && grep { /by-b\.txt/ } values %{ $x->{body} } }, 60),
   'node b lists a new change');
my ($g) = $nb->log_text =~ /.*set f: published Resource List (\d+) \(\d+ entries, \d+ parts, [1-9]\d* kept\)/s;
ok($g && $g > $followed, "node b's generations continue the followed ones and keep their parts")
    or diag("followed $followed, published " . ($g // 'none with kept parts'));
is($pg->psql("SELECT v FROM meta WHERE k = 'snapshot-gen:f'"), gen_of($nb),
   "the store's snapshot-gen is node b's");
$nb->stop;
