# docs/ARCHITECTURE.md's file table against the tree: every C source and
# header of the module and of rs-tool is named in it, once, and every file
# it names exists ("x.[ch]" names x.c and x.h).  No server.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Find;

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
done_testing();
