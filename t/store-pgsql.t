# SPDX-License-Identifier: Apache-2.0
# A set on a PostgreSQL store (ResourceSyncStore pgsql), on a private
# cluster (t/pgcluster via RSPg): the documents as with SQLite, compared
# with the tree; changes listed; a graceful restart and a stop/start keep
# the journal; the status page names the node and the store without the
# DSN's password; a second node with the same DSN and set does not write
# the set while the first does (503 there, its log says why, nothing
# journaled twice) and takes it over when the first stops; PostgreSQL
# stopped under the running server: the status page says the store fails,
# the documents already written are still served, and once it is back a
# change is listed again without a restart of httpd.  Private servers only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use File::Basename ();
use RSPg;
use RSWebSubPeer ();
use RSTest qw(get doc xpc set_conf wait_for wait_ok STATE_CONF STATUS_CONF);

my $pg = RSPg::start();
plan skip_all => $RSPg::why unless $pg;
plan tests => 58;

# Every node has the same base URL (the balancer's) and sees the same tree.
my $BASE = 'http://rs.example';
my $hub = RSWebSubPeer->hub;    # every node publishes the set's notifications to it
my $PW = 's3cret-pw';                       # trust authentication: never checked,
my $DSN = $pg->dsn . " password=$PW";       # but never to be shown either

