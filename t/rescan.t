# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# Changes to the tree reach the Resource List at the next rescan: created,
# modified (content, length, mtime), deleted files, new and removed
# subdirectories.  Uses set "dots" (ResourceSyncHash none) and only files
# named rescan-*, so other tests' sets and files are left alone.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(remove_tree);
use Time::HiRes ();
use RSTest qw(base tree fetch_list wait_for iso2epoch put_atomic);

plan tests => 29;

umask 022;
my $url = base() . '/generated/dots/';
my $dir = tree('dots');

# Create a file atomically (written next to the set, then renamed into it),
# so that a rescan never sees it half written.
sub put { my ($rel, $content) = @_; put_atomic("$dir/$rel", $content, "$dir/..") }

# Rewrite a file in place (same inode).
sub rewrite {
    my ($rel, $content) = @_;
    open my $fh, '+<', "$dir/$rel" or die "$dir/$rel: $!";
    binmode $fh;
    truncate $fh, 0;
    print $fh $content;
    close $fh or die "$dir/$rel: $!";
}

# The list as { relative path => entry }, plus its "at".
sub current {
    my $l = fetch_list('dots');
    my %h;
    for my $e (@{ $l->{entries} }) {
        my $rel = $e->{loc};
        $rel =~ s/^\Q$url\E// or $rel = "OUTSIDE:$e->{loc}";
        $h{$rel} = $e;
    }
    return { at => $l->{at}, e => \%h };
}

# Wait until $cond->(listing) holds; returns the listing or undef.
sub wait_list {
    my ($cond) = @_;
    return wait_for(sub { my $c = current(); $cond->($c->{e}) ? $c : undef }, 30);
}

