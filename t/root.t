# A set whose directory disappears is listed empty (not left with its old
# list), and comes back when the directory does.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use RSTest qw(private_server fetch_list wait_for);

plan tests => 5;

my $srv = private_server(conf => <<'CONF');
ResourceSyncStateDir "@DIR@/state"
ResourceSyncRescanInterval 1
<Directory "@DIR@/www/data">
    ResourceSyncSet vanish
</Directory>
CONF
my $d = $srv->dir;
make_path("$d/www/data");
for my $n (qw(a b)) {
    open my $fh, '>', "$d/www/data/$n.txt" or die $!;
    print $fh "$n\n";
    close $fh;
}
my ($rc, $out) = $srv->start;
is($rc, 0, 'server starts') or diag $out;

sub count { scalar @{ fetch_list('vanish', $srv->base)->{entries} } }

ok(wait_for(sub { count() == 2 }, 30), 'both files listed');
rename "$d/www/data", "$d/www/gone" or die $!;
ok(wait_for(sub { count() == 0 }, 30), 'a vanished set directory empties the list');
like($srv->log_text, qr/\[resourcesync:error\].*set vanish: cannot open root directory/,
     'the missing directory is logged as an error');
rename "$d/www/gone", "$d/www/data" or die $!;
ok(wait_for(sub { count() == 2 }, 30), 'the files come back with the directory');
$srv->stop;
