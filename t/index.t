# SPDX-License-Identifier: Apache-2.0
# Resource List Index of set "small" (ResourceSyncMaxEntries 4, 10 files)
# and the URLs of its parts, valid and not.
use strict;
use warnings;
use Test::More;
use Apache::Test ();
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get doc xpc wait_for cap_url rl_url);
use RSTest::Docs qw(set_info tree_files loc_relpath part_urls);

my $si = set_info('small');
my $cl = cap_url('small');
my $rl = rl_url('small');

my @files = sort(tree_files($si->{dir}));
is(scalar @files, 10, 'small: 10 files on disk');

my $r = wait_for(sub { my $r = get($rl); $r->code == 503 ? undef : $r }, 60) || get($rl);
is($r->code, 200, "GET $rl");
my $d = doc($r->content);
my $x = xpc($d);
is($d->documentElement->localname, 'sitemapindex', 'small: resourcelist.xml is an index');
my @parts = part_urls($x);
# Parts are cut by content (rs_partition) at an interval for the set's
# size, and the index names at most ResourceSyncMaxEntries of them: 10
# entries of at most 4 make 3 or 4 parts (ResourceSync 1.1 section 7).
ok(@parts >= 3 && @parts <= 4, 'small: 3 or 4 parts (10 entries, at most 4 a document)')
    or diag(scalar @parts . ' parts');

# Part URLs: <prefix>/small/resourcelist/<history>-<gen>-<n>.xml, one
# history and generation, n = 1..3 or 4.
my $part_base = base_of($rl) . '/resourcelist/';
my @gens;
for my $i (0 .. $#parts) {
    my ($h, $gen, $n) = $parts[$i] =~ m{^\Q$part_base\E([0-9a-f]{8})-([1-9][0-9]*)-([1-9][0-9]*)\.xml$};
    ok(defined $n && $n == $i + 1, "part URL $parts[$i] is <history>-<gen>-" . ($i + 1) . '.xml');
    push @gens, defined $n ? "$h-$gen" : 'none';
}
my %g = map { $_ => 1 } @gens;
is(scalar keys %g, 1, 'all parts belong to one history and generation');
my ($hist, $gen) = split /-/, $gens[0];
my $other = $hist eq '00000000' ? '00000001' : '00000000';

my (%seen, @dups);
for my $p (@parts) {
    my $pr = get($p);
    is($pr->code, 200, "GET $p") or next;
    my $pd = doc($pr->content);
    my $px = xpc($pd);
    is($pd->documentElement->localname, 'urlset', "$p: a urlset");
    is_deeply([map { $_->value } $px->findnodes('/sm:urlset/rs:ln[@rel="up"]/@href')], [$cl],
              "$p: rs:ln up = capability list");
    is_deeply([map { $_->value } $px->findnodes('/sm:urlset/rs:ln[@rel="index"]/@href')], [$rl],
              "$p: rs:ln index = resourcelist.xml");
    my @locs = map { $_->textContent } $px->findnodes('/sm:urlset/sm:url/sm:loc');
    ok(@locs >= 1 && @locs <= 4, "$p: 1 to 4 entries") or diag(scalar @locs);
    for my $loc (@locs) {
        my $rel = loc_relpath($loc, $si->{url_base}) // "?$loc";
        push @dups, $rel if $seen{$rel}++;
    }
}
is_deeply(\@dups, [], 'no entry in two parts');
is_deeply([sort keys %seen], \@files, 'the parts together list exactly the 10 files');

# Part URLs that do not exist, or are not part URLs at all: 404, never 500.
my @bad = ("$gen-99.xml", "$gen-11.xml", "$gen-0.xml", 'abc.xml', '1-x.xml', '-1.xml',
           '01-1.xml', "$gen-01.xml", '0-1.xml', "$gen--1.xml", "+$gen-1.xml",
           "$gen-1.xml.bak", "$gen-1.XML", "$gen-1", "$gen-1.xml/", "%20$gen-1.xml",
           "$gen-1.xml%00", "$gen.xml", "$gen-", '', ($gen + 1) . '-1.xml',
           ($gen + 1000) . '-1.xml', '999999999999999999-1.xml',
           '99999999999999999999999999-1.xml', "$gen-99999999999999999999.xml",
           "$gen-999999999.xml", "$gen-4294967297.xml", "$gen-2147483648.xml", '18446744073709551617-1.xml');
@bad = map { "$hist-$_" } @bad;
# Without the history, of another history, the history malformed.
push @bad, "$gen-1.xml", "$other-$gen-1.xml", "${hist}0-$gen-1.xml",
           substr($hist, 1) . "-$gen-1.xml", "$hist$gen-1.xml", "$hist--$gen-1.xml";
# Upper-case hex is not the history (a history of digits only has no
# upper-case form: then the case is left out, it would be the part itself).
push @bad, uc($hist) . "-$gen-1.xml" if uc($hist) ne $hist;
for my $b (@bad) {
    my $u = $part_base . $b;
    my $br = get($u);
    is($br->code, 404, "GET $u -> 404") or diag($br->status_line);
}
# The same names below a set that has no index, and below an unknown set.
for my $u (base_of(rl_url('main')) . "/resourcelist/$hist-1-1.xml",
           base_of(rl_url('nope')) . "/resourcelist/$hist-1-1.xml") {
    is(get($u)->code, 404, "GET $u -> 404");
}

sub base_of { (my $u = $_[0]) =~ s{/resourcelist\.xml$}{}; $u }

done_testing();
