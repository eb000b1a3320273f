# SPDX-License-Identifier: Apache-2.0
# A set that cannot be listed answers 503 instead of an empty list, and a
# mass deletion waits for a confirming scan.  Private servers.
#   - a set whose directory is missing at the first start: its documents
#     (but the Capability List) are 503 with Retry-After, the status page
#     says why; created later, it is listed;
#   - a set whose URL-path an Alias maps elsewhere: 503, and why;
#   - 16 of 20 files moved out of a set (ResourceSyncMassDeletion 50% 10):
#     nothing deleted while it waits; moved back before the confirming
#     scan, nothing is ever deleted; moved out for good, the 16 deletions
#     are journaled after the confirming scan, with one warning.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use File::Path qw(make_path);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF STATUS_CONF get wait_for wait_ok fetch_list
              changes_of cap_url rl_url);

plan tests => 28;

sub status { get("$_[0]/rs-status?text")->content }

# ------------------------------------------------ missing at the first start
{
    my $srv = started_server(conf => STATE_CONF . STATUS_CONF . "ResourceSyncRescanInterval 1\n"
                                     . set_conf('late', 'www/late'),
                             name => 'server with a missing set directory starts');
    my $B = $srv->base;
    my $st = wait_for(sub { my $s = status($B); $s =~ /^set-unavailable: late /m ? $s : undef }, 30)
             // status($B);
    like($st, qr{^set-unavailable: late root missing: \S*/www/late: No such file or directory$}m,
         'the status page says the root is missing');
    my $r = get(rl_url('late', $B));
    is($r->code, 503, 'its Resource List is a 503, not an empty list');
    is($r->header('Retry-After'), '1', 'with Retry-After: the rescan interval');
    is(get("$B/resourcesync/late/changelist.xml")->code, 503, 'its Change List index too');
    is(get(cap_url('late', $B))->code, 200, 'its Capability List stays');
    make_path($srv->dir . '/www/late');
    RSTest::put($srv->dir . "/www/late/$_.txt", "$_\n") for qw(a b);
    my $n = wait_for(sub { my $c = eval { scalar @{ fetch_list('late', $B)->{entries} } };
                           defined $c && $c == 2 ? $c : undef }, 30);
    is($n, 2, 'created later, it is listed');
    unlike(status($B), qr/^set-unavailable:/m, 'and no longer unavailable');
    $srv->stop;
}

# ------------------------------------------------ a URL-path mapped elsewhere
{
    my $srv = started_server(conf => STATE_CONF . STATUS_CONF
        . qq(Alias /elsewhere "\@DIR\@/other"\n)
        . qq(<Directory "\@DIR\@/other">\n    Require all granted\n</Directory>\n)
        . qq(<Directory "\@DIR\@/ext">\n    Require all granted\n)
        . qq(    ResourceSyncSet wrong /elsewhere\n</Directory>\n),
        files => { 'ext/a.txt' => "a\n", 'other/b.txt' => "b\n" },
        name => 'server with an Alias over the URL-path starts');
    my $B = $srv->base;
    my $st = wait_for(sub { my $s = status($B); $s =~ /^set-unavailable: wrong /m ? $s : undef }, 30)
             // status($B);
    like($st, qr{^set-unavailable: wrong its URL-path /elsewhere/ maps to \S*/other/}m,
         'the status page says where the URL-path maps');
    my $r = get(rl_url('wrong', $B));
    is($r->code, 503, 'its Resource List is a 503');
    ok(defined $r->header('Retry-After'), 'with Retry-After');
    like($srv->log_text, qr/\[resourcesync:error\].*set wrong: its URL-path \/elsewhere\/ maps to .*the set is unavailable/,
         'logged as an error');
    $srv->stop;
}

# ------------------------------------------------------------ mass deletions
{
    my %files = map { ("www/data/keep$_.txt" => "k$_\n") } 1 .. 4;
    $files{"www/data/big/f$_.txt"} = "f$_\n" for 1 .. 16;
    my $srv = started_server(conf => STATE_CONF . STATUS_CONF . "ResourceSyncRescanInterval 1\n"
                                     . "ResourceSyncMassDeletion 50% 10\n"
                                     . set_conf('m', 'www/data'),
                             files => \%files, name => 'server with 20 files starts');
    my $B = $srv->base;
    my $d = $srv->dir;
    is(scalar @{ fetch_list('m', $B)->{entries} }, 20, '20 files listed');
    wait_ok(sub { get("$B/resourcesync/m/changelist.xml")->code == 200 }, 30,
            'the Change List Index is served (the baseline is journaled)');
    my $deleted = sub { scalar grep { ($_->{change} // '') eq 'deleted' } changes_of('m', $B) };
    my $held = sub { my $s = status($B); $s =~ /^set-held-deletions: m (\d+)$/m ? $1 : undef };
    my $warns = sub { scalar grep { /\[resourcesync:warn\].*set m: 16 of its 20 listed files are gone/ }
                      split /\n/, $srv->log_text };

    # Gone, then back before the confirming scan.
    rename "$d/www/data/big", "$d/away" or die $!;
    is(wait_for(sub { $held->() }, 10), 16, '16 deletions are held (status page)');
    is($deleted->(), 0, 'nothing deleted is journaled while they wait');
    rename "$d/away", "$d/www/data/big" or die $!;
    ok(wait_for(sub { !defined $held->() }, 20), 'the confirming scan ran');
    is($deleted->(), 0, 'files back before it: nothing deleted, ever');
    is(scalar @{ fetch_list('m', $B)->{entries} }, 20, 'still 20 files listed');
    is($warns->(), 1, 'one warning with the counts');

    # Gone for good.
    rename "$d/www/data/big", "$d/away" or die $!;
    is(wait_for(sub { $held->() }, 10), 16, 'held again');
    is($deleted->(), 0, 'not journaled before the confirming scan');
    ok(wait_for(sub { $deleted->() == 16 }, 20), 'the 16 deletions are journaled after it');
    ok(wait_for(sub { scalar @{ fetch_list('m', $B)->{entries} } == 4 }, 20), '4 files listed');
    is($warns->(), 2, 'one more warning for this one');
    like($srv->log_text, qr/set m: the confirming scan found 16 of the 16 files gone; their deletions are recorded/,
         'the confirmation is logged');
    $srv->stop;
}
