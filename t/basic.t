use strict;
use warnings;
use Apache::Test qw(plan ok);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get sd_url);

plan tests => 2;
my $r = get(sd_url());
ok($r->code == 200);
ok($r->header('Content-Type') =~ m{^application/xml});
