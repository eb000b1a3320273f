# SPDX-License-Identifier: Apache-2.0
# Sets declared in the main server belong to the main server: name-based
# virtual hosts without ResourceSync directives are untouched (no Source
# Description, no documents, no Link header, no check of their
# DocumentRoot), also one that serves the set's directory itself.
# Private server: the main server on its port, two name-based virtual
# hosts on a second port.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF req fetch_list doc xpc free_port);

plan tests => 15;

my $vport = free_port();
my $srv = started_server(conf => STATE_CONF . set_conf('ds', 'www/data') . <<"CONF",
Listen 127.0.0.1:$vport
# Unrelated: another DocumentRoot, which the set is not below.
<VirtualHost 127.0.0.1:$vport>
    ServerName other.example
    DocumentRoot "\@DIR\@/other"
    <Directory "\@DIR\@/other">
        Require all granted
    </Directory>
</VirtualHost>
# Serves the main server's DocumentRoot, hence the set's directory.
<VirtualHost 127.0.0.1:$vport>
    ServerName same.example
    DocumentRoot "\@DIR\@/www"
</VirtualHost>
CONF
                         files => { 'www/data/a.txt' => "a\n", 'other/data/a.txt' => "other a\n",
                                    'other/index.html' => "other\n" },
                         name => 'starts with an unrelated virtual host whose DocumentRoot '
                                 . 'does not hold the set');

my $B = $srv->base;
my $V = "http://127.0.0.1:$vport";
my $cap = "$B/resourcesync/ds/capabilitylist.xml";

# The main server: its documents under its own name.
my $sd = req('GET', "$B/.well-known/resourcesync");
is($sd->code, 200, 'main server: Source Description served');
is(xpc(doc($sd->content))->findvalue('//sm:url/sm:loc'), $cap,
   'main server: Source Description names the capability list under its own name');
my $l = fetch_list('ds', $B);
is_deeply([map { $_->{loc} } @{ $l->{entries} }], ["$B/data/a.txt"],
          'main server: list URLs take the main server\'s name');
is(req('GET', "$B/data/a.txt")->header('Link'), "<$cap>; rel=\"resourcesync\"",
   'main server: Link header on a listed file');

for my $host (qw(other.example same.example)) {
    my $wk = req('GET', "$V/.well-known/resourcesync", Host => $host);
    is($wk->code, 404, "$host: /.well-known/resourcesync is left to the host (404)");
    is(req('GET', "$V/resourcesync/ds/capabilitylist.xml", Host => $host)->code, 404,
       "$host: the set's capability list is not served");
    is(req('GET', "$V/resourcesync/ds/resourcelist.xml", Host => $host)->code, 404,
       "$host: the set's resource list is not served");
}

my $o = req('GET', "$V/data/a.txt", Host => 'other.example');
is($o->code . ' ' . $o->content, "200 other a\n", 'other.example serves its own /data/a.txt');
ok(!defined $o->header('Link'), 'other.example: no Link header')
    or diag $o->header('Link');
my $s = req('GET', "$V/data/a.txt", Host => 'same.example');
is($s->code . ' ' . $s->content, "200 a\n", 'same.example serves the set\'s file');
ok(!defined $s->header('Link'),
   'same.example: no Link header (the set belongs to the main server)')
    or diag $s->header('Link');

$srv->stop;
