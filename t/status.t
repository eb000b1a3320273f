# The shared-memory status segment, seen through "SetHandler resourcesync-status".
use strict;
use warnings;
use Apache::Test qw(plan ok);
use Apache::TestUtil qw(t_cmp);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(base get wait_for fetch_list httpd_pid watcher_pids);

plan tests => 13;

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

# Wait until every set has published its first snapshot.
my $st = wait_for(sub {
    my $s = status() or return undef;
    my @sets = values %{ $s->{sets} };
    return (@sets && !grep { $_->{generation} == 0 } @sets) ? $s : undef;
}, 60);
ok($st);
ok(t_cmp($st->{'watcher-state'}, qr/^(watching|scanning)$/, 'watcher state'));

# The pid is the rs-watcher child of the server's parent process.
my ($wpid) = watcher_pids(httpd_pid());
ok(t_cmp($st->{'watcher-pid'}, $wpid, 'watcher pid'));

ok(t_cmp($st->{'scan-files'}, qr/^[1-9]\d*$/, 'scan progress counted files'));

# The heartbeat moves.
my ($hb) = $st->{heartbeat} =~ /^(\S+)/;
ok(wait_for(sub { my $s = status(); $s && ($s->{heartbeat} =~ /^(\S+)/)[0] ne $hb }, 20));

# Per-set entries agree with what the Resource List says.
my @names = sort keys %{ $st->{sets} };
ok(t_cmp("@names", 'aliased dots main mut rules small vset', 'sets of the segment (all vhosts)'));
for my $set (qw(main small rules)) {
    my $s = wait_for(sub {
        my $list = fetch_list($set);
        my $now = status()->{sets}{$set};
        return scalar(@{ $list->{entries} }) == $now->{entries} && $list->{at} eq $now->{at};
    }, 30);
    ok($s);
}
# Parts are cut by content (at ResourceSyncMaxEntries 3, about one per
# entry): the status counts the parts the index names.
{
    my $small = fetch_list('small');
    ok(t_cmp($st->{sets}{small}{parts}, scalar(@{ $small->{parts} }),
             'small: the status counts the parts of its index'));
}

# The ring and the open Change Lists: the count of a set's open list is
# the number of entries it serves.
ok(t_cmp($st->{'recent-changes'}, qr/^slots=4096 newest-sequence=\d+$/, 'ring size and head'));
# A change in the set mut (undone right after: two changes) makes the
# open list non-empty.
my $probe = RSTest::tree('mut') . '/status-probe.txt';
open my $pf, '>', $probe or die "$probe: $!";
print $pf "probe\n";
close $pf;
wait_for(sub { (status()->{sets}{mut}{'open-changes'} // 0) > 0 }, 30);
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
    return $n > 0 && $again->{'open-changes'} eq $s->{'open-changes'}
        && $n == $s->{'open-changes'} && $s->{'last-change'} =~ /Z$/
        && get($open)->content =~ /status-probe\.txt.*status-probe\.txt/s;
}, 30)) or print "# $why\n";     # open-changes: the entries its open Change List serves

# Other methods: 405 naming GET and HEAD.
my $post = RSTest::req('POST', base() . '/rs-status?text');
my $allow = $post->header('Allow') // '';
ok($post->code == 405 && $allow =~ /\bGET\b/ && $allow =~ /\bHEAD\b/);
