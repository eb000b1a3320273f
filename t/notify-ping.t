# SPDX-License-Identifier: Apache-2.0
# A hub in ping mode (ResourceSyncNotifyHub URL ping) against a hub of the
# test's own: t/lib/RSWebSubPeer.pm takes the pings, and this test
# fetches the change topic the way the hub would, keeping what it got.
#   * startup warns, per ping hub, what ping mode cannot promise;
#   * a ping carries the topic's Link header exactly as the Change
#     Notification examples show (rel="self", rel="hub", rel="resourcesync");
#   * a hub that fetches after each ping: 20 files in 4 bursts arrive in
#     consecutive, non-overlapping [from, until) intervals carrying every
#     change exactly once (Change Notification 1.0.1, section 3), one ping
#     per version of the topic;
#   * a hub that fetches late and twice: what it gets never overlaps what
#     it had but for the very same document (same bytes, same interval);
#     the version it missed is a gap it can see (from after its until),
#     whose changes the Change Lists carry.
# Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF get wait_for wait_ok cap_url changes_of);
use RSWebSubPeer ();

plan tests => 19;

my $pinged = RSWebSubPeer->hub;
(my $PING = $pinged->url) =~ s{/hub$}{/ping-hub};
# One notification per burst: the files of a burst are written within
# milliseconds, well inside the delay.
my $srv = started_server(
    conf => STATE_CONF . STATUS_CONF
        . set_conf('p', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 1s',
                   "ResourceSyncNotifyHub $PING ping"),
    files => { 'www/data/a.txt' => "a\n" });
my $B = $srv->base;
my $change = "$B/resourcesync/p/notify/change";

like($srv->log_text,
     qr/\[resourcesync:warn\].*ResourceSyncNotifyHub \Q$PING\E ping \(set p, [^)]*\): a ping hub fetches the topics when it likes/,
     'startup: ping mode warned about');

# The hub's rows exist (made by the delivery thread at its start, from
# the newest notification on): what follows is pinged.
ok(wait_for(sub { get("$B/rs-status?text")->content =~ m{^notify-hub: p change \Q$PING\E mode=ping }m },
            30), 'the ping hub\'s row is there');

sub pings { grep { $_->{path} eq '/ping-hub' && ($_->{params}{'hub.topic'} // '') eq $change }
            $pinged->requests }

# The hub's fetch of the topic: [from, until, the entries' locs, the bytes].
sub fetch {
    my $r = get($change);
    my $x = RSTest::xpc(RSTest::doc($r->content));
    return { from => $x->findvalue('/sm:urlset/rs:md/@from'),
             until => $x->findvalue('/sm:urlset/rs:md/@until'),
             locs => [map { $_->textContent } $x->findnodes('/sm:urlset/sm:url/sm:loc')],
             body => $r->content };
}

my $n = 0;
sub burst { RSTest::put($srv->dir . "/www/data/f" . $n++ . ".txt", "x\n") for 1 .. $_[0] }
sub loc { "$B/data/f$_[0].txt" }

# Problems with a sequence of fetched documents: overlaps (but identical
# repeats), gaps, entries carried twice.
sub check {
    my (@got) = @_;
    my (@p, %seen);
    for my $i (0 .. $#got) {
        my ($g, $prev) = ($got[$i], $i ? $got[$i - 1] : undef);
        next if $prev && $g->{body} eq $prev->{body};    # the same document again
        push @p, "fetch $i: from $g->{from} before the previous until $prev->{until}"
            if $prev && $g->{from} lt $prev->{until};
        push @p, "fetch $i: gap $prev->{until} .. $g->{from}"
            if $prev && $g->{from} gt $prev->{until};
        $seen{$_}++ for @{ $g->{locs} };
    }
    push @p, "carried twice: $_" for grep { $seen{$_} > 1 } sort keys %seen;
    return (\@p, \%seen);
}

# ---------------------------------------------- a hub fetching after each ping
my @got;
for my $b (1 .. 4) {
    my $want = $n + 5;
    my $before = pings();
    burst(5);
    my %have;
    # Fetch once per new ping, until the burst's five files have come.
    wait_for(sub {
        my $now = pings();
        while ($before < $now) {
            push @got, fetch();
            $have{$_} = 1 for @{ $got[-1]{locs} };
            $before++;
        }
        (grep { $have{ loc($_) } } $want - 5 .. $want - 1) == 5;
    }, 30) or diag("burst $b: " . scalar(pings()) . " pings, " . scalar(@got) . " fetched");
}
my ($p, $seen) = check(@got);
is_deeply($p, [], 'fetched after each ping: consecutive, non-overlapping, every change once')
    or diag(join "\n", map { "[$_->{from}, $_->{until}) " . scalar @{ $_->{locs} } } @got);
is_deeply([sort keys %$seen], [sort map { loc($_) } 0 .. 19], 'every one of the 20 files');
is(scalar(@got), scalar(pings()), 'one fetch per ping');
ok(@got >= 4 && @got <= 8, 'a ping per version, not per file (' . scalar(@got) . ' pings)');

# The ping's headers, exactly.
my ($ping) = pings();
is($ping && $ping->{headers}{link},
   qq(<$change>; rel="self", <$PING>; rel="hub", <) . cap_url('p', $B) . qq(>; rel="resourcesync"),
   'ping: the topic\'s Link header, rel="self", "hub" and "resourcesync"');
is($ping && $ping->{headers}{'content-type'}, 'application/x-www-form-urlencoded', 'ping: a form');
is_deeply($ping && [@{ $ping->{params} }{qw(hub.mode hub.topic hub.url)}],
          ['publish', $change, $change], 'ping: hub.mode=publish, hub.topic, hub.url');
is(get($change)->header('Link'), $ping && $ping->{headers}{link},
   'the topic serves the same Link header');

# ---------------------------------------------- a hub fetching late and twice
my $last = $got[-1];
my $before = pings();
burst(3);                                                  # one version ...
ok(wait_for(sub { pings() >= $before + 1 }, 30), 'late hub: pinged for the first burst');
my $v1 = fetch();                                          # (what the topic served then)
burst(3);                                                  # ... and the next
ok(wait_for(sub { pings() >= $before + 2 }, 30), 'late hub: pinged for the second burst');
my @late = (fetch(), fetch());                             # now, twice
is($late[1]{body}, $late[0]{body}, 'fetched twice: the very same document');
is($late[0]{from}, $v1->{until}, 'the version it fetched starts where the one it missed ended');
is($v1->{from}, $last->{until}, 'which started where its previous fetch ended');
($p) = check($last, @late);
is_deeply($p, ["fetch 1: gap $last->{until} .. $late[0]{from}"],
          'late: no overlap, one gap the hub can see')
    or diag(join "\n", @$p);
my %cl = map { $_->{loc} => 1 }
         grep { RSTest::iso2epoch($_->{datetime}) >= RSTest::iso2epoch($last->{until}) }
         changes_of('p', $B);
is_deeply([grep { !$cl{ loc($_) } } 20 .. 22], [], 'the Change Lists carry the missed changes');
is_deeply([sort @{ $late[0]{locs} }], [sort map { loc($_) } 23 .. 25],
          'the fetched version carries the second burst');

$srv->stop;
