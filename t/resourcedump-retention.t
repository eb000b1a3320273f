# SPDX-License-Identifier: Apache-2.0
# The Change List Index reaches back to the at of the Resource List and of
# the Resource Dump in service, also after retention: in a set that goes
# idle, the Change List holding its last change closes after the snapshot
# that followed the change and later expires (ResourceSyncJournalRetention
# 2 s here), which moves the index's from past that snapshot's at.  A
# destination that finds a baseline older than the index's from has
# missed changes and takes a new baseline: the watcher then writes a new
# Resource List (and the dump follows) whose at is past the from, instead
# of sending every destination back to the same baseline for ever.
# Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for wait_ok put fetch_list
              iso2epoch);
use RSTest::Destination;

plan tests => 8;

my $srv = started_server(conf => STATE_CONF . "LogLevel info\nResourceSyncRescanInterval 1\n"
                                 . set_conf('r', 'www/r', 'ResourceSyncResourceDump 1',
                                            'ResourceSyncChangeListPeriod 5',
                                            'ResourceSyncJournalRetention 2'),
                         files => { 'www/r/a.txt' => "a\n", 'www/r/b.txt' => "b\n" });
my $B = $srv->base;
my $src = $srv->dir . '/www/r';

# (index from, Resource List at, dump at) as epoch seconds; undef parts
# while a document is not there.
sub times3 {
    my $i = get("$B/resourcesync/r/changelist.xml");
    my $d = get("$B/resourcesync/r/resourcedump.xml");
    return () unless $i->code == 200 && $d->code == 200;
    return (iso2epoch(xpc(doc($i->content))->findvalue('/*/rs:md/@from')),
            iso2epoch(fetch_list('r', $B)->{at}),
            iso2epoch(xpc(doc($d->content))->findvalue('/*/rs:md/@at')));
}

wait_ok(sub { my @t = times3(); @t == 3 }, 60, 'the Change List Index and the first dump are served');
put("$src/a.txt", "a, second version\n");
wait_ok(sub { $srv->log_text =~ /set r: \d+ Change Lists? expired/ }, 60,
        'the list holding the change closes after the snapshot and expires');

my @t;
my $ok = wait_for(sub { @t = times3(); @t == 3 && $t[0] <= $t[1] && $t[0] <= $t[2] }, 20);
ok($ok, "the Resource List's at is not earlier than the index's from")
    or diag(sprintf('index from %.6f, Resource List at %.6f, dump at %.6f', map { $_ // 0 } @t));
ok(@t == 3 && $t[0] <= $t[2], "... nor the Resource Dump's");

# A destination that takes the dump follows the Change Lists from its at.
my $d = RSTest::Destination->new(base => $B, set => 'r', src => $src, root => "$B/r/");
ok($d->baseline_dump, 'a baseline from the dump');
$d->sync;
ok(!$d->rebaseline, '... the index reaches back to its at: no new baseline needed')
    or diag(join("\n", @{ $d->history }));
put("$src/b.txt", "b, second version\n");
is($d->sync_until_equal(60), '', '... and a later change is applied from the Change Lists');
