use strict;
use warnings;
use Apache::Test qw(plan ok);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get sd_url);
use RSTest::Docs qw(media_type);

plan tests => 2;
my $r = get(sd_url());
ok($r->code == 200);
ok((media_type(scalar $r->header('Content-Type')) // '') eq 'application/xml');
