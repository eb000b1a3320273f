# SPDX-License-Identifier: Apache-2.0
# The scheme of the absolute URLs on a port other than 443: taken from
# "ServerName https://host:port", or from "SSLEngine on" in the server's
# section when ServerName has no scheme.  Private server with mod_ssl and
# a self-signed certificate made here; a plain-HTTP virtual host keeps
# http://.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::SSL ();
use LWP::UserAgent ();
use RSTest qw(private_server set_conf STATE_CONF free_port doc xpc);

plan skip_all => 'needs openssl and mod_ssl'
    unless -x '/usr/bin/openssl' && -f '/usr/lib/apache2/modules/mod_ssl.so';
plan tests => 4;

my ($p1, $p2, $p3) = (free_port(), free_port(), free_port());
my $mods = '/usr/lib/apache2/modules';
# Under ASan, mod_ssl's OpenSSL state left at exit is not a finding.
my %env = $ENV{RS_ASAN} ? (env => { LSAN_OPTIONS => "suppressions=$FindBin::Bin/asan-ssl.supp"
                                                    . ':print_suppressions=0' }) : ();
my $srv = private_server(%env, conf => STATE_CONF . <<"CONF");
LoadModule socache_shmcb_module $mods/mod_socache_shmcb.so
LoadModule ssl_module $mods/mod_ssl.so
SSLSessionCache shmcb:\@DIR\@/run/ssl_scache(32768)
Listen 127.0.0.1:$p1
Listen 127.0.0.1:$p2
Listen 127.0.0.1:$p3
# The scheme given with ServerName (plain HTTP underneath: only the
# declared name matters for the URLs).
<VirtualHost 127.0.0.1:$p1>
    ServerName https://declared.example:8443
    DocumentRoot "\@DIR\@/www"
    <Directory "\@DIR\@/www/d1">
        ResourceSyncSet d1
    </Directory>
</VirtualHost>
# TLS on a port other than 443, ServerName without a scheme.
<VirtualHost 127.0.0.1:$p2>
    ServerName tls.example:$p2
    DocumentRoot "\@DIR\@/www"
    SSLEngine on
    SSLCertificateFile "\@DIR\@/cert.pem"
    SSLCertificateKeyFile "\@DIR\@/key.pem"
    <Directory "\@DIR\@/www/d2">
        ResourceSyncSet d2
    </Directory>
</VirtualHost>
# Plain HTTP.
<VirtualHost 127.0.0.1:$p3>
    ServerName plain.example:$p3
    DocumentRoot "\@DIR\@/www"
    <Directory "\@DIR\@/www/d3">
        ResourceSyncSet d3
    </Directory>
</VirtualHost>
CONF
my $d = $srv->dir;
$srv->populate(files => { 'www/d1/a.txt' => "1\n", 'www/d2/a.txt' => "2\n", 'www/d3/a.txt' => "3\n" });
system("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tls.example "
       . "-keyout $d/key.pem -out $d/cert.pem >/dev/null 2>&1") == 0 or die 'openssl';
my ($rc, $out) = $srv->start;
is($rc, 0, 'server with mod_ssl starts') or diag($out, $srv->log_text);

my $ua = LWP::UserAgent->new(timeout => 30, ssl_opts => { verify_hostname => 0,
                             SSL_verify_mode => IO::Socket::SSL::SSL_VERIFY_NONE() });
sub sd_loc {
    my ($url) = @_;
    my $r = $ua->get("$url/.well-known/resourcesync");
    return $r->code . ' ' . ($r->is_success ? xpc(doc($r->content))->findvalue('//sm:url/sm:loc') : '');
}
is(sd_loc("http://127.0.0.1:$p1"), '200 https://declared.example:8443/resourcesync/d1/capabilitylist.xml',
   'ServerName https://declared.example:8443: https URLs with the port');
is(sd_loc("https://127.0.0.1:$p2"), "200 https://tls.example:$p2/resourcesync/d2/capabilitylist.xml",
   "SSLEngine on, port $p2, ServerName without a scheme: https URLs");
is(sd_loc("http://127.0.0.1:$p3"), "200 http://plain.example:$p3/resourcesync/d3/capabilitylist.xml",
   'plain HTTP virtual host: http URLs');
$srv->stop;
