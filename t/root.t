# A set whose directory disappears is listed empty (not left with its old
# list), and comes back when the directory does.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF fetch_list wait_for);

plan tests => 5;

my $srv = started_server(conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('vanish', 'www/data'),
                         files => { map { ("www/data/$_.txt" => "$_\n") } qw(a b) });
my $d = $srv->dir;

sub count { scalar @{ fetch_list('vanish', $srv->base)->{entries} } }

ok(wait_for(sub { count() == 2 }, 30), 'both files listed');
rename "$d/www/data", "$d/www/gone" or die $!;
ok(wait_for(sub { count() == 0 }, 30), 'a vanished set directory empties the list');
like($srv->log_text, qr/\[resourcesync:error\].*set vanish: cannot open root directory/,
     'the missing directory is logged as an error');
rename "$d/www/gone", "$d/www/data" or die $!;
ok(wait_for(sub { count() == 2 }, 30), 'the files come back with the directory');
$srv->stop;
