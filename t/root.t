# SPDX-License-Identifier: Apache-2.0
# A set whose directory disappears is not listed empty (a mirror would
# delete everything): its documents answer 503 and nothing is journaled
# until the directory is back.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF fetch_list wait_for wait_ok get rl_url changes_of);

plan tests => 8;

my $srv = started_server(conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('vanish', 'www/data'),
                         files => { map { ("www/data/$_.txt" => "$_\n") } qw(a b) });
my $d = $srv->dir;
my $B = $srv->base;

sub count { scalar @{ fetch_list('vanish', $B)->{entries} } }

ok(wait_for(sub { count() == 2 }, 30), 'both files listed');
wait_ok(sub { get("$B/resourcesync/vanish/changelist.xml")->code == 200 }, 30,
        'the Change List Index is served (the baseline is journaled)');
rename "$d/www/data", "$d/www/gone" or die $!;
ok(wait_for(sub { get(rl_url('vanish', $B))->code == 503 }, 30),
   'a vanished set directory makes its Resource List a 503, not an empty list');
like($srv->log_text, qr/\[resourcesync:error\].*set vanish: root missing: \S+\/www\/data: No such file or directory; the set is unavailable/,
     'the missing directory is logged as an error');
rename "$d/www/gone", "$d/www/data" or die $!;
ok(wait_for(sub { get(rl_url('vanish', $B))->code == 200 }, 30), 'back with the directory');
is(count(), 2, 'with both files');
is(scalar(() = changes_of('vanish', $B)), 0, 'and nothing was journaled meanwhile');
$srv->stop;
