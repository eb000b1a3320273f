# SPDX-License-Identifier: Apache-2.0
# The Debian package on this machine's apache2: `make deb` builds it,
# dpkg installs it, `a2enmod resourcesync` enables it, apache2 runs in the
# foreground with the Debian configuration pieces and a set over a
# temporary tree and serves the Source Description and the set's Resource
# List; then `dpkg -r` disables the module and removes its files but keeps
# the conffiles, and `dpkg -P` removes the conffiles, a2enmod's state and
# the state directory.  Leaves the machine as it found it (apache2 itself,
# installed if it was missing, stays).  Root only.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WNOHANG);
use RSTest qw(get doc xpc wait_for put free_port);

my $PKG = 'libapache2-mod-resourcesync';
my $STATE = '/var/lib/apache2/resourcesync';
my $AVAIL = '/etc/apache2/mods-available';
my $top = "$FindBin::Bin/..";

plan skip_all => 'needs root (installs a package with dpkg)' unless $> == 0;
plan skip_all => 'the package is tested once, without AddressSanitizer' if $ENV{RS_ASAN};
for my $t (qw(dpkg-buildpackage dh dpkg)) {
    plan skip_all => "$t is missing (make deps installs debhelper and dpkg-dev)"
        unless grep { -x "$_/$t" } split /:/, $ENV{PATH};
}
plan skip_all => "$PKG is installed already: this test would remove it"
    if `dpkg-query -W -f '\${Status}' $PKG 2>/dev/null` =~ /installed/;
plan skip_all => "$STATE exists: this test would remove it" if -e $STATE;

# A policy-rc.d that keeps maintainer scripts from starting services.
my $policy = '/usr/sbin/policy-rc.d';
my $own_policy = !-e $policy;
if ($own_policy) {
    open my $fh, '>', $policy or die "$policy: $!";
    print $fh "#!/bin/sh\nexit 101\n";
    close $fh;
    chmod 0755, $policy;
}
my $apache_pid;
END {
    local $?;
    kill 'TERM', $apache_pid if $apache_pid;
    unlink $policy if $own_policy;
    system("dpkg -P $PKG >/dev/null 2>&1") if $PKG && `dpkg-query -W -f '\${Status}' $PKG 2>/dev/null` =~ /\S/;
}

unless (-x '/usr/sbin/a2enmod') {
    system('DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends apache2 '
           . '>/dev/null 2>&1');
    plan skip_all => 'apache2 (a2enmod) is missing and cannot be installed' unless -x '/usr/sbin/a2enmod';
}

plan tests => 22;

my $version = do { open my $fh, '<', "$top/VERSION" or die $!; local $_ = <$fh>; chomp; $_ };
my $arch = `dpkg --print-architecture`;
chomp $arch;
my $deb = "$top/build/${PKG}_${version}_$arch.deb";
my $out = `make -C $top deb 2>&1`;
ok($? == 0 && -f $deb, 'make deb builds the package') or diag(substr($out, -2000));

$out = `dpkg -i $deb 2>&1`;
is($?, 0, 'dpkg -i installs it') or diag($out);
ok(-f '/usr/lib/apache2/modules/mod_resourcesync.so' && -x '/usr/bin/rs-tool'
   && -f "$AVAIL/resourcesync.load" && -f "$AVAIL/resourcesync.conf"
   && -f '/usr/share/man/man1/rs-tool.1.gz', 'module, rs-tool, man page and configuration installed');
is(`rs-tool --version`, "rs-tool $version\n", 'the installed rs-tool has the version');
ok(!-e '/etc/apache2/mods-enabled/resourcesync.load', 'not enabled by the installation');
$out = `a2enmod resourcesync 2>&1`;
ok($? == 0 && -l '/etc/apache2/mods-enabled/resourcesync.load'
   && -l '/etc/apache2/mods-enabled/resourcesync.conf', 'a2enmod resourcesync enables it') or diag($out);

