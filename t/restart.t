# SPDX-License-Identifier: Apache-2.0
use strict;
use List::Util ();
use warnings;
# Restarts: changes made while httpd is stopped, graceful restarts, a killed
# watcher, and hard stop/start (snapshot generations and hashing).  Private
# servers: prefork for the stop/start cases, event for the watcher cases,
# graceful restarts under both.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use POSIX ();
use Time::HiRes qw(sleep time);
use RSTest qw(get head fetch_list wait_for wait_ok alive private_server set_conf STATE_CONF put_atomic rl_url
              doc xpc changes_of);

plan tests => 42;

umask 022;

my $CONF = STATE_CONF . "ResourceSyncRescanInterval 1\n"
           . set_conf('r', 'www/data', 'ResourceSyncMaxEntries 3');

sub new_server {
    my ($mpm, %files) = @_;
    my $srv = private_server(mpm => $mpm, conf => $CONF);
    $srv->populate(dirs => ['www/data']);
    put($srv, $_, $files{$_}) for keys %files;
    return $srv;
}

sub data { $_[0]->dir . '/www/data' }

# Create or replace a file of the set atomically, so no scan sees it half
# written.
sub put { my ($srv, $rel, $content) = @_; put_atomic(data($srv) . "/$rel", $content, $srv->dir) }

sub slurp {
    open my $fh, '<', $_[0] or return undef;
    binmode $fh;
    local $/;
    return <$fh>;
}

# The tree as { url => "md5:...|length" }.
sub tree_state {
    my ($srv) = @_;
    my %h;
    opendir my $d, data($srv) or die $!;
    for my $n (grep { !/^\./ } readdir $d) {
        my $c = slurp(data($srv) . "/$n");
        $h{$srv->base . "/data/$n"} = 'md5:' . md5_hex($c) . '|' . length($c);
    }
    return \%h;
}

# The Resource List as { url => "md5:...|length" } plus the fetched list.
sub list_state {
    my ($srv) = @_;
    my $l = eval { fetch_list('r', $srv->base) } or return (undef, undef);
    my %h = map { $_->{loc} => ($_->{hash} // '') . '|' . ($_->{length} // '') } @{ $l->{entries} };
    return (\%h, $l);
}

sub same {
    my ($a, $b) = @_;
    return 0 unless $a && $b && keys %$a == keys %$b;
    for (keys %$a) { return 0 unless defined $b->{$_} && $a->{$_} eq $b->{$_} }
    return 1;
}

# Wait until the Resource List equals the tree; returns the list or undef.
sub wait_synced {
    my ($srv, $timeout) = @_;
    return wait_for(sub {
        my ($h, $l) = list_state($srv);
        same($h, tree_state($srv)) ? $l : undef;
    }, $timeout || 30);
}

# Generation of a snapshot, from its part URLs (<history>-<gen>-<n>.xml).
sub part_gens {
    my ($l) = @_;
    return map { m{/resourcelist/[0-9a-f]{8}-(\d+)-\d+\.xml$} ? $1 : -1 } @{ $l->{parts} };
}

# The error log from byte offset $from on.
sub log_from {
    my ($srv, $from) = @_;
    return substr($srv->log_text, $from);
}

# "bytes hashed" of the first full scan of set r in a piece of the log.
sub first_scan_hashed {
    my ($text) = @_;
    return $text =~ /set r: scanned \d+ files .*?, (\d+) bytes hashed\)/ ? $1 : undef;
}

# Run GETs in a child process while $during->() runs; returns
# (number of requests, [failures]).
sub load_during {
    my ($srv, $during) = @_;
    my $out = $srv->dir . '/load.out';
    my $stop = $srv->dir . '/load.stop';
    unlink $out, $stop;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        my $ua = LWP::UserAgent->new(timeout => 10, keep_alive => 0);
        open my $fh, '>', $out or POSIX::_exit(1);
        $fh->autoflush(1);
        my @urls = (rl_url('r', $srv->base), $srv->base . '/data/keep.txt');
        my $i = 0;
        until (-e $stop) {
            my $u = $urls[$i++ % @urls];
            my $r = $ua->get($u);
            print $fh $r->code . " $u\n";
            sleep 0.01;
        }
        close $fh;
        POSIX::_exit(0);   # never run the server objects' destructors here
    }
    $during->();
    open my $sf, '>', $stop or die $!;
    close $sf;
    waitpid $pid, 0;
    my @lines = split /\n/, slurp($out) // '';
    return (scalar @lines, [grep { !/^200 / } @lines]);
}

