# SPDX-License-Identifier: Apache-2.0
# The Resource Dump covers what the Resource List does (ResourceSync 1.1,
# section 9: capabilities of one Capability List apply uniformly to its
# set of resources): after files change, the dump is rebuilt with the new
# snapshot, not once per ResourceSyncResourceDump interval (1 h here), and
# when both are fresh (the same at) its manifests list exactly the
# Resource List's entries.  A destination that takes a dump and then every
# change not earlier than the dump's at ends with the current tree, both
# from a dump older than the changes and from the fresh one; rs-check
# (when present) agrees: mirror --dumps, compare, crawl --verify-dumps.
# Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for wait_ok put fetch_list);
use RSTest::Destination;
use File::Temp qw(tempdir);

plan tests => 20;

# The independent checker, when this machine has it.
my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";

my %files = map { sprintf('www/u/d%d/f%02d.txt', $_ % 3, $_) => "file $_\n" } 0 .. 11;
my $srv = started_server(conf => STATE_CONF . "ResourceSyncRescanInterval 3600\n"
                                 . set_conf('u', 'www/u', 'ResourceSyncResourceDump 1h',
                                            'ResourceSyncDumpMaxEntries 4'),
                         files => \%files);
my $B = $srv->base;
my $src = $srv->dir . '/www/u';
my $dump_url = "$B/resourcesync/u/resourcedump.xml";

sub dest { RSTest::Destination->new(base => $B, set => 'u', src => $src, root => "$B/u/") }

# The dump's at (undef before the first one).
sub dump_at {
    my $r = get($dump_url);
    return $r->code == 200 ? xpc(doc($r->content))->findvalue('/*/rs:md/@at') : undef;
}

# The Resource List as loc => "lastmod length hash type", and its at.
sub list_state {
    my $l = fetch_list('u', $B);
    return ($l->{at}, { map { $_->{loc} => "$_->{lastmod} $_->{length} $_->{hash} $_->{type}" }
                        @{ $l->{entries} } });
}

# Wait until the dump has the Resource List's at, then compare the
# entries of the dump's manifests with the list's (section 9).
sub fresh_pair {
    my ($what) = @_;
    my ($at, $list);
    my $same = wait_for(sub {
        ($at, $list) = list_state();
        my $d = dump_at();
        return defined $d && $d eq $at;
    }, 30);
    ok($same, "$what: the dump has the Resource List's at (built after its snapshot)")
        or diag('Resource List at ' . ($at // '-') . ', dump at ' . (dump_at() // '-'));
    my $d = dest();
    my $b = $d->baseline_dump;
    my %dumped = map { $_->{loc} => "$_->{lastmod} $_->{length} $_->{hash} $_->{type}" }
                 @{ $b ? $b->{entries} : [] };
    is_deeply(\%dumped, $list, "$what: the dump's manifests list exactly the Resource List's entries");
    return $d;
}

wait_ok(sub { defined dump_at() }, 60, 'the first Resource Dump is published');
my $old = fresh_pair('at start');
is($old->compare, '', '... and the dump holds the tree');
is_deeply($old->errors, [], '... read without an error');

# Changes after the dump: two updates, two new files (one in a new
# directory), one deletion.
put("$src/d0/f00.txt", "file 0, second version\n");
put("$src/d1/f04.txt", "file 4, second version, longer\n");
put("$src/d2/new.txt", "new\n");
mkdir "$src/d3";
put("$src/d3/newer.txt", "newer\n");
unlink "$src/d1/f07.txt" or die "unlink: $!";

# The old dump plus the changes from its at: the current tree.
is($old->sync_until_equal(60), '', 'the dump taken before the changes, then every change from '
                                   . "its at: the current tree");
is_deeply($old->errors, [], '... without an invariant violation');

wait_ok(sub { my ($at, $l) = list_state(); !exists $l->{"$B/u/d1/f07.txt"} && exists $l->{"$B/u/d3/newer.txt"} },
        30, 'the Resource List shows the changes');
my $fresh = fresh_pair('after the changes');
is($fresh->compare, '', '... and the new dump holds the current tree');
# The same with rs-check: a baseline from the fresh dump.
my $tmp = tempdir(CLEANUP => 1);
my $mirror = "$tmp/mirror";
SKIP: {
    skip "no rs-check at $rs_check", 1 unless -x $rs_check;
    my $out = `$rs_check mirror $B $mirror --set /u/ --dumps --url-base $B/u/ 2>&1`;
    ok($? == 0, 'rs-check mirror --dumps: a baseline from the fresh dump') or diag($out);
}

# A change after the new dump: applied from its at.
put("$src/d2/f02.txt", "file 2, second version\n");
unlink "$src/d2/new.txt" or die "unlink: $!";
is($fresh->sync_until_equal(60), '', 'the new dump, then every change from its at: the current tree');
is_deeply($fresh->errors, [], '... without an invariant violation');
fresh_pair('after the last change');
SKIP: {
    skip "no rs-check at $rs_check", 2 unless -x $rs_check;
    my $out = '';
    my $same = wait_for(sub {
        $out = `$rs_check mirror $B $mirror --set /u/ --dumps --url-base $B/u/ 2>&1`
               . `$rs_check compare $mirror $src 2>&1`;
        return $? == 0;
    }, 60);
    ok($same, 'rs-check mirror: the dump, then the Change Lists from its at, equal the tree')
        or diag($out);
    $out = `$rs_check crawl $B --verify-dumps --fetch-resources 0 2>&1`;
    ok($? == 0 && $out =~ / 0 failed$/m, 'rs-check crawl --verify-dumps: 0 failed') or diag($out);
}
my @bad = grep { /:(error|crit|alert|emerg)\]/ } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no error in the log');
