# SPDX-License-Identifier: Apache-2.0
# docs/ARCHITECTURE.md's file table against the tree: every C source and
# header of the module and of rs-tool is named in it, once, and every file
# it names exists ("x.[ch]" names x.c and x.h).  And the layout's rules,
# on the symbols of the built objects (nm): no engine unit uses a symbol
# of the glue, and serve/ and watcher/ use none of each other's.  No
# server.  No source file is over 600 lines, no function over 70.  No two files call each other, directly or through others.
# And every source file of the project says its licence in an
# SPDX line at its top (LICENSE: Apache-2.0).
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Find;
use File::Basename qw(dirname basename);
use lib "$FindBin::Bin/lib";
use RSTest ();

# The sources and the objects are the same in the AddressSanitizer run.
plan skip_all => 'the structure is checked once, without AddressSanitizer' if $ENV{RS_ASAN};

my $top = "$FindBin::Bin/..";
open my $fh, '<', "$top/docs/ARCHITECTURE.md" or die "docs/ARCHITECTURE.md: $!";
my (@named, $in);
while (my $line = <$fh>) {
    if ($line =~ /^\| Part \| Files \| Role \|/) { $in = 1; next; }
    next unless $in;
    last unless $line =~ /^\|/;
    my @cells = split /\s*\|\s*/, $line;
    next unless defined $cells[2];
    for my $path ($cells[2] =~ /`([^`]+)`/g) {
        push @named, $path =~ /^(.*)\.\[ch\]$/ ? ("$1.c", "$1.h") : $path;
    }
}
close $fh;
ok(scalar(@named) > 50, 'the file table is found and names files') or diag(scalar(@named) . ' named');

my @tree = ('mod_resourcesync.c');
find({ no_chdir => 1, wanted => sub {
    push @tree, substr($File::Find::name, length($top) + 1) if /\.[ch]$/ && -f $_;
} }, "$top/src", "$top/tools");

my %count;
$count{$_}++ for @named;
is_deeply([grep { !-f "$top/$_" } sort keys %count], [], 'every file the table names exists');
is_deeply([grep { !$count{$_} } sort @tree], [], 'every source file and header is in the table')
    or diag(join("\n", "missing:", grep { !$count{$_} } sort @tree));
is_deeply([grep { $count{$_} > 1 } sort keys %count], [], 'no file is named twice');

# Sizes: no source file over 600 lines, no function over 70 (from the
# line of its opening brace, alone in column 0, to its closing one).
my (@long_files, @long_functions);
for my $f (sort @tree) {
    open my $src, '<', "$top/$f" or die "$f: $!";
    my ($n, $start, $head) = (0, undef, '');
    while (my $line = <$src>) {
        $n++;
        if ($line =~ /^\{\s*$/) {
            $start = $n;
        }
        elsif ($line =~ /^\}/ && defined $start) {
            push @long_functions, "$f:$start (" . ($n - $start + 1) . ' lines)' if $n - $start + 1 > 70;
            undef $start;
        }
    }
    push @long_files, "$f ($n lines)" if $n > 600;
}
is_deeply(\@long_files, [], 'no source file is over 600 lines');
is_deeply(\@long_functions, [], 'no function is over 70 lines');

# Which object defines each global symbol, and what each one uses.
my $build = dirname(RSTest::Server::module_path());
my @objs = grep { -f } glob("$build/src/*/*.o");
SKIP: {
    skip "no objects in $build/src", 4 unless @objs;
    my (%def, %uses);
    for my $o (@objs) {
        for (`nm -g --defined-only '$o'`) { $def{$1} = $o if /^\S+\s+\S\s+(\S+)$/ }
        $uses{$o} = [map { /(\S+)$/ ? $1 : () } `nm -u '$o'`];
    }
    my $folder = sub { $_[0] =~ m{/src/([^/]+)/[^/]+\.o$} ? $1 : '' };
    my $engine = sub { basename($_[0]) =~ /^rs_/ };
    my (@up, @across);
    for my $o (sort keys %uses) {
        for my $u (@{ $uses{$o} }) {
            my $d = $def{$u} or next;
            my $edge = basename($o) . " uses $u of " . basename($d);
            push @up, $edge if $engine->($o) && !$engine->($d);
            my ($a, $b) = ($folder->($o), $folder->($d));
            push @across, $edge if "$a $b" eq 'serve watcher' || "$a $b" eq 'watcher serve';
        }
    }
    ok(scalar(keys %def) > 500, 'the objects define the module\'s symbols') or diag(scalar(keys %def));
    # Files that call each other round in a circle (the module record,
    # which every glue file names, aside): for each file, the files it
    # reaches through what it uses; a file it reaches that reaches it back
    # is in a circle with it.
    my %to;
    for my $o (keys %uses) {
        for my $u (@{ $uses{$o} }) {
            my $d = $def{$u};
            $to{$o}{$d} = 1 if $d && $d ne $o && $u ne 'resourcesync_module';
        }
    }
    my %reach;
    for my $o (keys %uses) {
        my %seen;
        my @todo = keys %{ $to{$o} || {} };
        while (defined(my $n = shift @todo)) {
            next if $seen{$n}++;
            push @todo, keys %{ $to{$n} || {} };
        }
        $reach{$o} = \%seen;
    }
    my @circles = sort map { my $o = $_; map { basename($o) . ' <-> ' . basename($_) }
                                 grep { $_ gt $o && $reach{$_}{$o} } keys %{ $reach{$o} } } keys %reach;
    is_deeply(\@circles, [], 'no two files call each other, directly or round a circle');
    is_deeply(\@up, [], 'no engine unit uses a symbol of the glue');
    is_deeply(\@across, [], 'serve/ and watcher/ use none of each other\'s symbols');
}

# The licence line: C sources and headers, Perl, Python and shell scripts
# of the project (git's list of files, when the tree is a clone).
SKIP: {
    my @files = -d "$top/.git" ? split /\n/, `git -C '$top' ls-files 2>/dev/null` : ();
    skip 'not a git clone', 1 unless @files;
    my @src = grep {
        !m{^(debian|fuzz/corpus|t/xsd|t/conf)/}
            && (/\.(c|h|t|pm|pl|PL|py)$/ || m{^(Makefile|\.ci/run|t/run-tests|t/httpd-asan|fuzz/run|bench/run|bench/make-tree|conf/run-example|conf/make-example-tree)$})
    } @files;
    my @missing = grep {
        open(my $f, '<', "$top/$_") or die "$_: $!";
        my $head = join '', grep { defined } map { scalar <$f> } 1 .. 2;
        $head !~ /SPDX-License-Identifier: Apache-2\.0/;
    } @src;
    is_deeply(\@missing, [], scalar(@src) . ' source files carry the SPDX licence line');
}
done_testing();
