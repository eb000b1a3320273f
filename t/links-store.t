# SPDX-License-Identifier: Apache-2.0
# The watcher keeps the links of a set's resources in its store: every
# listed row carries its resolved rs:ln relations (forward by the
# ResourceSyncLink rules, inverse from the rows that link to it), never
# the mirrors, which the documents render from the configuration; when a
# target appears, changes or disappears while the server runs, the rows
# that link to it follow without a journal record (they are recorded as
# relinked); a change of the mirrors across a restart resolves nothing; a
# change of the rules across a restart resolves every row again once,
# logged at info, with no journal record and no file decided again; a set
# without rules, or with mirrors only, keeps no links and logs nothing
# about them.  A Resource List Index rewrites the part that holds a source
# whose target changed (no record names it) and keeps the others.  A
# store of schema version 7 whose rows and records hold mirror links (as
# the module stored them before) is migrated: records lose their links,
# rows are resolved again, and every document shows each mirror once.
# Private server; the store is read with sqlite3 (the documents' <rs:ln>
# in detail are links.t's).
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF wait_for wait_ok);
use Digest::SHA qw(sha256_hex);
use JSON::PP ();

plan tests => 52;

my $RULE   = 'ResourceSyncLink describedby "^records/([0-9]+)\.pdf$" "meta/$1.xml"';
my $MIRROR = 'ResourceSyncMirror http://mirror.example/data/';
my $XRULE = 'ResourceSyncLink describedby "^records/([0-9]+)\.pdf$" "meta/$1.xml"';
sub conf {
    STATE_CONF . set_conf('l', 'www/data', @_) . set_conf('p', 'www/plain')
        . set_conf('x', 'www/idx', $XRULE, 'ResourceSyncMaxEntries 10')
        . set_conf('m', 'www/mirrored', $MIRROR)
}
my %idx = map { ("www/idx/records/$_.pdf" => "pdf $_\n", "www/idx/meta/$_.xml" => "<m$_/>\n") }
          10 .. 49;

my $srv = started_server(
    conf  => conf($RULE, $MIRROR),
    files => { 'www/data/records/1.pdf' => "pdf one\n", 'www/data/meta/1.xml' => "<m/>\n",
               'www/data/records/2.pdf' => "pdf two\n", 'www/data/other.txt' => "o\n",
               'www/plain/a.txt' => "a\n", 'www/mirrored/records/1.pdf' => "pdf m\n",
               'www/mirrored/b.txt' => "b\n", %idx });
my $db = $srv->dir . '/state/state.db';
my $base = $srv->base . '/data/';

sub rows {
    my ($sql) = @_;
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    return [] if $out =~ /^\s*$/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}

# The links of a row as "rel href length" joined with "; " (length "" when
# none), undef without a row.
sub links_of {
    my ($set, $dir, $name) = @_;
    my $r = rows("SELECT links FROM inventory WHERE setname = '$set' AND dir = '$dir' "
                 . "AND name = '$name'");
    return undef unless @$r;
    my $enc = $r->[0]{links} // '';
    return join '; ', map { my @f = split /\x1f/, $_, -1; "$f[0] $f[1] $f[5]" }
                      grep { length } split /\x1e/, $enc;
}
sub journal_count { rows("SELECT COUNT(*) AS n FROM journal WHERE setname = 'l'")->[0]{n} }
sub relinked { [ map { "$_->{dir}/$_->{name}" }
                 @{ rows("SELECT dir, name FROM relinked WHERE setname = 'l' ORDER BY dir, name") } ] }
sub log_lines { my ($re) = @_; scalar(() = $srv->log_text =~ /$re/g) }