# Graceful restart under load: keeps serving, new watcher, same list.
sub graceful_check {
    my ($srv, $mpm) = @_;
    # (both callers have just seen the list match the tree)
    my $body = get(rl_url('r', $srv->base))->content;
    my @old = $srv->watchers;
    my $ppid = $srv->pid;
    my @new;
    my ($n, $fail) = load_during($srv, sub {
        sleep 0.3;
        $srv->graceful;
        @new = @{ wait_for(sub {
            my @w = $srv->watchers;
            @w == 1 && $w[0] != $old[0] ? \@w : undef }, 30) || [] };
        sleep 1.5;     # and some more requests with the new generation
    });
    ok(@old == 1 && @new == 1 && $new[0] != $old[0] && $srv->pid == $ppid,
       "$mpm: graceful restart replaces the watcher (@old -> @new)");
    ok($n >= 20 && !@$fail, "$mpm: $n requests during the graceful restart all answered 200")
        or diag explain $fail;
    my $r = get(rl_url('r', $srv->base));
    ok($r->code == 200 && $r->content eq $body,
       "$mpm: after the graceful restart the same Resource List is served")
        or diag $r->status_line;
    sleep 1.5;
    is(scalar($srv->watchers), 1, "$mpm: exactly one watcher after the graceful restart");
    put($srv, 'after-graceful.txt', "made after the graceful restart\n");
    ok(wait_synced($srv), "$mpm: a file created after the graceful restart is listed");
}

# ====================================== prefork: changes while stopped
{
    my $srv = new_server('prefork', 'keep.txt' => "unchanged\n", 'change.txt' => "old\n",
                         'delete.txt' => "to be deleted\n", 'k2.txt' => "also unchanged\n");
    $srv->start_ok('prefork server starts');
    my $l1 = wait_synced($srv);
    ok($l1, 'prefork: the Resource List matches the tree');
    ok($l1 && $l1->{root} eq 'sitemapindex' && @{ $l1->{parts} } >= 2,
       'prefork: an index of parts (ResourceSyncMaxEntries 3)');

    my @w = $srv->watchers;
    $srv->stop;
    ok(@w == 1 && !$srv->pid && wait_for(sub { !alive($w[0]) }, 10),
       'prefork: stopped, with its watcher');
    put($srv, 'change.txt', "new content, longer than before\n");
    put($srv, 'created.txt', "created while stopped\n");
    unlink data($srv) . '/delete.txt' or die $!;
    my $mark = length $srv->log_text;
    $srv->start_ok('prefork: starts again');
    my $l2 = wait_synced($srv);
    ok($l2, 'prefork: changes made while stopped are listed (created, changed with '
            . 'md5 and length, deleted)')
        or diag explain [list_state($srv)], tree_state($srv);
    my $h = first_scan_hashed(log_from($srv, $mark));
    is($h, length("new content, longer than before\n") + length("created while stopped\n"),
       'prefork: only the changed and created files were hashed');

    # -------------------------------------- hard stop/start, unchanged tree
    my @g2 = part_gens($l2);
    $srv->stop;
    $mark = length $srv->log_text;
    $srv->start_ok('prefork: starts a third time');
    my $r = get(rl_url('r', $srv->base));
    is($r->code, 200, 'prefork: the Resource List is served at once after a start '
                      . '(previous snapshot on disk)');
    wait_ok(sub { defined first_scan_hashed(log_from($srv, $mark)) }, 30,
            'prefork: the startup scan after the hard restart is logged');
    is(first_scan_hashed(log_from($srv, $mark)), 0,
       'prefork: the unchanged tree is not hashed again after a hard restart');
    like(log_from($srv, $mark), qr/set r: scanned 4 files .*\(4 listed, 0 rows written, 0 removed/,
         'prefork: ... and no inventory rows are rewritten');
    my ($hs, $l3) = list_state($srv);
    ok(same($hs, tree_state($srv)), 'prefork: the list still matches the tree');
    my @g3 = part_gens($l3);
    ok(@g2 && @g3 && $g3[0] >= $g2[0], "prefork: snapshot generation does not go back "
                                      . "(@g2 -> @g3)");
    ok(@g2 && "@g3" eq "@g2", 'prefork: the unchanged tree keeps its snapshot (no new '
                              . 'generation after the restart)');
    ok(RSTest::iso2epoch($l3->{at}) >= RSTest::iso2epoch($l2->{at}),
       "prefork: the index's at does not go back ($l2->{at} -> $l3->{at})");

    # a change after the restart makes a strictly newer generation
    put($srv, 'after-restart.txt', "after the restart\n");
    my $l4 = wait_synced($srv);
    my @g4 = $l4 ? part_gens($l4) : ();
    # (parts nothing changed in keep the generation they were written in)
    ok(@g4 && @g3 && List::Util::max(@g4) > List::Util::max(@g3),
       "prefork: a change after the restart publishes a newer generation (@g3 -> @g4)");
    ok($l4 && RSTest::iso2epoch($l4->{at}) > RSTest::iso2epoch($l3->{at}),
       'prefork: ... with a later at');
    ok($l4 && @{ $l4->{parts} } && !grep({ get($_)->code != 200 } @{ $l4->{parts} }),
       'prefork: its parts are served');

    # graceful restart under prefork
    graceful_check($srv, 'prefork');
    $srv->stop;
    my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ } split /\n/, $srv->log_text;
    is_deeply(\@bad, [], 'prefork: no module warnings or errors logged');
}

