# SPDX-License-Identifier: Apache-2.0
# ResourceSyncNotifyDelay bounds how long a change waits: a notification is
# sealed the delay after the first change it carries, also while changes
# keep coming more often than the delay (a quiet period never comes).
# The changes of the stream are carried by several notifications sealed
# while it runs, each exactly once, in contiguous intervals.  Private
# server; the outbox is read with sqlite3.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF wait_for);
use JSON::PP ();
use Time::HiRes qw(sleep time);

plan tests => 5;

my $srv = started_server(
    conf => STATE_CONF . "ResourceSyncHub on\n"
          . set_conf('n', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 1s'),
    files => { 'www/data/a.txt' => "a\n" });
my $db = $srv->dir . '/state/state.db';

sub rows {
    my ($sql) = @_;
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    return [] if $out =~ /^\s*$/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}
sub sealed_change {
    rows("SELECT id, from_dt, until_dt, first_seq, last_seq, count FROM notifications "
         . "WHERE setname = 'n' AND topic = 'change' AND sealed = 1 ORDER BY id");
}

ok(wait_for(sub { -s "$db" && @{ rows("SELECT id FROM notifications WHERE setname = 'n' "
                                     . "AND topic = 'framework' AND sealed = 1") } }, 60),
   'the set is up (its first framework notification is stored)');

# A change every 100 ms for 6 s: never a second without a change.
my $f = $srv->dir . '/www/data/a.txt';
my $sealed_while_running = 0;
my $end = time + 6;
my $i = 0;
while (time < $end) {
    open(my $fh, '>', $f) or die "$f: $!";
    print $fh "change ", $i++, "\n";
    close $fh;
    sleep 0.1;
    $sealed_while_running = @{ sealed_change() } if $i % 10 == 0;
}
ok($sealed_while_running >= 2,
   "notifications sealed while the changes kept coming ($sealed_while_running seen)");

# Afterwards every journaled change is in exactly one sealed notification.
my $journal = rows("SELECT seq FROM journal WHERE setname = 'n' ORDER BY seq");
my $last = @$journal ? $journal->[-1]{seq} : 0;
ok(wait_for(sub { my $n = sealed_change(); @$n && $n->[-1]{last_seq} == $last }, 30),
   'the last change is sealed after the stream');
my (@problems, $prev, %seen);
for my $n (@{ sealed_change() }) {
    push @problems, "notification $n->{id}: from $n->{from_dt} != previous until $prev->{until_dt}"
        if $prev && $n->{from_dt} != $prev->{until_dt};
    $seen{$_}++ for $n->{first_seq} .. $n->{last_seq};
    $prev = $n;
}
for my $r (@$journal) {
    push @problems, "change $r->{seq} carried " . ($seen{$r->{seq}} // 0) . " times"
        if ($seen{$r->{seq}} // 0) != 1;
}
is_deeply(\@problems, [], 'contiguous intervals; every change carried exactly once');
