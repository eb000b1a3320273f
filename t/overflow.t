# SPDX-License-Identifier: Apache-2.0
# An inotify queue overflow is logged once per set and watcher life at
# notice (later ones at debug), and each one is repaired by a full scan.
# Root only: fs.inotify.max_queued_events is lowered while the server
# starts (an inotify instance takes the limit when it is created), then
# restored at once.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF put wait_for wait_ok list_entries);

my $SYSCTL = '/proc/sys/fs/inotify/max_queued_events';
plan skip_all => "needs root to lower $SYSCTL" unless $> == 0 && -w $SYSCTL;
plan tests => 7;

sub sysctl {
    my ($v) = @_;
    open my $fh, '>', $SYSCTL or die "$SYSCTL: $!";
    print $fh "$v\n";
    close $fh or die "$SYSCTL: $!";
}
open my $q, '<', $SYSCTL or die $!;
chomp(my $saved = <$q>);
close $q;

my $srv = private_server(conf => STATE_CONF . "LogLevel info resourcesync:debug\n"
                                 . set_conf('ds', 'www/data'));
$srv->populate(files => { 'www/data/a.txt' => "a\n" });
my ($rc, $out);
{
    sysctl(64);
    my $ok = eval { ($rc, $out) = $srv->start; 1 };
    # The first Resource List means the watcher has made its instance.
    $ok && $rc == 0 && eval { list_entries('ds', $srv->base) };
    sysctl($saved);          # restored whatever happened
    die $@ unless $ok;
}
is($rc, 0, 'server starts') or diag $out;
my $root = $srv->dir . '/www/data';
my %want = ('a.txt' => 1);
my $B = $srv->base;

# A burst of events while the watcher is stopped: far more than 64.
sub burst {
    my ($tag) = @_;
    my $w = $srv->watcher_pid or return 0;
    kill 'STOP', $w;
    for my $i (1 .. 150) {
        put("$root/$tag-$i.txt", "$tag $i\n");
        $want{"$tag-$i.txt"} = 1;
    }
    kill 'CONT', $w;
    return 1;
}
sub listed {
    my @e = eval { list_entries('ds', $B) };
    my %got = map { (my $n = $_->{loc}) =~ s{^\Q$B\E/data/}{}; ($n => 1) } @e;
    return join(',', sort keys %got) eq join(',', sort keys %want);
}
wait_ok(sub { listed() }, 30, 'the first files are listed');
ok(burst('one') && wait_for(sub { listed() }, 60), 'first overflow: the set is reconciled');
ok(burst('two') && wait_for(sub { listed() }, 60), 'second overflow: the set is reconciled');
my $log = $srv->log_text;
my @notice = grep { /\[resourcesync:notice\].*set ds: the inotify event queue overflowed \(fs\.inotify\.max_queued_events\), events lost \(1 time\); reconciling the set with a full scan/ }
             split /\n/, $log;
my @debug = grep { /\[resourcesync:debug\].*set ds: the inotify event queue overflowed .*events lost \([2-9]\d* times\)/ }
            split /\n/, $log;
is(scalar @notice, 1, 'the first overflow is logged once at notice');
ok(@debug >= 1, 'later overflows are logged at debug') or diag(grep { /overflow/ } split /\n/, $log);
unlike($log, qr/\[resourcesync:(warn|error|crit|alert|emerg)\]/, 'no module warnings or errors');
$srv->stop;