# ========================================== event: graceful, kill -9
{
    my $srv = new_server('event', 'keep.txt' => "unchanged\n", 'b.txt' => "b\n");
    $srv->start_ok('event server starts');
    ok(wait_synced($srv), 'event: the Resource List matches the tree');

    graceful_check($srv, 'event');

    # ---------------------------------------------- kill -9 of the watcher
    my @w = $srv->watchers;
    ok(@w == 1 && kill('KILL', $w[0]), "event: watcher (pid @w) killed with SIGKILL");
    my $new = wait_for(sub { my @n = $srv->watchers; @n == 1 && $n[0] != $w[0] ? $n[0] : undef },
                       30);
    ok($new, 'event: a new rs-watcher appears (pid ' . ($new // 'none') . ')');
    my $r = get(rl_url('r', $srv->base));
    is($r->code, 200, 'event: the Resource List is still served');
    like($srv->log_text, qr/watcher \(pid $w[0]\) died \(exit status or signal 9\); starting a new one/,
         'event: the death is logged');
    put($srv, 'after-kill.txt', "created after the watcher was killed\n");
    my $l1 = wait_synced($srv);
    ok($l1 && grep({ $_->{loc} eq $srv->base . '/data/after-kill.txt' } @{ $l1->{entries} }),
       'event: a file created afterwards is listed after the next rescan');
    # The open list's length, which the new watcher took from the store and
    # then kept up with the new entry: HEAD says exactly what GET sends.
    wait_ok(sub { grep { $_->{loc} =~ m{/after-kill\.txt$} } changes_of('r', $srv->base) }, 30,
            'event: the file created after the kill is journaled');
    my $ix = get($srv->base . '/resourcesync/r/changelist.xml');
    my @locs = $ix->code == 200
        ? map { $_->textContent } xpc(doc($ix->content))->findnodes('//sm:sitemap/sm:loc') : ();
    my ($og, $oh) = @locs ? (get($locs[-1]), head($locs[-1])) : ();
    ok($og && $og->code == 200 && $oh->code == 200 && length($og->content) > 0
       && ($oh->header('Content-Length') // -1) == length($og->content)
       && $oh->header('ETag') eq $og->header('ETag'),
       'event: HEAD of the open list after the restart of the watcher has the GET\'s length')
        or diag('HEAD ', ($oh ? $oh->header('Content-Length') // 'none' : 'none'), ', GET ',
                ($og ? length($og->content) : 'none'));
    sleep 1.2;
    is(scalar($srv->watchers), 1, 'event: still exactly one watcher');
    @w = $srv->watchers;
    $srv->stop;
    ok(@w == 1 && !$srv->pid && wait_for(sub { !alive($w[0]) }, 10),
       'event: stopped, no watcher left');
    my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ && !/watcher \(pid \d+\) died \(exit status or signal 9\)/ }
              split /\n/, $srv->log_text;
    is_deeply(\@bad, [], 'event: no module warnings or errors logged but the death of the watcher');
}