sub conf {
    my ($node, $tree, $base) = @_;
    return STATE_CONF . qq(ResourceSyncStore pgsql "$DSN"\n) . "ResourceSyncNodeName $node\n"
        . 'ResourceSyncBaseURL ' . ($base // $BASE) . "\n" . qq(DocumentRoot "$tree"\n)
        . qq(<Directory "$tree">\n    Require all granted\n</Directory>\n)
        . qq(<Directory "$tree/pg">\n    ResourceSyncSet pg\n    ResourceSyncHash md5\n)
        . "    ResourceSyncNotify on\n    ResourceSyncNotifyDelay 200ms\n"
        . '    ResourceSyncNotifyHub ' . $hub->url . "\n</Directory>\n"
        . STATUS_CONF;
}

my $na = RSTest::private_server();
my $tree = $na->dir . '/www';
$na->write_conf(conf('node-a', $tree));
$na->populate(files => { 'www/pg/a.txt' => "alpha\n", 'www/pg/b/c.txt' => "gamma gamma\n",
                        'www/pg/d.html' => "<p>d</p>\n" });
my $T = "$tree/pg";

# A document of the set from server $srv: the base URL in its locs is
# every node's; it is fetched from $srv.
sub at { my ($srv, $url) = @_; $url =~ s/^\Q$BASE\E/$srv->base/e; get($url) }

sub entries {
    my ($xml) = @_;
    my $x = xpc(doc($xml));
    return map { my $md = ($x->findnodes('rs:md', $_))[0];
                 { loc => $x->findvalue('sm:loc', $_),
                   map { ($_ => $md ? $md->getAttribute($_) : undef) }
                   qw(length type hash change datetime) } }
           $x->findnodes('/sm:urlset/sm:url');
}

# The Resource List compared with the tree: every file once, with its
# length, md5 and type; undef when it matches, else what differs.
sub rl_differs {
    my ($srv) = @_;
    my $r = at($srv, "$BASE/resourcesync/pg/resourcelist.xml");
    return 'Resource List: ' . $r->status_line unless $r->code == 200;
    my %want;
    for my $f (split /\n/, `cd $T && find . -type f | sort`) {
        $f =~ s{^\./}{};
        open my $fh, '<', "$T/$f" or die $!;
        local $/;
        my $c = <$fh>;
        $want{"$BASE/pg/$f"} = [length $c, 'md5:' . md5_hex($c),
                                $f =~ /\.html$/ ? 'text/html' : 'text/plain'];
    }
    my @e = entries($r->content);
    return 'entries: ' . scalar(@e) . ' for ' . scalar(keys %want) . ' files' if @e != keys %want;
    for my $e (@e) {
        my $w = delete $want{ $e->{loc} } or return "unknown entry $e->{loc}";
        my $got = join ' ', $e->{length}, $e->{hash}, $e->{type};
        return "$e->{loc}: $got, not @$w" unless $got eq "@$w";
    }
    return undef;
}

# Every change entry of every Change List of the set from $srv (empty
# while one does not answer 200).
sub changes {
    my ($srv) = @_;
    my $r = at($srv, "$BASE/resourcesync/pg/changelist.xml");
    return () unless $r->code == 200;
    my $x = xpc(doc($r->content));
    my @all;
    for my $loc (map { $_->textContent } $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc')) {
        my $lr = at($srv, $loc);
        return () unless $lr->code == 200;
        push @all, entries($lr->content);
    }
    return @all;
}

sub listed {
    my ($srv, $path, $change) = @_;
    return grep { $_->{loc} eq "$BASE/pg/$path" && $_->{change} eq $change } changes($srv);
}

# The journal in PostgreSQL: no record twice, sequences unique.
sub journal_twice {
    $pg->psql("SELECT COUNT(*) - COUNT(DISTINCT (setname, dir, name, dt)) FROM journal");
}

sub status {
    my ($srv) = @_;
    my $r = get($srv->base . '/rs-status?auto');
    return $r->code == 200 ? $r->content : '';
}

# ---------------------------------------------------------------- one node
$na->start_ok('node a starts on a PostgreSQL store');
ok(wait_for(sub { !rl_differs($na) }, 60), 'Resource List: every file with length, md5, type')
    or diag(rl_differs($na));
is(at($na, "$BASE/.well-known/resourcesync")->code, 200, 'Source Description');
like(at($na, "$BASE/resourcesync/pg/capabilitylist.xml")->content,
     qr{<loc>\Q$BASE\E/resourcesync/pg/resourcelist\.xml</loc>}, 'Capability List');
ok($pg->psql("SELECT COUNT(*) FROM inventory WHERE setname = 'pg'") >= 3,
   'the inventory is in PostgreSQL');
ok(!-e $na->dir . '/state/state.db', 'no SQLite store in the state directory');

my $st = status($na);
like($st, qr/^NodeName: node-a$/m, 'status: node name');
like($st, qr/^Store: pgsql$/m, 'status: store kind');
like($st, qr/^StoreLocation: PostgreSQL store '.*password=\*\*\*.*'$/m,
     'status: the store, its password masked');
my $all = join '', map { get($na->base . "/rs-status$_")->content } '', '?auto', '?json', '?text';
unlike($all, qr/\Q$PW\E/, 'status: no format shows the password');

RSTest::put("$T/new.txt", "new\n");
RSTest::put("$T/a.txt", "alpha changed\n");
unlink "$T/b/c.txt";
wait_ok(sub { listed($na, 'new.txt', 'created') && listed($na, 'a.txt', 'updated')
              && listed($na, 'b/c.txt', 'deleted') }, 30,
        'created, updated and deleted files are in the Change List');

# ------------------------------------------------------- restarts keep it
my $before = () = changes($na);
my $old_watcher = $na->watcher_pid // 0;
$na->graceful;
# The new generation's watcher, then a change: signalling returns at once.
wait_for(sub { my @w = $na->watchers; @w == 1 && $w[0] != $old_watcher }, 60);
RSTest::put("$T/g.txt", "after graceful\n");
# One whole reading of the lists that shows g.txt: the new generation
# answers 503 until its watcher says what the open list holds.
my $after = wait_ok(sub {
    my @c = changes($na);
    (grep { $_->{loc} eq "$BASE/pg/g.txt" && $_->{change} eq 'created' } @c) ? \@c : undef
}, 60, 'a change after a graceful restart is listed') || [];
is(scalar(grep { $_->{loc} eq "$BASE/pg/new.txt" && $_->{change} eq 'created' } @$after), 1,
   'graceful restart: earlier changes kept, none twice');
$na->stop;
$na->start_ok('node a starts again');
RSTest::put("$T/s.txt", "after stop and start\n");
wait_ok(sub { listed($na, 's.txt', 'created') }, 60, 'a change after stop and start is listed');
my @c = changes($na);
ok(@c >= $before + 2, 'stop and start: the journal continued');
my %seen;
is(scalar(grep { $seen{"$_->{loc} $_->{datetime}"}++ } @c), 0, 'no change entry twice');
is(journal_twice(), 0, 'the journal holds no record twice');
ok(wait_for(sub { !rl_differs($na) }, 30), 'Resource List after the restarts') or diag(rl_differs($na));
unlike($na->log_text, qr/\Q$PW\E/, 'the error log never shows the password');
like($na->log_text, qr/watcher started \(pid \d+, 1 sets, node node-a\)/,
     "the watcher's start line names the node");

# rs-tool on the same store: --store pgsql:DSN, the password never printed;
# backup leaves a PostgreSQL store to pg_dump.
my $tool = File::Basename::dirname(RSTest::Server::module_path()) . "/rs-tool";
my $out = `$tool status -d ${\ $na->dir}/state --store 'pgsql:$DSN' 2>&1`;
ok($? == 0 && $out =~ /^store PostgreSQL store '[^']*password=\*\*\*[^']*' bytes 0 schema \d+ history \S+$/m
   && $out =~ /^set pg: files \d+/m && $out !~ /\Q$PW\E/, 'rs-tool status --store pgsql:DSN')
    or diag($out);
$out = `$tool backup -d ${\ $na->dir}/state --store 'pgsql:$DSN' ${\ $na->dir}/bk 2>&1`;
is(($? >> 8) . " $out", "2 rs-tool: backup: the store is PostgreSQL: back it up with pg_dump "
   . "(e.g. pg_dump -Fc -f FILE DBNAME), not rs-tool\n", 'rs-tool backup refuses a PostgreSQL store');
# forget-set from another node's state directory: the set's lock file there
# is free, its lease is not.
my $other = $na->dir . '/other-state';
mkdir $other or die $!;
my $inv = $pg->psql("SELECT COUNT(*) FROM inventory WHERE setname = 'pg'");
$out = `$tool forget-set -d $other --store 'pgsql:$DSN' pg 2>&1`;
is(($? >> 8) . " $out", "1 rs-tool: forget-set: set 'pg' is written by a watcher of node node-a "
   . "(it holds the set's lease): remove its ResourceSyncSet on every node and restart them, or "
   . "stop them, then run forget-set again\n", 'rs-tool forget-set refuses a set another node writes');
is($pg->psql("SELECT COUNT(*) FROM inventory WHERE setname = 'pg'"), $inv, '... and removes nothing');

# ------------------------------------------ a second node, same DSN and set
my $nb = RSTest::private_server();
$nb->write_conf(conf('node-b', $tree));
$nb->start_ok('node b starts on the same store and tree');
ok(wait_for(sub { $nb->log_text =~ /set pg: another node writes it \(its lease is held in the PostgreSQL store '[^']*password=\*\*\*[^']*'\); this node does not write it/ }, 30),
   'node b says once that another node writes the set');
ok(wait_for(sub { status($nb) =~ /^SetMode: written-by-another-node$/m }, 10),
   'node b: status shows the set written by another node');
like(status($nb), qr/^SetWrittenBy: another node$/m, 'node b: ... as WrittenBy');
# The follower serves the writer's Resource List (t/follow-snapshots.t).
ok(wait_for(sub { my ($x, $y) = map { at($_, "$BASE/resourcesync/pg/resourcelist.xml") } $na, $nb;
                  $y->code == 200 && $y->content eq $x->content
                  && $y->header('ETag') eq $x->header('ETag') }, 30),
   "node b: its Resource List is node a's, bytes and ETag");
# ... and its Change Lists (t/follower-changelists.t).
ok(wait_for(sub { my ($x, $y) = map { at($_, "$BASE/resourcesync/pg/changelist.xml") } $na, $nb;
                  $y->code == 200 && $y->content eq $x->content
                  && $y->header('ETag') eq $x->header('ETag') }, 30),
   "node b: its Change List Index is node a's, bytes and ETag");
$hub->set(answer => 503);    # deliveries are retried: by whom?
RSTest::put("$T/while-b.txt", "written while b runs\n");
wait_ok(sub { listed($na, 'while-b.txt', 'created') }, 30, 'node a goes on writing the set');
sleep 3;    # b's lock retries (every 2 s) while a writes
is(scalar(() = listed($na, 'while-b.txt', 'created')), 1, 'node a lists the change once');
sub posts { grep { $_->{method} eq 'POST' && $_->{body} =~ /while-b\.txt/
                   && (!defined $_[0] || $_->{status} == $_[0]) } $hub->requests }
ok(wait_for(sub { posts(503) }, 60), 'the change is published to the hub, which refuses it');
$hub->set(answer => 200);
ok(wait_for(sub { posts(200) }, 60), 'delivered again once the hub takes it');
sleep 4;    # node b's delivery thread would retry the same row as well
is(scalar(posts(200)), 1,
   'the hub takes it once: only the node that writes the set delivers its notifications');
is(journal_twice(), 0, 'nothing journaled twice while both run');
ok(!rl_differs($na), "node a's Resource List stays right") or diag(rl_differs($na));
is(() = $nb->log_text =~ /another node writes it/g, 1, 'node b said it once');

$na->stop;
ok(wait_for(sub { $nb->log_text =~ /set pg: no other node writes it now; this node takes it over/ }, 30),
   'node b takes the set over once node a stopped');
ok(wait_for(sub { !rl_differs($nb) }, 60), "node b's Resource List matches the tree")
    or diag(rl_differs($nb));
RSTest::put("$T/by-b.txt", "written by b\n");
wait_ok(sub { listed($nb, 'by-b.txt', 'created') }, 30, 'node b lists a new change');
ok(listed($nb, 'while-b.txt', 'created'), "node b's Change Lists continue node a's journal");
is(journal_twice(), 0, 'still nothing journaled twice');
like(status($nb), qr/^SetWrittenBy: this node$/m, 'node b: status shows the set written by it');

# A node whose documents are of another base URL would start a new history,
# resetting the journal every node shares: it refuses to while another node
# writes, and says why.
my $records = $pg->psql('SELECT COUNT(*) FROM journal');
my $nc = RSTest::private_server();
$nc->write_conf(conf('node-c', $tree, 'http://elsewhere.example'));
$nc->populate(dirs => ['state/snapshots/pg/1']);
RSTest::put($nc->dir . '/state/snapshots/pg/1/resourcelist.xml', "<urlset/>\n");
$nc->start_ok('node c (another base URL, documents of its own) starts');
ok(wait_for(sub { $nc->log_text =~ /watcher: the PostgreSQL store '[^']*' holds history \S+, which another node writes, but this node's documents do not continue it \(.*\); not starting a new history for every node/ }, 30),
   'node c refuses to start a new history of the shared store');