# apache2 in the foreground with the enabled pieces and one set.
my $d = tempdir('rs-deb-XXXXXX', DIR => "$FindBin::Bin/logs", CLEANUP => 1);
chmod 0755, $d;
mkdir "$d/www";
mkdir "$d/www/data";
put("$d/www/data/one.txt", "one\n");
put("$d/www/data/two.txt", "two\n");
my $port = free_port();
my $mods = '/usr/lib/apache2/modules';
open my $fh, '>', "$d/httpd.conf" or die $!;
print $fh <<"CONF";
ServerRoot "$d"
Listen 127.0.0.1:$port
ServerName 127.0.0.1:$port
PidFile $d/httpd.pid
ErrorLog $d/error_log
LogLevel info
DefaultRuntimeDir $d
Mutex file:$d default
User www-data
Group www-data
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule mime_module $mods/mod_mime.so
TypesConfig /etc/mime.types
IncludeOptional /etc/apache2/mods-enabled/resourcesync.load
IncludeOptional /etc/apache2/mods-enabled/resourcesync.conf
DocumentRoot "$d/www"
<Directory "$d/www">
    Require all granted
</Directory>
<Directory "$d/www/data">
    ResourceSyncSet debset
</Directory>
CONF
close $fh;
$apache_pid = fork // die "fork: $!";
if (!$apache_pid) {
    exec '/usr/sbin/apache2', '-f', "$d/httpd.conf", '-DFOREGROUND';
    exit 127;
}
my $B = "http://127.0.0.1:$port";
my $sd = wait_for(sub { my $r = get("$B/.well-known/resourcesync"); $r->code == 200 ? $r : undef }, 20);
ok($sd && $sd->content =~ m{\Q$B\E/resourcesync/debset/capabilitylist\.xml}, 'the Source Description names the set');
my @locs;
wait_for(sub {
    my $r = get("$B/resourcesync/debset/resourcelist.xml");
    return 0 unless $r->code == 200;
    @locs = sort map { $_->textContent } xpc(doc($r->content))->findnodes('//sm:url/sm:loc');
    return @locs == 2;
}, 30);    # what it listed last is the next check
is("@locs", "$B/data/one.txt $B/data/two.txt", 'the Resource List lists the tree');
my $log = do { open my $l, '<', "$d/error_log"; local $/; <$l> // '' };
like($log, qr/mod_resourcesync\/\Q$version\E \(1 set\) configured/, 'the module logs its version');
like(`rs-tool status 2>&1`, qr/^set debset: files 2 bytes 8 /m, 'rs-tool status reads the default state directory');
kill 'TERM', $apache_pid;
ok(wait_for(sub { waitpid($apache_pid, WNOHANG) == $apache_pid }, 20), 'apache2 stops');
$apache_pid = undef;
unlike($log, qr/\[resourcesync:(warn|error|crit|alert|emerg)\]/, 'no module warning in the error log');

# Remove: files and the enabled links go, conffiles and state stay.
$out = `dpkg -r $PKG 2>&1`;
is($?, 0, 'dpkg -r removes it') or diag($out);
ok(!-e '/usr/lib/apache2/modules/mod_resourcesync.so' && !-e '/usr/bin/rs-tool',
   'dpkg -r: module and rs-tool gone');
ok(!-e '/etc/apache2/mods-enabled/resourcesync.load' && !-e '/etc/apache2/mods-enabled/resourcesync.conf',
   'dpkg -r: the module is disabled');
ok(-f "$AVAIL/resourcesync.conf" && -f "$AVAIL/resourcesync.load", 'dpkg -r: conffiles kept');
ok(-d $STATE, 'dpkg -r: state directory kept');

# Purge: conffiles, a2enmod's state and the state directory go.
$out = `dpkg -P $PKG 2>&1`;
is($?, 0, 'dpkg -P purges it') or diag($out);
ok(!-e "$AVAIL/resourcesync.conf" && !-e "$AVAIL/resourcesync.load", 'dpkg -P: conffiles gone');
ok(!-e $STATE, 'dpkg -P: state directory gone');
ok(!grep({ -e "/var/lib/apache2/module/$_/resourcesync" } qw(enabled_by_admin enabled_by_maint disabled_by_admin disabled_by_maint)),
   'dpkg -P: no a2enmod state left');
is(`dpkg-query -W -f '\${Status}' $PKG 2>/dev/null`, '', 'dpkg -P: the package is unknown to dpkg');
