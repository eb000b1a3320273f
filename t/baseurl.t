# SPDX-License-Identifier: Apache-2.0
# ResourceSyncBaseURL: absolute URLs for a server behind a reverse proxy
# (with a path prefix), not inherited by a virtual host.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get fetch_list doc xpc free_port);

plan tests => 7;

my $vport = free_port();
my $srv = started_server(conf => STATE_CONF . "ResourceSyncBaseURL https://data.example.org/mirror\n"
                                 . set_conf('proxied', 'www/data') . <<"CONF",
Listen 127.0.0.1:$vport
<VirtualHost 127.0.0.1:$vport>
    ServerName 127.0.0.1:$vport
    DocumentRoot "\@DIR\@/v"
    <Directory "\@DIR\@/v">
        Require all granted
    </Directory>
    <Directory "\@DIR\@/v/vd">
        ResourceSyncSet own
    </Directory>
</VirtualHost>
CONF
                         files => { 'www/data/a.txt' => "a\n", 'v/vd/b.txt' => "b\n" });

my $B = 'https://data.example.org/mirror';
my $sd = get($srv->base . '/.well-known/resourcesync');
my $x = xpc(doc($sd->content));
is($x->findvalue('//sm:url/sm:loc'), "$B/resourcesync/proxied/capabilitylist.xml",
   'Source Description: capability list under the base URL');
my $cl = get($srv->base . '/resourcesync/proxied/capabilitylist.xml');
$x = xpc(doc($cl->content));
is($x->findvalue('//rs:ln[@rel="up"]/@href'), "$B/.well-known/resourcesync", 'up link under the base URL');
my $l = fetch_list('proxied', $srv->base);
is($l->{entries}[0]{loc}, "$B/data/a.txt", 'resource loc under the base URL');
is(get($srv->base . '/data/a.txt')->header('Link'),
   "<$B/resourcesync/proxied/capabilitylist.xml>; rel=\"resourcesync\"", 'Link header under the base URL');

# The virtual host keeps its own name.
my $vb = "http://127.0.0.1:$vport";
my $vl = fetch_list('own', $vb);
is($vl->{entries}[0]{loc}, "$vb/vd/b.txt", 'a virtual host does not inherit ResourceSyncBaseURL');
unlike(get("$vb/.well-known/resourcesync")->content, qr/data\.example\.org/,
       'nor does its Source Description');
$srv->stop;
