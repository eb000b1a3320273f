# SPDX-License-Identifier: Apache-2.0
# A destination reads a Resource List Index and then its parts while the
# tree changes (set "mut", ResourceSyncMaxEntries 5).  The parts of the
# index it read must still form that one snapshot: no file that existed
# unchanged throughout may be missing, nothing may be listed twice, even
# though files that sorted into part 1 were deleted and others created
# in between.  The new index then lists the new state.
#
# Only set "mut" is changed, and the tree is restored (same names, bytes
# and mtimes) before the end; nothing here assumes what "mut" holds at the
# start, only that it has not changed for a moment.
use strict;
use warnings;
use Test::More;
use Apache::Test ();
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get doc xpc wait_for rl_url fetch_list iso2epoch);
use RSTest::Docs qw(set_info tree_files loc_relpath part_urls);

my $si  = set_info('mut');
my $dir = $si->{dir};
my $rl  = rl_url('mut');
my $MAX = 5;

# Listed relative paths of a URL's <urlset> (one part or a whole list).
sub part_paths {
    my ($url) = @_;
    my $r = get($url);
    return (undef, $r) unless $r->code == 200;
    my $x = xpc(doc($r->content));
    my @p = map { loc_relpath($_->textContent, $si->{url_base}) // "?" . $_->textContent }
            $x->findnodes('/sm:urlset/sm:url/sm:loc');
    return (\@p, $r, $x);
}

# Sorted listed paths of the current Resource List (index and parts), or
# undef while it cannot be read.
sub listed_now {
    my $l = eval { fetch_list('mut') } or return undef;
    return [sort map { loc_relpath($_->{loc}, $si->{url_base}) // "?$_->{loc}" } @{ $l->{entries} }];
}

sub same { join("\0", @{ $_[0] }) eq join("\0", @{ $_[1] }) }

sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; my $c = <$fh>; $c }
sub spew  { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print $fh $_[1]; close $fh or die $! }

# --- the state before: bytes and mtimes, to restore it afterwards --------
my %orig;
for my $f (tree_files($dir)) {
    $orig{$f} = { content => slurp("$dir/$f"), mtime => (stat "$dir/$f")[9] };
}
my $restored = 0;
sub restore {
    return if $restored++;
    for my $f (tree_files($dir)) {
        unlink "$dir/$f" unless $orig{$f};
    }
    for my $f (sort keys %orig) {
        next if -e "$dir/$f";
        spew("$dir/$f", $orig{$f}{content});
        utime $orig{$f}{mtime}, $orig{$f}{mtime}, "$dir/$f";
    }
}
END { restore() }

# Enough files for an index of at least three parts.
my @filler;
for (my $i = 1; keys(%orig) + @filler <= 2 * $MAX; $i++) {
    my $f = sprintf 'partition-fill-%02d.txt', $i;
    next if $orig{$f};
    spew("$dir/$f", "filler $i\n");
    push @filler, $f;
}
my @before = sort(tree_files($dir));
ok(same(wait_for(sub { my $l = listed_now(); $l && same($l, \@before) ? $l : undef }, 30) || [],
        \@before),
   'mut: the Resource List reflects the tree before the test');

# --- 1. a destination reads the index and part 1 -------------------------
my $r0 = get($rl);
is($r0->code, 200, "GET $rl");
my $x0 = xpc(doc($r0->content));
is($x0->findnodes('/sm:sitemapindex')->size, 1, 'mut: an index');
my $at0 = $x0->findvalue('/*/rs:md/@at');
my @parts0 = part_urls($x0);
ok(@parts0 >= 3, 'mut: index has at least 3 parts') or diag(scalar @parts0);
# The first parts, as many as hold three entries (parts are cut by
# content: at ResourceSyncMaxEntries 5 a part may hold a single entry).
my ($p1, $nfirst, %read0) = ([], 0);
while (@$p1 < 3 && $nfirst < @parts0) {
    my ($paths) = part_paths($parts0[$nfirst]);
    last unless $paths;
    $read0{ $parts0[$nfirst++] } = [@$paths];
    push @$p1, @$paths;
}
ok(@$p1 >= 3, "first $nfirst part(s) read: " . scalar(@$p1) . " entries")
    or BAIL_OUT('cannot read the first parts');

# --- 2. the tree changes: three files of those parts go, two appear -----
my @deleted = @$p1[0, 1, -1];
my @created = ('a-partition-new.txt', 'zz-partition-new.txt');
unlink "$dir/$_" or die "$dir/$_: $!" for @deleted;
spew("$dir/$_", "created by partition.t\n") for @created;
my %gone = map { $_ => 1 } @deleted;
my @unchanged = grep { !$gone{$_} } @before;

# --- 3. the module publishes a new snapshot ------------------------------
my $at1 = wait_for(sub {
    my $r = get($rl);
    return undef unless $r->code == 200;
    my $at = xpc(doc($r->content))->findvalue('/*/rs:md/@at');
    return $at ne $at0 ? $at : undef;
}, 30);
ok($at1, 'mut: a new snapshot was published (the index at changed)') or diag("at stays $at0");
ok($at1 && iso2epoch($at1) > iso2epoch($at0), 'mut: the new at is later');

# --- 4. the rest of the ORIGINAL index -----------------------------------
my @union = @$p1;
for my $p (@parts0[$nfirst .. $#parts0]) {
    my ($paths, $r, $x) = part_paths($p);
    is($r->code, 200, "old part still served: $p") or next;
    my $pat = $x->findvalue('/*/rs:md/@at');
    ok($pat && iso2epoch($pat) <= iso2epoch($at0),
       "$p: at no later than the original index's ($pat)");
    ok(@$paths <= $MAX, "$p: at most $MAX entries");
    $read0{$p} = [@$paths];
    push @union, @$paths;
}
my %in = map { $_ => 1 } @union;
my @missing = grep { !$in{$_} } @unchanged;
is_deeply(\@missing, [], 'every file unchanged throughout is in the parts of the original index');
my %n;
my @twice = grep { $n{$_}++ == 1 } @union;
is_deeply(\@twice, [], 'no file in two parts of the original index');
is_deeply([sort @union], \@before, 'the original parts are exactly the tree as it was');

# --- 5. the new index lists the new state --------------------------------
my @after = sort(tree_files($dir));
my $now = wait_for(sub { my $l = listed_now(); $l && same($l, \@after) ? $l : undef }, 30)
          || listed_now() || [];
my %now = map { $_ => 1 } @$now;
is_deeply([grep { $now{$_} } @deleted], [], 'new list: deleted files are gone');
is_deeply([grep { !$now{$_} } @created], [], 'new list: created files are listed');
is_deeply($now, \@after, 'new list: exactly the tree as it is now');
# Parts are kept across generations only when nothing in them changed: a
# part URL of the original index that the new index still names holds
# exactly the entries it held; those of the deleted files are new.
my $new = fetch_list('mut');
my %gone_in = map { my $u = $_; map { $_ => $u } @{ $read0{$u} } } keys %read0;
my @stale;
for my $u (grep { my $o = $_; grep { $_ eq $o } @parts0 } @{ $new->{parts} }) {
    my ($paths) = part_paths($u);
    push @stale, $u if grep({ $gone_in{$_} && $gone_in{$_} eq $u } @deleted)
                    || ($read0{$u} && "@{ $read0{$u} }" ne "@{ $paths || [] }");
}
is_deeply(\@stale, [], 'new index: a part it keeps from the original one is unchanged, '
          . 'and no kept part held a deleted file');

# --- 6. put the tree back ------------------------------------------------
restore();
my @orig = sort keys %orig;
ok(same(wait_for(sub { my $l = listed_now(); $l && same($l, \@orig) ? $l : undef }, 30) || [],
        \@orig),
   'mut: restored, and the Resource List reflects it again');

done_testing();
