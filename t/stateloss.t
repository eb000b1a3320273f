# SPDX-License-Identifier: Apache-2.0
# State loss: the state store deleted while httpd is stopped, deleted
# while it runs (then a graceful restart), replaced by an older copy, and
# rolled back by the loss of its write-ahead log's tail.  In each case the
# module must start a new history: every closed Change List URL served
# before answers 404 (or the same bytes), the new Change List Index names
# only lists of the new history, a destination that followed the old one
# is told to take a new baseline (the index begins after what it saw), and
# a new baseline plus the new Change Lists give exactly the tree.  Private
# server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Copy qw(copy);
use RSTest qw(started_server set_conf STATE_CONF put get doc xpc wait_for wait_ok);
use RSTest::Destination;

plan tests => 47;

my $srv = started_server(
    conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
            . set_conf('s', 'www/s', 'ResourceSyncMaxEntries 8', 'ResourceSyncHash sha-256'),
    files => { map { ("www/s/base-$_.txt" => "base $_\n") } 1 .. 6 });
my $d = $srv->dir;
my $www = "$d/www/s";
my $state = "$d/state";
my $B = $srv->base;
my $n = 0;

# The Change List Index: [ { loc, from, until } ], or undef while not 200.
sub index_lists {
    my $r = get("$B/resourcesync/s/changelist.xml");
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return [ map { { loc => $x->findvalue('sm:loc', $_), until => $x->findvalue('rs:md/@until', $_) } }
             $x->findnodes('/sm:sitemapindex/sm:sitemap') ];
}

sub history_of { $_[0] =~ m{/changelist/([0-9a-f]{8})-\d+\.xml$} ? $1 : 'none' }

# Closed lists now served: { url => content }; waits for at least $min
# (one test, named $what).
sub closed_lists {
    my ($min, $what) = @_;
    my %c;
    wait_ok(sub {
        %c = ();
        my $l = index_lists() or return 0;
        for my $e (grep { $_->{until} } @$l) {
            my $r = get($e->{loc});
            return 0 unless $r->code == 200;
            $c{ $e->{loc} } = $r->content;
        }
        return keys(%c) >= $min;
    }, 60, $what);
    return \%c;
}

# Changes that close lists (8 entries each): $k new files.  At most 8
# lists are in the index (ResourceSyncMaxEntries): in_step's 9 changes close
# one or two, so the lists a destination in step needs stay in it.
sub churn {
    my ($k) = @_;
    put("$www/c" . ++$n . ".txt", "change $n\n") for 1 .. $k;
}

# Changes made while no watcher runs (or the store is gone).
sub offline_changes {
    put("$www/off" . ++$n . ".txt", "offline $n\n");
    put("$www/base-1.txt", "base 1 rewritten $n\n");
    unlink "$www/base-2.txt" if -e "$www/base-2.txt";
    my @c = glob("$www/c*.txt");
    unlink $c[0] if @c;
}

