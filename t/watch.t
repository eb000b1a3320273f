# SPDX-License-Identifier: Apache-2.0
# Live change tracking: every kind of change made to a set's files reaches
# its open Change List through inotify.  The rescan interval is an hour, so
# only the live watcher can make these pass.  Each scenario waits (with a
# deadline) for its expected entries; nothing here measures time.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path remove_tree);
use Digest::SHA qw(sha256_hex);
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF put get req doc xpc validate wait_for
              fetch_list);
use RSTest::Destination;

plan tests => 38;

my $RESCAN = 3600;
my $srv = started_server(
    conf => STATE_CONF . "ResourceSyncRescanInterval $RESCAN\n"
            . set_conf('w', 'www/w', 'ResourceSyncHash sha-256') . STATUS_CONF,
    dirs => ['outside'], files => { 'www/w/base.txt' => "base\n", 'www/w/keep/k.txt' => "k\n" });
my $d = $srv->dir;
my $W = "$d/www/w";
my $OUT = "$d/outside";          # same file system, not in the set
my $B = $srv->base;
my $dest = RSTest::Destination->new(base => $B, set => 'w', src => $W, root => "$B/w/");
$dest->baseline;

like(wait_for(sub { my $s = get("$B/rs-status?text")->content; $s =~ /mode=watching/ ? $s : undef }, 30)
     // '', qr/set: w .*mode=watching/, 'the set is watched (status page)');

# Entries after the n-th one, once `$pred` holds for them.
my $seen = 0;
sub next_changes {
    my ($pred, $what) = @_;
    my $new = wait_for(sub {
        my $all = $dest->changes or return undef;
        my @n = @$all[$seen .. $#$all];
        return $pred->(\@n) ? \@n : undef;
    }, 30);
    ok($new, $what) or diag(explain($dest->changes));
    $new ||= [];
    $seen += @$new;
    return $new;
}
sub has { my ($n, $change, $path) = @_; scalar grep { $_->{change} eq $change && $_->{loc} eq "$B/w/$path" } @$n }
my $mk = 0;
sub marker { my $m = "marker-" . ++$mk . ".txt"; put("$W/$m", "m\n"); $m }

# 1. create (written and closed)
put("$W/new.txt", "hello\n");
my $n = next_changes(sub { has($_[0], 'created', 'new.txt') }, 'create: a created entry');
my ($e) = grep { $_->{loc} eq "$B/w/new.txt" } @$n;
ok($e && $e->{hash} eq 'sha-256:' . sha256_hex("hello\n") && $e->{length} == 6
   && $e->{type} eq 'text/plain', 'create: hash, length and type of the new file');

# 2. a burst of writes, one close: one updated entry
{
    open my $fh, '>>', "$W/new.txt" or die $!;
    $fh->autoflush(1);
    print $fh "line $_\n" for 1 .. 200;
    close $fh;
}
my $m = marker();
$n = next_changes(sub { has($_[0], 'created', $m) }, 'burst: the marker after the close arrives');
is(scalar(grep { $_->{loc} eq "$B/w/new.txt" } @$n), 1, 'burst: exactly one entry for 200 writes and one close');
ok(has($n, 'updated', 'new.txt'), 'burst: it is an update');

# 3. delete
unlink "$W/base.txt";
next_changes(sub { has($_[0], 'deleted', 'base.txt') }, 'delete: a deleted entry');

# 4. rename within the tree
rename "$W/new.txt", "$W/renamed.txt" or die $!;
next_changes(sub { has($_[0], 'deleted', 'new.txt') && has($_[0], 'created', 'renamed.txt') },
             'rename: deleted old URL and created new URL');

# 5. move a file in from outside, and out again
put("$OUT/in.txt", "from outside\n");
rename "$OUT/in.txt", "$W/in.txt" or die $!;
next_changes(sub { has($_[0], 'created', 'in.txt') }, 'move in: created');
rename "$W/in.txt", "$OUT/in.txt" or die $!;
next_changes(sub { has($_[0], 'deleted', 'in.txt') }, 'move out: deleted');

# 6. mkdir -p with files at every level
make_path("$W/a/b/c");
put("$W/a/1.txt", "1\n");
put("$W/a/b/2.txt", "2\n");
put("$W/a/b/c/3.txt", "3\n");
next_changes(sub { has($_[0], 'created', 'a/1.txt') && has($_[0], 'created', 'a/b/2.txt')
                   && has($_[0], 'created', 'a/b/c/3.txt') }, 'mkdir -p: every file created');
# ... and the new directories are watched: a later change deep inside
put("$W/a/b/c/4.txt", "4\n");
next_changes(sub { has($_[0], 'created', 'a/b/c/4.txt') }, 'a file in a new directory is seen');

# 7. a directory moved within the tree: its files move, and it is still watched there
rename "$W/a", "$W/moved" or die $!;
next_changes(sub { has($_[0], 'deleted', 'a/b/2.txt') && has($_[0], 'created', 'moved/b/2.txt')
                   && has($_[0], 'created', 'moved/b/c/4.txt') }, 'directory rename: deleted + created for each file');
put("$W/moved/b/5.txt", "5\n");
next_changes(sub { has($_[0], 'created', 'moved/b/5.txt') }, 'the moved directory is watched under its new path');

# 8. a directory moved out of the tree, changed outside (not listed), moved back in
rename "$W/moved", "$OUT/moved" or die $!;
next_changes(sub { has($_[0], 'deleted', 'moved/1.txt') && has($_[0], 'deleted', 'moved/b/c/3.txt') },
             'directory moved out: every file deleted');
put("$OUT/moved/outside-only.txt", "x\n");
$m = marker();
$n = next_changes(sub { has($_[0], 'created', $m) }, 'marker after a change outside the tree');
ok(!grep({ $_->{loc} =~ /outside-only/ } @$n), 'a change in a directory moved out is not listed');
rename "$OUT/moved", "$W/back" or die $!;
next_changes(sub { has($_[0], 'created', 'back/outside-only.txt') && has($_[0], 'created', 'back/b/c/3.txt') },
             'directory moved in: every file created');

# 9. rm -rf
remove_tree("$W/back");
next_changes(sub { has($_[0], 'deleted', 'back/1.txt') && has($_[0], 'deleted', 'back/b/5.txt')
                   && has($_[0], 'deleted', 'back/outside-only.txt') }, 'rm -rf: every file deleted');

# 10. permissions: unreadable for the server is deleted, readable again is
# created (as root the server runs as nobody; as another user it runs as
# that user, who owns the file and cannot read it at mode 000 either)
put("$W/perm.txt", "p\n");
next_changes(sub { has($_[0], 'created', 'perm.txt') }, 'perm: created');
chmod 0000, "$W/perm.txt";
next_changes(sub { has($_[0], 'deleted', 'perm.txt') }, 'chmod 000: deleted');
chmod 0644, "$W/perm.txt";
next_changes(sub { has($_[0], 'created', 'perm.txt') }, 'chmod 644: created again');

# 11. a hard link and a symlink (created, never closed) are seen
link "$W/perm.txt", "$W/hard.txt" or die $!;
symlink "perm.txt", "$W/soft.txt" or die $!;
next_changes(sub { has($_[0], 'created', 'hard.txt') && has($_[0], 'created', 'soft.txt') },
             'hard link and symlink: created');

# 12. dotfiles and excluded names never appear
put("$W/.hidden", "h\n");
$m = marker();
$n = next_changes(sub { has($_[0], 'created', $m) }, 'marker after a dotfile');
ok(!grep({ $_->{loc} =~ /hidden/ } @$n), 'a dotfile is not listed');

# The open list answers 304 while nothing changes, and a new ETag after a change.
my $lists = $dest->index;
my $open = $lists->[-1]{loc};
my $r1 = get($open);
is(req('GET', $open, 'If-None-Match' => $r1->header('ETag'))->code, 304, 'open list: 304 while unchanged');
my $h = req('HEAD', $open);
is($h->header('ETag'), $r1->header('ETag'), 'open list: HEAD has the same ETag');
$m = marker();
next_changes(sub { has($_[0], 'created', $m) }, 'one more change');
my $r2 = get($open);
isnt($r2->header('ETag'), $r1->header('ETag'), 'open list: a new ETag after a change');
ok(!validate($r2->content) && !validate($r2->content, 'strict'), 'open list validates (lenient and official)');

# Baseline + changes = the tree; the order invariants held throughout.
is($dest->sync_until_equal(60), '', 'the Resource List taken at the start plus the changes rebuild the tree');
is_deeply($dest->errors, [], 'order, uniqueness and validity held in every document');
# The Resource List is rewritten at the set's tick (an hour here): changes
# since are in the Change Lists only.  A restart before the tick must not
# leave it like that until some later change: the new watcher writes a new
# list after its startup scan.
{
    my $m = marker();
    next_changes(sub { has($_[0], 'created', $m) }, 'a change before the restart');
    my $l = fetch_list('w', $B);
    ok(!grep({ $_->{loc} eq "$B/w/$m" } @{ $l->{entries} }),
       'the Resource List does not have it before the tick');
    $srv->graceful;
    my $after = wait_for(sub {
        my $n = fetch_list('w', $B);
        (grep { $_->{loc} eq "$B/w/$m" } @{ $n->{entries} }) ? $n : undef }, 30);
    ok($after, 'after a restart the new watcher writes a Resource List that has it');
    ok($after && RSTest::iso2epoch($after->{at}) > RSTest::iso2epoch($l->{at}), '... with a later at');
}
unlike($srv->log_text, qr/\[resourcesync:(error|crit|alert|emerg)\]/, 'no module errors');
$srv->stop;
