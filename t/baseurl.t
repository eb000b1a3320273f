# ResourceSyncBaseURL: absolute URLs for a server behind a reverse proxy
# (with a path prefix), not inherited by a virtual host.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use RSTest qw(private_server get fetch_list doc xpc free_port);

plan tests => 7;

my $vport = free_port();
my $srv = private_server(conf => <<"CONF");
ResourceSyncStateDir "\@DIR\@/state"
ResourceSyncBaseURL https://data.example.org/mirror
<Directory "\@DIR\@/www/data">
    ResourceSyncSet proxied
</Directory>
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
my $d = $srv->dir;
make_path("$d/www/data", "$d/v/vd");
for (["www/data/a.txt", "a\n"], ["v/vd/b.txt", "b\n"]) {
    open my $fh, '>', "$d/$_->[0]" or die $!;
    print $fh $_->[1];
    close $fh;
}
my ($rc, $out) = $srv->start;
is($rc, 0, 'server starts') or diag $out;

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