sub log_size { -s $srv->error_log // 0 }

# Copy the store files matching $glob into $to, owned like the state
# directory (the watcher runs as the server's user).
sub copy_store {
    my ($glob, $to) = @_;
    my ($uid, $gid) = (stat $state)[4, 5];
    for my $f (glob $glob) {
        copy($f, $to) or die "copy $f: $!";
        (my $name = $f) =~ s{.*/}{};
        chown $uid, $gid, "$to/$name";
    }
}

# What must hold after the store was lost ($name), given the closed lists
# served before ($before: url => content), the old history, a destination
# that followed the old history, and the error log from $from on.
sub check_after {
    my ($name, $before, $old, $dest, $from, $log_re) = @_;
    ok(wait_for(sub { substr($srv->log_text, $from) =~ $log_re }, 60),
       "$name: the new history is logged") or diag(substr($srv->log_text, $from));
    my $lists = wait_for(sub {
        my $l = index_lists() or return undef;
        return (@$l && history_of($l->[0]{loc}) ne $old) ? $l : undef;
    }, 60) || [];
    my %h = map { history_of($_->{loc}) => 1 } @$lists;
    my @new = keys %h;
    ok(@new == 1 && $new[0] ne $old && $new[0] ne 'none',
       "$name: the index names only lists of one new history") or diag("old $old, now @new");
    my @changed = grep { my $r = get($_); $r->code != 404 && $r->content ne $before->{$_} }
                  sort keys %$before;
    is_deeply(\@changed, [], "$name: closed lists served before are 404 or the same bytes");
    my @gone = grep { get($_)->code != 404 } sort keys %$before;
    is_deeply(\@gone, [], "$name: the old history's closed lists are gone");
    # The destination of the old history: told, never silently wrong.
    my $told = wait_for(sub { $dest->sync; $dest->rebaseline }, 60);
    ok($told, "$name: the old destination is told to take a new baseline")
        or diag(join("\n", @{ $dest->history }));
    $dest->baseline;
    churn(2);
    is($dest->sync_until_equal(60), '', "$name: new baseline + new Change Lists give the tree")
        or diag(join("\n", @{ $dest->history }));
    is_deeply($dest->errors, [], "$name: documents valid, order invariants hold");
}

# A destination in step with the current history, and the closed lists
# it has seen; $k changes first so that lists close.
sub in_step {
    my ($k) = @_;
    my $lists = wait_ok(sub { index_lists() }, 60, 'in step: the Change List Index is served') || [];
    my $hist = @$lists ? history_of($lists->[0]{loc}) : 'none';
    my $dest = RSTest::Destination->new(base => $B, set => 's', src => $www, root => "$B/s/");
    $dest->baseline;
    my $count = scalar grep { $_->{until} } @$lists;
    churn($k);
    my $closed = closed_lists($count + 1, "in step: $k changes close a list ($hist)");
    is($dest->sync_until_equal(60), '', "in step before the loss ($hist)");
    return ($dest, $closed, $hist);
}

sub stop_start {
    my ($between) = @_;
    $srv->stop;
    $between->();
    my $from = log_size();
    $srv->start_ok('server starts again');
    return $from;
}

# 1. Deleted while httpd is stopped.
{
    my ($dest, $before, $old) = in_step(9);
    # Only state.db, as an operator might: SQLite must not take the
    # write-ahead log left beside it for the new store.
    my $from = stop_start(sub { unlink "$state/state.db"; offline_changes() });
    check_after('deleted while stopped', $before, $old, $dest, $from,
                qr/does not continue the published history $old: the store is new/);
}

# 2. Deleted while httpd runs, then a graceful restart.
{
    my ($dest, $before, $old) = in_step(9);
    my $from = log_size();
    unlink glob("$state/state.db*");
    ok(wait_for(sub { substr($srv->log_text, $from) =~ /state\.db (?:was deleted|was replaced by another file) while the watcher ran/ }, 60),
       'deleted while running: noticed by the running watcher');
    offline_changes();
    $srv->graceful;
    check_after('deleted while running', $before, $old, $dest, $from,
                qr/does not continue the published history $old: the store is new/);
}

# 3. Replaced by an older copy: a copy taken while stopped, lists closed
# afterwards, the copy put back while stopped.
{
    my ($dest, $before, $old);
    my $backup = "$d/backup";
    mkdir $backup;
    stop_start(sub { copy_store("$state/state.db*", $backup) });
    ($dest, $before, $old) = in_step(9);
    my $from = stop_start(sub {
        unlink glob("$state/state.db*");
        copy_store("$backup/state.db*", $state);
        offline_changes();
    });
    check_after('replaced by an older copy', $before, $old, $dest, $from,
                qr/does not continue the published history $old: Change List \d+ of set s was published/);
}

# 4. The write-ahead log's tail lost: its size noted while stopped, lists
# closed afterwards, httpd stopped without a checkpoint (the watcher is
# killed), the log cut back to that size.  When SQLite started a new log
# meanwhile (a checkpoint), the older copy of the store is put back
# instead, which is the same loss.
{
    my $wal = "$state/state.db-wal";
    my ($size, $head, $dest, $before, $old);
    my $backup = "$d/backup-wal";
    mkdir $backup;
    stop_start(sub {
        $size = -s $wal // 0;
        $head = wal_head($wal);
        copy_store("$state/state.db*", $backup);
    });
    ($dest, $before, $old) = in_step(9);
    my $from = stop_start(sub {
        if ($size && wal_head($wal) eq $head && -s $wal > $size) {
            truncate($wal, $size) or die "truncate: $!";
            unlink "$state/state.db-shm";
        }
        else {
            diag("the log was checkpointed: the older copy is put back instead");
            unlink glob("$state/state.db*");
            copy_store("$backup/state.db*", $state);
        }
        offline_changes();
    });
    check_after('write-ahead log tail lost', $before, $old, $dest, $from,
                qr/does not continue the published history $old: Change List \d+ of set s was published/);
}

sub wal_head {
    open my $fh, '<:raw', $_[0] or return '';
    read($fh, my $h, 32);
    return $h // '';
}
