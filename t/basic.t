# SPDX-License-Identifier: Apache-2.0
# The module answers: the Source Description is served as XML.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get sd_url);
use RSTest::Docs qw(media_type);

plan tests => 2;
my $r = get(sd_url());
is($r->code, 200, 'the Source Description answers 200');
is(media_type(scalar $r->header('Content-Type')), 'application/xml', '... as application/xml');
