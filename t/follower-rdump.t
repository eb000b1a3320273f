# SPDX-License-Identifier: Apache-2.0
# A follower serves the Resource Dump byte-identical to the writer's: two
# nodes on one tree and one PostgreSQL store (t/pgcluster via RSPg), the
# set with Resource Dumps of small packages.  After the first dump and
# after a change that rebuilds one package, node b answers
# resourcedump.xml and every package and manifest copy it lists with node
# a's status, bytes, ETag and Last-Modified, and 304 to node a's ETag; the
# package the change left alone is linked, not copied; the superseded
# generation goes after its grace, on node b's disk and from the store.  Node a stopped,
# node b takes the set over and its next dump keeps the packages (same
# URLs, same bytes).  Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use Digest::MD5 qw(md5_hex);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSCluster;
use RSPg;
use RSTest qw(req wait_for);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 15;

my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], setname => 'f',
                       set => ['ResourceSyncResourceDump 1', 'ResourceSyncDumpMaxEntries 4',
                               'ResourceSyncDumpGrace 1']);
my ($na, $nb, $T) = ($c->node('a'), $c->node('b'), $c->tree);
RSTest::put(sprintf("$T/f%02d.txt", $_), "file $_\n") for 0 .. 11;
my $BASE = $c->base;
my $DUMP = "$BASE/resourcesync/f/resourcedump.xml";

sub at { my ($srv, $url, @h) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; req('GET', $url, @h) }

# The URLs of the dump's packages and manifest copies, as node a lists them.
sub listed {
    my ($srv) = @_;
    my $r = at($srv, $DUMP);
    return () unless $r->code == 200;
    my %u = map { $_ => 1 } $r->content =~ m{"?(\Q$BASE\E/resourcesync/f/resourcedump/[^"<\s]+)}g;
    return sort keys %u;
}

sub answer {
    my ($srv, $url) = @_;
    my $r = at($srv, $url);
    return join "\n", $r->code, map({ $r->header($_) // '-' } qw(ETag Last-Modified)),
        md5_hex($r->content);
}

# '' when node b answers the dump and everything it lists as node a, else
# what differs.
sub differs {
    my @u = listed($na);
    return 'node a lists nothing' unless @u;
    for my $u ($DUMP, @u) {
        my ($a, $b) = (answer($na, $u), answer($nb, $u));
        return "$u: node a [$a]\nnode b [$b]" if $a ne $b;
    }
    return '';
}

$na->start_ok('node a starts and writes the set');
ok(wait_for(sub { my @u = listed($na); @u >= 6 }, 30), 'node a publishes a dump of several packages')
    or diag(at($na, $DUMP)->code);
$nb->start_ok('node b starts later on the same store and tree');
ok(wait_for(sub { $nb->log_text =~ /set f: another node writes it/ && differs() eq '' }, 20),
   "node b answers resourcedump.xml and every package and manifest copy as node a: "
   . 'status, bytes, ETag, Last-Modified') or diag(differs());
my @codes = map { at($nb, $_, 'If-None-Match' => at($na, $_)->header('ETag'))->code }
    $DUMP, listed($na);
is(join(' ', grep { $_ != 304 } @codes), '', "node b answers 304 to node a's ETags");
# A package of no generation on disk: 404 on both when the store does not
# hold it either; 503 with Retry-After on node b while the store holds it
# (the writer stored it, node b copies it in a moment: here a row put in
# the writer's generation by hand, taken out again).
my ($zip) = grep { /\.zip$/ } listed($na);
(my $unknown = $zip // '') =~ s/-[0-9a-f]{16}\.zip$/-0123456789abcdef.zip/;
my $r = at($nb, $unknown);
is(join(' ', $r->code, at($na, $unknown)->code), '404 404',
   'a package on no generation and not in the store is 404 on both nodes');
my $row = "('f', 'dump', (SELECT MAX(gen) FROM blobfiles WHERE setname = 'f' AND kind = 'dump'),"
          . " '0123456789abcdef.zip', 1, 0, 0, '0123456789abcdef.zip')";
$pg->psql("INSERT INTO blobfiles (setname, kind, gen, name, size, mtime, src_gen, src_name) "
          . "VALUES $row");
$r = at($nb, $unknown);
is(join(' ', $r->code, $r->header('Retry-After') // '-', at($na, $unknown)->code), '503 1 404',
   'one the store holds is 503 with Retry-After on node b (not copied yet), 404 on node a');
$pg->psql("DELETE FROM blobfiles WHERE setname = 'f' AND name = '0123456789abcdef.zip'");

# ------------------------------------------------- one package rebuilt
my @before = listed($na);
RSTest::put("$T/f05.txt", "file 5, second version\n");
ok(wait_for(sub { my @u = listed($na); @u && "@u" ne "@before" }, 20),
   'node a publishes a new dump after the change');
ok(wait_for(sub { differs() eq '' }, 30), "node b serves node a's new dump within moments")
    or diag(differs());
like($nb->log_text, qr/set f: follows the writer's Resource Dump \d+ \(\d+ files, [1-9]\d* linked/,
     'node b linked the packages the change left alone');
# Node b's dump generations on disk (its state directory's dumps/f).
sub gens_b {
    opendir(my $d, $nb->dir . '/state/dumps/f') or return ();
    return grep { /^\d+$/ } readdir $d;
}
ok(wait_for(sub { gens_b() == 1 }, 30),
   'node b removes the superseded generation after ResourceSyncDumpGrace (1 s), as node a does')
    or diag(join ' ', gens_b());
sub stored_gens {
    $pg->psql("SELECT COUNT(DISTINCT gen) FROM blobfiles WHERE setname = 'f' AND kind = 'dump'");
}
ok(wait_for(sub { stored_gens() == 1 }, 30),
   "node a drops the store's copy of the generation it removed") or diag(stored_gens());

# ------------------------------------------------- node b takes over
my @last = listed($na);
my %md5 = map { $_ => md5_hex(at($na, $_)->content) } @last;
$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set f: published Resource Dump/ }, 20),
   'node b takes the set over and builds its dump');
my @now = listed($nb);
is("@now", "@last", 'its dump lists the same packages (same URLs)');
is(join(' ', grep { md5_hex(at($nb, $_)->content) ne $md5{$_} } @last), '',
   '... with the same bytes');
$nb->stop;