# W3C datetime -> [epoch seconds, nanoseconds] (exact, no floating point);
# documents carry at most six fractional digits.
sub dt_ns {
    my ($s) = @_;
    my ($base, $frac) = ($s // '') =~ /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/
        or return [-1, -1];
    return [iso2epoch("${base}Z"), substr(($frac // '') . '0' x 9, 0, 9) + 0];
}

# mtime of a file -> [epoch seconds, nanoseconds]
sub mtime_ns {
    my ($path) = @_;
    my $out = `stat -c %.9Y '$path'`;
    my ($sec, $ns) = $out =~ /^(\d+)\.(\d{9})$/ or die "stat $path: $out";
    return [$sec + 0, $ns + 0];
}

# An entry matches the file: length and lastmod (the mtime truncated to
# the microsecond).
sub matches {
    my ($e, $rel) = @_;
    my $path = "$dir/$rel";
    return 0 unless $e && -f $path;
    return 0 unless defined $e->{length} && $e->{length} == -s $path;
    my ($l, $m) = (dt_ns($e->{lastmod}), mtime_ns($path));
    return $l->[0] == $m->[0] && $l->[1] == $m->[1] - $m->[1] % 1000;
}

my @names;
sub names { my ($e) = @_; [sort grep { /^rescan-/ } keys %$e] }

# ------------------------------------------------------------- baseline
my $base = current();
is_deeply(names($base->{e}), [], 'no rescan-* files listed before the test');
ok($base->{e}{'visible.txt'}, 'dots lists visible.txt');

# -------------------------------------------------------------- created
my $t0 = Time::HiRes::time();
put('rescan-a.txt', "alpha\n");
put('rescan-b.txt', "bravo bravo\n");
my $c = wait_list(sub { $_[0]{'rescan-a.txt'} && $_[0]{'rescan-b.txt'} });
ok($c, 'created rescan-a.txt and rescan-b.txt are listed');
ok(matches($c->{e}{'rescan-a.txt'}, 'rescan-a.txt'), 'rescan-a.txt: length and lastmod')
    or diag explain [$c->{e}{'rescan-a.txt'}, mtime_ns("$dir/rescan-a.txt")];
ok(matches($c->{e}{'rescan-b.txt'}, 'rescan-b.txt'), 'rescan-b.txt: length and lastmod')
    or diag explain $c->{e}{'rescan-b.txt'};
is($c->{e}{'rescan-a.txt'}{type}, 'text/plain', 'rescan-a.txt: media type');
ok(!defined $c->{e}{'rescan-a.txt'}{hash}, 'rescan-a.txt: no hash (ResourceSyncHash none)');
ok(iso2epoch($c->{at}) >= $t0, 'the list that shows them is "at" after they were made')
    or diag "at $c->{at}, change at $t0";

# -------------------------------------- modified: content and length
my $old = $c->{e}{'rescan-a.txt'};
$t0 = Time::HiRes::time();
my $new = "alpha, now longer\nand two lines\n";
rewrite('rescan-a.txt', $new);
$c = wait_list(sub { my $e = $_[0]{'rescan-a.txt'}; $e && $e->{length} == length($new) });
ok($c, 'rescan-a.txt rewritten in place with new content: the list changes');
is($c && $c->{e}{'rescan-a.txt'}{length}, length($new), 'rescan-a.txt: new length');
ok($c && matches($c->{e}{'rescan-a.txt'}, 'rescan-a.txt'), 'rescan-a.txt: new lastmod')
    or diag explain [$c && $c->{e}{'rescan-a.txt'}, mtime_ns("$dir/rescan-a.txt")];
ok($c && iso2epoch($c->{e}{'rescan-a.txt'}{lastmod}) > iso2epoch($old->{lastmod}),
   'rescan-a.txt: lastmod moved forward');
ok($c && iso2epoch($c->{at}) >= $t0, 'the list that shows it is "at" after the change');
ok($c && matches($c->{e}{'rescan-b.txt'}, 'rescan-b.txt'), 'rescan-b.txt unchanged');

# ------------------------- modified: same length, only the mtime changes
utime 981173106, 981173106, "$dir/rescan-b.txt" or die $!;    # 2001-02-03T04:05:06Z
$c = wait_list(sub { my $e = $_[0]{'rescan-b.txt'}; $e && dt_ns($e->{lastmod})->[0] == 981173106 });
ok($c, 'rescan-b.txt touched to 2001-02-03T04:05:06Z: the list changes');
ok($c && matches($c->{e}{'rescan-b.txt'}, 'rescan-b.txt')
   && dt_ns($c->{e}{'rescan-b.txt'}{lastmod})->[1] == 0,
   'rescan-b.txt: lastmod is exactly 2001-02-03T04:05:06Z')
    or diag explain $c && $c->{e}{'rescan-b.txt'};

# ------------------------------------------------ modified: same length
$old = $c->{e}{'rescan-a.txt'};
rewrite('rescan-a.txt', uc $new);
utime 1000000000, 1000000000, "$dir/rescan-a.txt" or die $!;
$c = wait_list(sub { my $e = $_[0]{'rescan-a.txt'}; $e && dt_ns($e->{lastmod})->[0] == 1000000000 });
ok($c && matches($c->{e}{'rescan-a.txt'}, 'rescan-a.txt'),
   'rescan-a.txt rewritten with the same length: new lastmod');

# --------------------------------------------------------------- deleted
unlink "$dir/rescan-b.txt" or die $!;
$c = wait_list(sub { !$_[0]{'rescan-b.txt'} });
ok($c, 'deleted rescan-b.txt disappears');
is_deeply($c && names($c->{e}), ['rescan-a.txt'], '... and rescan-a.txt stays');

# ------------------------------------------------------ new subdirectory
put('rescan-dir/rescan-1.txt', "one\n");
put('rescan-dir/deep/rescan-2.txt', "two two\n");
$c = wait_list(sub { $_[0]{'rescan-dir/rescan-1.txt'} && $_[0]{'rescan-dir/deep/rescan-2.txt'} });
ok($c, 'a new subdirectory: its files are listed, also one level deeper');
ok($c && matches($c->{e}{'rescan-dir/rescan-1.txt'}, 'rescan-dir/rescan-1.txt'),
   'rescan-dir/rescan-1.txt: length and lastmod');
ok($c && matches($c->{e}{'rescan-dir/deep/rescan-2.txt'}, 'rescan-dir/deep/rescan-2.txt'),
   'rescan-dir/deep/rescan-2.txt: length and lastmod');

# a file added later to the existing subdirectory
put('rescan-dir/deep/rescan-3.txt', "three\n");
$c = wait_list(sub { $_[0]{'rescan-dir/deep/rescan-3.txt'} });
ok($c && matches($c->{e}{'rescan-dir/deep/rescan-3.txt'}, 'rescan-dir/deep/rescan-3.txt'),
   'a file added to the existing subdirectory is listed');

# ------------------------------------------------- rm -rf a subdirectory
remove_tree("$dir/rescan-dir");
$c = wait_list(sub { !grep { m{^rescan-dir/} } keys %{ $_[0] } });
ok($c, 'rm -rf rescan-dir: all its files disappear');
is_deeply($c && names($c->{e}), ['rescan-a.txt'], '... and nothing else changes');

# A subdirectory that comes back with the same name is a new one.
put('rescan-dir/rescan-4.txt', "four\n");
$c = wait_list(sub { $_[0]{'rescan-dir/rescan-4.txt'} });
ok($c && !$c->{e}{'rescan-dir/rescan-1.txt'}
   && matches($c->{e}{'rescan-dir/rescan-4.txt'}, 'rescan-dir/rescan-4.txt'),
   'a re-created subdirectory lists only its new file');

# ---------------------------------------------------------------- cleanup
remove_tree("$dir/rescan-dir");
unlink "$dir/rescan-a.txt";
$c = wait_list(sub { !@{ names($_[0]) } });
ok($c, 'after cleanup no rescan-* file is listed');
is_deeply($c && [sort keys %{ $c->{e} }], [sort keys %{ $base->{e} }],
          'the list is back to the original set of files');
ok($c && !grep({ $c->{e}{$_}{lastmod} ne $base->{e}{$_}{lastmod}
                 || $c->{e}{$_}{length} != $base->{e}{$_}{length} } keys %{ $base->{e} }),
   'the original entries are unchanged');
