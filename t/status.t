# SPDX-License-Identifier: Apache-2.0
# The shared-memory status segment, seen through "SetHandler resourcesync-status".
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(base get wait_for wait_ok fetch_list httpd_pid watcher_pids);
use Sys::Hostname qw(hostname);

plan tests => 15;

sub status {
    my $r = get(base() . '/rs-status?text');
    return undef unless $r->code == 200;
    my %h;
    my %sets;
    for (split /\n/, $r->content) {
        if (/^set: (\S+) (.*)$/) {
            my ($name, $rest) = ($1, $2);
            $sets{$name} = { map { split /=/, $_, 2 } split / /, $rest };
        }
        elsif (/^([\w-]+): (.*)$/) {
            $h{$1} = $2;
        }
    }
    $h{sets} = \%sets;
    return \%h;
}

my $st = wait_ok(sub {
    my $s = status() or return undef;
    my @sets = values %{ $s->{sets} };
    return (@sets && !grep { $_->{generation} == 0 } @sets) ? $s : undef;
}, 60, 'the status page shows every set with its first snapshot') || { sets => {} };
like($st->{'watcher-state'}, qr/^(watching|scanning)$/, 'watcher state');

# The pid is the rs-watcher child of the server's parent process.
my ($wpid) = watcher_pids(httpd_pid());
is($st->{'watcher-pid'}, $wpid, 'watcher pid');
is($st->{node}, hostname() . ' store=sqlite', 'node name (the host name by default) and store');

like($st->{'scan-files'}, qr/^[1-9]\d*$/, 'scan progress counted files');

# The heartbeat moves.
my ($hb) = ($st->{heartbeat} // '') =~ /^(\S+)/;
ok($hb && wait_for(sub { my $s = status(); $s && ($s->{heartbeat} =~ /^(\S+)/)[0] ne $hb }, 20),
   'the heartbeat moves');

# Per-set entries agree with what the Resource List says.
my @names = sort keys %{ $st->{sets} };
is("@names", 'aliased dots main mut rules small vset', 'sets of the segment (all vhosts)');
for my $set (qw(main small rules)) {
    my $last = '';
    ok(wait_for(sub {
        my $list = fetch_list($set);
        my $now = status()->{sets}{$set};
        $last = sprintf('list: %d entries at %s; status: %s entries at %s', scalar @{ $list->{entries} },
                        $list->{at}, $now->{entries} // 'none', $now->{at} // 'none');
        return scalar(@{ $list->{entries} }) == ($now->{entries} // -1) && $list->{at} eq ($now->{at} // '');
    }, 30), "$set: the status counts the entries of its Resource List, with its at")
        or diag($last);
}
# Parts are cut by content (at ResourceSyncMaxEntries 4, 3 or 4 parts):
# the status counts the parts the index names.
{
    my $small = fetch_list('small');
    is($st->{sets}{small}{parts}, scalar(@{ $small->{parts} }),
       'small: the status counts the parts of its index');
}

# The ring and the open Change Lists: the count of a set's open list is
# the number of entries it serves.
like($st->{'recent-changes'}, qr/^slots=4096 newest-sequence=\d+$/, 'ring size and head');
# A change in the set mut (undone right after: two changes) makes the
# open list non-empty.
my $probe = RSTest::tree('mut') . '/status-probe.txt';
open my $pf, '>', $probe or die "$probe: $!";
print $pf "probe\n";
close $pf;
wait_ok(sub { (status()->{sets}{mut}{'open-changes'} // 0) > 0 }, 30,
        'a change in mut: the status counts an open change');
unlink $probe;
my $why = '';
ok(wait_for(sub {
    my $s = status()->{sets}{mut} or return undef;
    my $idx = get(base() . '/resourcesync/mut/changelist.xml');
    return undef unless $idx->code == 200;
    my ($open) = $idx->content =~ m{.*<loc>([^<]+)</loc>}s or return undef;
    my $n = () = get($open)->content =~ /<url>/g;
    my $again = status()->{sets}{mut};
    $why = "open list $open: $n entries; status: " . join(' ', map { "$_=$s->{$_}" } sort keys %$s);
    # Both changes journaled (in the open list, or in a list that closed
    # at ResourceSyncMaxEntries 5 after them, leaving the open one empty).
    my $probes = grep { $_->{loc} =~ m{/status-probe\.txt$} } RSTest::changes_of('mut');
    return $probes >= 2 && $again->{'open-changes'} eq $s->{'open-changes'}
        && $n == $s->{'open-changes'} && ($n == 0 || $s->{'last-change'} =~ /Z$/);
}, 30), "mut: open-changes is the number of entries its open Change List serves") or diag($why);

# Other methods: 405 naming GET and HEAD.
my $post = RSTest::req('POST', base() . '/rs-status?text');
my $allow = $post->header('Allow') // '';
ok($post->code == 405 && $allow =~ /\bGET\b/ && $allow =~ /\bHEAD\b/, 'POST: 405, Allow names GET and HEAD')
    or diag($post->code . " Allow: $allow");
