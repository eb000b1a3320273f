# SPDX-License-Identifier: Apache-2.0
# Every document within ResourceSyncMaxEntries (ResourceSync 1.1 section 7:
# "the limit is 50,000 items per document"; indexes are documents too).
# Set "over" (ResourceSyncMaxEntries 2, 5 files) cannot fit: full parts,
# warned once.
# A private server with ResourceSyncMaxEntries 4: after 30 changes the
# Change List Index names at most 4 lists (the open one and the 3 newest
# closed ones: count retention), its `from` is the first one it names,
# the lists that left it are gone (404), the log says so; every list and
# the Resource List Index and parts hold at most 4 entries.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time sleep);
use RSTest qw(started_server set_conf STATE_CONF put get doc xpc validate wait_ok fetch_list
              iso2epoch);

plan tests => 23;

my $MAX = 4;
my $srv = started_server(
    conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
            . set_conf('lim', 'www/lim', "ResourceSyncMaxEntries $MAX")
            . set_conf('over', 'www/over', 'ResourceSyncMaxEntries 2'),
    files => { (map { ("www/lim/f$_.txt" => "v0 $_\n") } 1 .. 10),
               (map { ("www/over/o$_.txt" => "o $_\n") } 1 .. 5) });
my $B = $srv->base;
my $W = $srv->dir . '/www/lim';

# index_of() -> the Change List Index of lim (RSTest::cl_index)
sub index_of { RSTest::cl_index('lim', $B) }

# The Resource List: 10 files at most 4 a document need an index of at
# most 4 parts.
my $rl = fetch_list('lim', $B);
is($rl->{root}, 'sitemapindex', 'the Resource List is an index');
is(scalar @{ $rl->{entries} }, 10, 'it lists the 10 files');
cmp_ok(scalar @{ $rl->{parts} }, '<=', $MAX, "the index names at most $MAX parts")
    or diag(scalar @{ $rl->{parts} } . ' parts');
my $big = grep { scalar(() = $_ =~ /<url>/g) > $MAX } @{ $rl->{docs} };
is($big, 0, "no part holds more than $MAX entries");

# Whether a change of f10.txt at or after $t0 (epoch seconds) is listed.
sub listed_since {
    my ($t0) = @_;
    my $i = index_of() or return 0;
    for my $l (reverse @{ $i->{lists} }) {
        my $r = get($l->{loc});
        return 0 unless $r->code == 200;
        my $x = xpc(doc($r->content));
        for my $u ($x->findnodes('/sm:urlset/sm:url')) {
            return 1 if $x->findvalue('sm:loc', $u) =~ m{/f10\.txt$}
                && iso2epoch($x->findvalue('rs:md/@datetime', $u)) >= $t0;
        }
    }
    return 0;
}

# 5 resources cannot fit in 2 parts of 2: every part full (3 of them),
# said once at warn, also when the set changes again.
my $WARN = qr/\[resourcesync:warn\].*set over: 5 resources do not fit in 2 parts of 2 \(ResourceSyncMaxEntries 2\): its Resource List Index names 3 parts/;
my $over = fetch_list('over', $B);
is(scalar @{ $over->{parts} }, 3, 'set over: an index of 3 full parts (5 resources, 2 a part)');
is(scalar(grep { scalar(() = $_ =~ /<url>/g) > 2 } @{ $over->{docs} }), 0,
   'set over: no part holds more than 2 entries');
put($srv->dir . '/www/over/o1.txt', "o 1 changed\n");
wait_ok(sub { fetch_list('over', $B)->{at} ne $over->{at} }, 30, 'set over: a new Resource List');
my @warned = grep { $_ =~ $WARN } split /\n/, $srv->log_text;
is(scalar @warned, 1, 'set over: the warning is logged once');

# 30 changes, in 3 rounds over the 10 files.
for my $round (1 .. 3) {
    my $t0 = time() - 1;
    put("$W/f$_.txt", "v$round $_\n") for 1 .. 10;
    wait_ok(sub { listed_since($t0) }, 30, "round $round of changes listed");
    sleep 1.1; # the next round's datetimes after this one's
}
wait_ok(sub { $srv->log_text =~ /Change Lists left the Change List Index/ }, 30,
        'the log says lists left the Change List Index');

my $idx = index_of();
cmp_ok(scalar @{ $idx->{lists} }, '<=', $MAX, "the Change List Index names at most $MAX lists")
    or diag($idx->{xml});
is(scalar @{ $idx->{lists} }, $MAX, 'as many as it may (30 changes fill more)');
is(validate($idx->{xml}), undef, 'the index validates');
is($idx->{from}, $idx->{lists}[0]{from}, "the index's from is its first list's");
my ($first_id) = $idx->{lists}[0]{loc} =~ /-(\d+)\.xml$/;
cmp_ok($first_id, '>', 1, 'the oldest lists left it');
(my $gone = $idx->{lists}[0]{loc}) =~ s/-(\d+)\.xml$/'-' . ($1 - 1) . '.xml'/e;
is(get($gone)->code, 404, 'a list that left the index is gone');
my ($too_many, $bad) = (0, 0);
for my $l (@{ $idx->{lists} }) {
    my $r = get($l->{loc});
    $bad++ unless $r->code == 200 && !defined validate($r->content);
    $too_many++ if scalar(() = $r->content =~ /<url>/g) > $MAX;
}
is($bad, 0, 'every list it names is served and validates');
is($too_many, 0, "no Change List holds more than $MAX entries");
# The chain stays continuous.
my $broken = grep { $idx->{lists}[$_]{until} ne $idx->{lists}[$_ + 1]{from} } 0 .. $#{ $idx->{lists} } - 1;
is($broken, 0, "each list's until is the next one's from");
my @bad = grep { /\[resourcesync:(?:warn|error|crit|alert|emerg)\]/ && $_ !~ $WARN } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no other warning or error logged');