is($pg->psql('SELECT COUNT(*) FROM journal'), $records, 'the shared journal is untouched');
$nc->stop;

# ----------------------------------- PostgreSQL stops under a running node
# The Resource List that lists by-b.txt (written some time after its change
# is journaled) is the one to be served on while PostgreSQL is down.
ok(wait_for(sub { !rl_differs($nb) }, 60), "node b's Resource List lists its own change")
    or diag(rl_differs($nb));
my $rl = at($nb, "$BASE/resourcesync/pg/resourcelist.xml")->content;
$pg->stop;
RSTest::put("$T/down.txt", "while PostgreSQL is down\n");
ok(wait_for(sub { status($nb) =~ /^StoreHealth: failing$/m }, 60),
   'status: the store fails while PostgreSQL is down');
my $r = at($nb, "$BASE/resourcesync/pg/resourcelist.xml");
is($r->code, 200, 'the Resource List already written is still served');
is($r->content, $rl, '... as it was');
$pg->restart;
wait_ok(sub { listed($nb, 'down.txt', 'created') }, 90,
        'once PostgreSQL is back, the change is listed without an httpd restart');
ok(wait_for(sub { status($nb) =~ /^StoreHealth: ok$/m }, 30), 'status: the store works again');
RSTest::put("$T/after.txt", "after\n");
wait_ok(sub { listed($nb, 'after.txt', 'created') }, 30, 'and the next change too');
is(journal_twice(), 0, 'the journal holds no record twice at the end');
unlike($nb->log_text, qr/\Q$PW\E/, "node b's log never shows the password");
unlike($nb->log_text, qr/watcher \(pid \d+\) died|Segmentation fault/,
       "node b's watcher never died, PostgreSQL's stop included");
$nb->stop;