# The <rs:ln> of the entry of loc in set's Resource List, as "rel href
# length" joined with "; ", or undef.
sub list_links {
    my ($l, $loc) = @_;
    for my $xml (@{ $l->{docs} }) {
        my $x = RSTest::xpc(RSTest::doc($xml));
        for my $u ($x->findnodes('/sm:urlset/sm:url')) {
            next unless $x->findvalue('sm:loc', $u) eq $loc;
            return join '; ', map { join ' ', $_->getAttribute('rel'), $_->getAttribute('href'),
                                    $_->getAttribute('length') // '' } $x->findnodes('rs:ln', $u);
        }
    }
    return undef;
}
# The same for the newest entry of loc in set's Change Lists, or undef.
sub cl_links {
    my ($set, $loc) = @_;
    my $ix = RSTest::cl_index($set, $srv->base) or return undef;
    my $last;
    for my $cl (@{ $ix->{lists} }) {
        my $r = RSTest::get($cl->{loc});
        return undef unless $r->code == 200;
        my $v = list_links({ docs => [ $r->content ] }, $loc);
        $last = $v if defined $v;
    }
    return $last;
}
# The open Change List's ETag.
sub open_etag {
    my ($set) = @_;
    my $ix = RSTest::cl_index($set, $srv->base) or return undef;
    my ($open) = grep { !$_->{until} } @{ $ix->{lists} };
    return $open ? RSTest::head($open->{loc})->header('ETag') : undef;
}
sub rl_links {
    my ($set, $loc) = @_;
    my $l = eval { RSTest::fetch_list($set, $srv->base) } or return undef;
    return list_links($l, $loc);
}

my $m1 = "duplicate http://mirror.example/data";
wait_ok(sub { -s $db && defined links_of('l', 'records', '1.pdf')
              && defined links_of('p', '', 'a.txt') && defined links_of('m', 'records', '1.pdf') },
        60, 'the sets are scanned');
wait_ok(sub { (links_of('l', 'records', '1.pdf') // '') =~ /describedby \S+ 5$/ }, 30,
        'the source links to its listed target');
is(links_of('l', 'records', '1.pdf'), "describedby ${base}meta/1.xml 5",
   'forward links in rule order: the target with its length; the mirror is not stored');
is(links_of('l', 'meta', '1.xml'), "describes ${base}records/1.pdf 8",
   'the target carries the inverse link with the source\'s length');
is(links_of('l', 'records', '2.pdf'), "describedby ${base}meta/2.xml ",
   'a target that is not there gives a plain link');
is(links_of('p', '', 'a.txt'), '', 'a set without rules keeps no links');
is_deeply([ map { $_->{links} } @{ rows("SELECT links FROM inventory WHERE setname = 'm'") } ],
          [ undef, undef ], 'a set with a mirror only keeps no links in its rows');
is(wait_for(sub { rl_links('l', "${base}records/1.pdf") }, 60),
   "describedby ${base}meta/1.xml 5; $m1/records/1.pdf ",
   'the Resource List renders the mirror after the stored links');
is(wait_for(sub { rl_links('m', $srv->base . '/mirrored/b.txt') }, 60),
   "$m1/b.txt ", 'the mirror-only set\'s Resource List renders the mirror');
is(log_lines(qr/set l: its link rules/), 0, 'a set\'s first start with rules says nothing of them');

# Live: a target appears, changes and goes; its source follows without a
# record of its own.
my $n = journal_count();
RSTest::put($srv->dir . '/www/data/meta/2.xml', "<meta two/>\n");
wait_ok(sub { (links_of('l', 'records', '2.pdf') // '') =~ /meta\/2\.xml 12$/ }, 30,
        'a target that appears: its source links to it with its attributes');
is(journal_count(), $n + 1, 'one record: the target\'s own (none for the source)');
ok((grep { $_ eq 'records/2.pdf' } @{ relinked() }), 'the source is recorded as relinked');
RSTest::put($srv->dir . '/www/data/meta/1.xml', "<meta one, longer/>\n");
wait_ok(sub { (links_of('l', 'records', '1.pdf') // '') =~ /meta\/1\.xml 20$/ }, 30,
        'a target that changes: its source follows');
unlink $srv->dir . '/www/data/meta/1.xml' or die $!;
wait_ok(sub { (links_of('l', 'records', '1.pdf') // '') eq "describedby ${base}meta/1.xml " },
        30, 'a target that goes: a plain link again');
RSTest::put($srv->dir . '/www/data/records/2.pdf', "pdf two, longer\n");
wait_ok(sub { (links_of('l', 'meta', '2.xml') // '') =~ /describes \S+ 16$/ }, 30,
        'a source that changes: its target\'s inverse link follows');
my $with_links = rows("SELECT COUNT(*) AS n FROM journal WHERE setname = 'l' AND links IS NOT NULL");
ok($with_links->[0]{n} >= 2
   && !@{ rows("SELECT 1 FROM journal WHERE links LIKE '%mirror.example%'") },
   "records keep their links ($with_links->[0]{n} of them), no mirror");
is(wait_for(sub { my $l = cl_links('l', "${base}records/2.pdf");
                  $l && $l =~ /describedby/ ? $l : undef }, 30),
   "describedby ${base}meta/2.xml 12; $m1/records/2.pdf ",
   'the open Change List renders the mirror after the stored links');

# A Resource List Index keeps the parts no change touched: a target's
# change rewrites the part that holds its source (relinked), which no
# record names.
my $xsrc = $srv->base . '/idx/records/17.pdf';
my $xt = $srv->base . '/idx/meta/17.xml';
my $l0 = wait_for(sub { my $l = eval { RSTest::fetch_list('x', $srv->base) };
                        $l && ($l->{root} // '') eq 'sitemapindex' && ($l->{parts} ? $l : undef) },
                  60);
is($l0 && list_links($l0, $xsrc), "describedby $xt 7", 'the index lists the source\'s link');
RSTest::put($srv->dir . '/www/idx/meta/17.xml', "<meta seventeen/>\n");
my $l1 = wait_for(sub { my $l = eval { RSTest::fetch_list('x', $srv->base) };
                        $l && (list_links($l, $xsrc) // '') eq "describedby $xt 18" ? $l : undef },
                  60);
ok($l1, 'the part that holds the source is written again with the target\'s new length');
my %gen = map { /-(\d+)-\d+\.xml$/ ? ($1 => 1) : () } @{ $l1 ? $l1->{parts} : [] };
ok(keys(%gen) > 1, 'other parts are kept from an earlier generation');

# A change of the mirrors across a graceful restart: no mirror any more.
# No row stores one: nothing is resolved again; the open Change List's
# entries (from the ring of the new generation or from the store) are
# rendered without it, under another ETag.
my $before = journal_count();
my $stored = rows("SELECT dir, name, links FROM inventory WHERE setname = 'l' ORDER BY dir, name");
my $etag = open_etag('l');
my $watcher = $srv->watcher_pid;
$srv->write_conf(conf($RULE));
$srv->graceful;
ok(wait_for(sub { my $w = $srv->watcher_pid; $w && $w != $watcher }, 60),
   'graceful restart without the mirror: a new watcher');
is(wait_for(sub { my $l = rl_links('l', "${base}records/2.pdf");
                  defined $l && $l !~ /duplicate/ ? $l : undef }, 60),
   "describedby ${base}meta/2.xml 12", 'the Resource List has no mirror any more');
is(wait_for(sub { my $l = cl_links('l', "${base}records/2.pdf");
                  defined $l && $l !~ /duplicate/ ? $l : undef }, 60),
   "describedby ${base}meta/2.xml 12", 'the open Change List neither');
isnt(open_etag('l'), $etag, 'the open Change List has another ETag, the same records');
is_deeply(rows("SELECT dir, name, links FROM inventory WHERE setname = 'l' ORDER BY dir, name"),
          $stored, 'the rows\' links are as they were');
is(log_lines(qr/set l: its link rules/), 0, 'no pass over the rows, nothing said');

# A change of the rules across a restart: the rule goes.
ok($srv->stop, 'server stops');
$srv->write_conf(conf());
$srv->start_ok('server starts without the rule');
wait_ok(sub { log_lines(qr/set l: its link rules changed; 3 resources changed their links/) },
        60, 'one pass: every listed row with links lost them, said once at info');
is(links_of('l', 'records', '2.pdf'), '', 'without rules, no row has links');
is(journal_count(), $before, 'no journal record for a change of the rules or mirrors');
is(log_lines(qr/set [pm]: its link rules/), 0, 'nothing said of the sets without rules');

ok($srv->stop, 'server stops');

# An upgrade from a store of schema version 7, whose rows and records
# hold the mirror links the module stored then (after the rule's).
$srv->write_conf(conf($RULE, $MIRROR));
$srv->start_ok('server starts with the rule and the mirror');
wait_ok(sub { (links_of('l', 'records', '2.pdf') // '') eq "describedby ${base}meta/2.xml 12" },
        60, 'the rows have their links');
RSTest::put($srv->dir . '/www/data/records/2.pdf', "pdf two, third\n");
wait_ok(sub { @{ rows("SELECT 1 FROM journal WHERE setname = 'l' AND name = '2.pdf' "
                      . "AND links IS NOT NULL AND size = 15") } }, 30, 'a record with links');
my %at = map { ($_ => (eval { RSTest::fetch_list($_, $srv->base)->{at} } // '')) } qw(l m);
ok($srv->stop, 'server stops for the old store');
# The rules' digest (meta links:<set>) as this module makes it, and as the
# module of schema version 7 did (the mirrors among the rules, no stored
# form's version): SHA-256 of the root URL and the rules' description.
sub field { my ($v) = @_; length($v) . ":$v" }
my $L = join '', map { field($_) } 'link', 'describedby', '^records/([0-9]+)\.pdf$', 'meta/$1.xml', '', 0, '';
my $M = join '', map { field($_) } 'mirror', 'http://mirror.example/data/', 0;
my %root = (l => $base, m => $srv->base . '/mirrored/', x => $srv->base . '/idx/');
is(rows("SELECT v FROM meta WHERE k = 'links:l'")->[0]{v}, sha256_hex("links-2\n$root{l}\n$L"),
   'the digest of the rules, computed here as the module does');
my %old_fp = (l => sha256_hex("$root{l}\n$L$M"), m => sha256_hex("$root{m}\n$M"),
              x => sha256_hex("$root{x}\n$L"));
my $meta = join ' ', map { "DELETE FROM meta WHERE k = 'links:$_'; INSERT INTO meta (k, v) VALUES ('links:$_', '$old_fp{$_}');" } sort keys %old_fp;
my $old = "'duplicate' || char(31) || 'http://mirror.example/data/' || "
          . "CASE WHEN dir = '' THEN '' ELSE dir || '/' END || name || "
          . "char(31, 31, 31, 31, 31, 31, 31, 31, 31)";
my $out = `sqlite3 -cmd '.timeout 10000' '$db' "UPDATE inventory SET links = COALESCE(links || char(30), '') || $old WHERE setname IN ('l', 'm') AND listed = 1; UPDATE journal SET links = links || char(30) || $old WHERE links IS NOT NULL; $meta UPDATE meta SET v = '7' WHERE k = 'schema-version';" 2>&1`;
is($out, '', 'the store as version 7 left it');
is(links_of('m', 'records', '1.pdf'), "$m1/records/1.pdf ", '(a row of the old form)');
$srv->start_ok('server starts on the old store');
wait_ok(sub { log_lines(qr/set l: its link rules changed; 4 resources changed their links/) },
        60, 'upgrade: one pass resolves the rows again');
wait_ok(sub { log_lines(qr/set x: its link rules changed; 0 resources changed their links/)
              && log_lines(qr/set m: its link rules changed; 2 resources changed their links/) },
        60, 'upgrade: so it does in the set without mirrors (nothing changes) and in the '
            . 'mirror-only set (its rows lose the mirror)');
is(links_of('l', 'records', '2.pdf'), "describedby ${base}meta/2.xml 12",
   'upgrade: a row keeps its links without the mirror');
is(links_of('m', 'records', '1.pdf'), '', 'upgrade: a row of the mirror-only set keeps none');
is(rows("SELECT COUNT(*) AS n FROM journal WHERE links IS NOT NULL")->[0]{n}, 0,
   'upgrade: no record keeps links');
# (the next Resource List of each set: its rows were relinked)
sub next_list_links {
    my ($set, $loc) = @_;
    return wait_for(sub { my $l = eval { RSTest::fetch_list($set, $srv->base) };
                          $l && $l->{at} ne $at{$set} ? list_links($l, $loc) : undef }, 60);
}
is(next_list_links('l', "${base}records/2.pdf"), "describedby ${base}meta/2.xml 12; $m1/records/2.pdf ",
   'upgrade: the next Resource List has the mirror once');
is(next_list_links('m', $srv->base . '/mirrored/records/1.pdf'), "$m1/records/1.pdf ",
   'upgrade: so has the mirror-only set\'s');
is(cl_links('l', "${base}records/2.pdf"), "$m1/records/2.pdf ",
   'upgrade: the open list\'s entry of a record from before has the mirror once, no other link');
ok($srv->stop, 'server stops');
