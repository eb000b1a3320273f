# SPDX-License-Identifier: Apache-2.0
# TRACE on the module's URLs is answered as the core answers it on any
# other URL, and the Allow header of a 405 agrees: with TraceEnable Off,
# TRACE is refused and Allow does not list it.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF req);

plan tests => 6;

my $srv = started_server(conf => STATE_CONF . "TraceEnable Off\n" . set_conf('ds', 'www/data'),
                         files => { 'www/data/a.txt' => "a\n" });
my $B = $srv->base;
is(req('TRACE', "$B/data/a.txt")->code, 405, 'TraceEnable Off: TRACE of a file -> 405');
for my $u ("$B/.well-known/resourcesync", "$B/resourcesync/ds/capabilitylist.xml") {
    is(req('TRACE', $u)->code, 405, "TraceEnable Off: TRACE $u -> 405");
    my $p = req('POST', $u, 'Content-Length' => 0);
    my %allow = map { uc($_) => 1 } split /\s*,\s*/, ($p->header('Allow') // '');
    ok($p->code == 405 && $allow{GET} && $allow{HEAD} && !$allow{TRACE},
       "TraceEnable Off: POST $u -> 405, Allow lists GET and HEAD, not TRACE")
        or diag($p->code, ' Allow: ', $p->header('Allow') // 'none');
}
$srv->stop;
