# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# A fresh Resource List: a file created or deleted shows in (leaves) the
# Resource List a second or so after the set went quiet, although the
# rescan interval is long, at a set with an index.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes qw(time);
use RSTest qw(fetch_list wait_for started_server set_conf STATE_CONF put_atomic);

plan tests => 6;

umask 022;

my %files = map { sprintf('www/f/file%02d.txt', $_) => "content $_\n" } 1 .. 12;
my $srv = started_server(mpm => 'event', dirs => ['www/f'], files => \%files,
                         conf => STATE_CONF . "ResourceSyncRescanInterval 600\n"
                                 . set_conf('f', 'www/f', 'ResourceSyncMaxEntries 5'));
my $base = $srv->base;

sub locs {
    my $l = eval { fetch_list('f', $base) } or return ();
    return ($l->{root}, map { $_->{loc} } @{ $l->{entries} });
}

my ($root, @locs) = locs();
is($root, 'sitemapindex', 'the set has a Resource List Index (12 entries, 5 per part)');
is(scalar @locs, 12, 'it lists the 12 files');

# No full scan comes within the test (rescans every 600 s): only the live
# path can make the new file show.
my $new = "$base/f/new.txt";
put_atomic($srv->dir . '/www/f/new.txt', "new\n", $srv->dir);
my $t0 = time;
my $seen = wait_for(sub { (grep { $_ eq $new } locs()) ? 1 : 0 }, 20);
ok($seen, 'a created file shows in the Resource List') or diag('not after 20 s');
note(sprintf('shown after %.1f s', time - $t0));

unlink($srv->dir . '/www/f/file03.txt') or die $!;
my $gone = "$base/f/file03.txt";
my $left = wait_for(sub { my ($r, @l) = locs(); @l && !grep { $_ eq $gone } @l }, 20);
ok($left, 'a deleted file leaves the Resource List') or diag('still listed after 20 s');

($root, @locs) = locs();
my @want = sort((grep { $_ ne $gone } map { sprintf("$base/f/file%02d.txt", $_) } 1 .. 12), $new);
is_deeply([sort @locs], \@want, 'the list is exactly the tree');
