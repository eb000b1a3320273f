# SPDX-License-Identifier: Apache-2.0
# A set directory whose own name needs escaping (space, &, non-ASCII):
# its URL-path is derived from DocumentRoot, escaped in every loc, and the
# files are listed and served.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF list_entries get);

plan tests => 4;

my $dirname = "my data & co \x{c3}\x{a9}";
my $srv = started_server(conf => STATE_CONF . set_conf('odd', "www/$dirname"),
                         files => { "www/$dirname/sub/f.txt" => "odd root\n" });
my @e = list_entries('odd', $srv->base);
is(scalar @e, 1, 'the file is listed') or diag explain \@e;
is($e[0]{loc}, $srv->base . '/my%20data%20%26%20co%20%C3%A9/sub/f.txt', 'the loc escapes the set directory');
my $r = get($e[0]{loc});
ok($r->code == 200 && $r->content eq "odd root\n", 'and it is served');
$srv->stop;
