# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# Stable parts of a Resource List Index (ResourceSyncMaxEntries 50, 300
# files): after a change the new index names the same part URLs but one or
# two, each kept part answers the same bytes and ETag, the rewritten part
# shows the change, the parts reconstruct the tree exactly; also across a
# graceful restart and a hard stop and start.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get doc xpc fetch_list wait_for started_server set_conf STATE_CONF put_atomic);

plan tests => 23;

umask 022;

my %files = map { sprintf('www/s/d%d/file%03d.txt', $_ % 3, $_) => "content $_\n" } 1 .. 300;
my $srv = started_server(mpm => 'event', dirs => ['www/s'], files => \%files,
                         conf => STATE_CONF . "ResourceSyncRescanInterval 600\n"
                                 . set_conf('s', 'www/s', 'ResourceSyncMaxEntries 50'));
my $base = $srv->base;
my $data = $srv->dir . '/www/s';

# The list as { parts => [urls], etag => {url => etag}, body => {url => bytes},
#               locs => [sorted entry URLs], at => index at }.
sub state_of {
    my $l = eval { fetch_list('s', $base) } or return undef;
    my %s = (parts => $l->{parts}, at => $l->{at}, locs => [sort map { $_->{loc} } @{ $l->{entries} }]);
    for my $p (@{ $l->{parts} }) {
        my $r = get($p);
        $s{etag}{$p} = $r->header('ETag');
        $s{body}{$p} = $r->content;
    }
    return \%s;
}

sub tree { [sort map { s{^www/s/}{$base/s/}r } keys %files] }

# Wait until the Resource List's entries equal the tree.
sub settled {
    my ($want) = @_;
    return wait_for(sub { my $s = state_of(); $s && "@{$s->{locs}}" eq "@$want" ? $s : undef }, 30);
}

sub compare {
    my ($old, $new, $what, $max_changed) = @_;
    my %old = map { $_ => 1 } @{ $old->{parts} };
    my @same = grep { $old{$_} } @{ $new->{parts} };
    my @changed = grep { !$old{$_} } @{ $new->{parts} };
    ok(@changed >= 1 && @changed <= $max_changed, "$what: 1 to $max_changed parts rewritten")
        or diag(scalar(@changed) . ' of ' . scalar(@{ $new->{parts} }));
    ok(@same >= @{ $old->{parts} } - 3, "$what: the other parts keep their URLs")
        or diag(scalar(@same) . ' of ' . scalar(@{ $old->{parts} }));
    is_deeply([map { $new->{etag}{$_} . $new->{body}{$_} } @same],
              [map { $old->{etag}{$_} . $old->{body}{$_} } @same],
              "$what: kept parts answer the same ETag and bytes");
    return @changed;
}

my $s0 = settled(tree());
ok($s0, 'the Resource List lists the 300 files');
cmp_ok(scalar @{ $s0->{parts} }, '>', 6, 'in more than 6 parts (content-defined, at most 50 each)');

# One file changed.
put_atomic("$data/d1/file100.txt", "changed content\n", $srv->dir);
my $s1 = wait_for(sub { my $s = state_of(); $s && $s->{at} ne $s0->{at} ? $s : undef }, 30);
ok($s1, 'a new Resource List after a change');
my @ch = compare($s0, $s1, 'one update', 2);
ok((grep { $s1->{body}{$_} =~ m{/s/d1/file100\.txt<} } @ch), 'the rewritten part lists the changed file');

# An insert and a delete (at a part boundary: the last entry of a part).
my ($last) = $s1->{body}{ $s1->{parts}[2] } =~ m{.*<loc>\Q$base\E/s/([^<]+)</loc>}s;
unlink("$data/$last") or die "$last: $!";
delete $files{"www/s/$last"};
put_atomic("$data/d0/new.txt", "new\n", $srv->dir);
$files{'www/s/d0/new.txt'} = 1;
my $s2 = settled(tree());
ok($s2, 'the list is exactly the tree after a delete at a boundary and an insert');
compare($s1, $s2, 'delete and insert', 4);

# Graceful restart: a new watcher goes on from the parts on disk.
$srv->graceful;
put_atomic("$data/d2/file002.txt", "after graceful\n", $srv->dir);
my $s3 = wait_for(sub { my $s = state_of(); $s && $s->{at} ne $s2->{at} && (grep { m{/s/d2/file002\.txt</loc>.*?length="15"}s } values %{ $s->{body} }) ? $s : undef }, 60);
ok($s3, 'graceful restart: the change shows');
compare($s2, $s3, 'after a graceful restart', 2);

# Hard stop and start; a change while stopped.
$srv->stop;
put_atomic("$data/d0/file003.txt", "while stopped\n", $srv->dir);
$srv->start_ok('starts again');
my $s4 = wait_for(sub { my $s = state_of(); $s && (grep { m{/s/d0/file003\.txt</loc>.*?length="14"}s } values %{ $s->{body} }) ? $s : undef }, 60);
ok($s4, 'hard restart: the change made while stopped shows');
compare($s3, $s4, 'after a hard restart', 2);
is_deeply($s4->{locs}, tree(), 'the parts reconstruct the tree exactly');

# Every part URL the index names answers 200.
is_deeply([grep { !defined $s4->{etag}{$_} } @{ $s4->{parts} }], [], 'every part answers');
