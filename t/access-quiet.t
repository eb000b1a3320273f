# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# The internal access checks log nothing at error level or above.  Unreadable
# directories in a set - with .htaccess files allowed (AH00529, at crit),
# and without, where mod_dir's sub-requests for each DirectoryIndex name
# (Debian's six) used to log AH00035 at error level - and one that can be
# searched but not read cost at most the module's own warning; a link that
# SymLinksIfOwnerMatch refuses used to log AH00037.  Private server, mod_dir
# loaded as on Debian.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF wait_for fetch_list);

plan skip_all => 'needs root (the run user must be another user than the owner)' unless $> == 0;
plan tests => 7;

umask 022;
my $srv = started_server(
    conf  => join('', map { "LoadModule ${_}_module /usr/lib/apache2/modules/mod_$_.so\n" }
                          qw(dir autoindex negotiation))
             . "DirectoryIndex index.html index.cgi index.pl index.php index.xhtml index.htm\n"
             . STATE_CONF . "ResourceSyncRescanInterval 1\n"
             . set_conf('q', 'www/q', 'AllowOverride All')
             . set_conf('n', 'www/n', 'Options SymLinksIfOwnerMatch', 'AllowOverride None'),
    files => { 'www/q/ok.txt' => "ok\n", 'www/q/locked/l.txt' => "l\n",
               'www/q/search/s.txt' => "s\n", 'www/q/search/deeper/d.txt' => "d\n",
               'www/q/lockfile.txt' => "lf\n",
               'www/n/ok.txt' => "ok\n", 'www/n/other.txt' => "other\n", 'www/n/locked/l.txt' => "l\n" });
my $q = $srv->dir . '/www/q';
chmod 0700, "$q/locked", $srv->dir . '/www/n/locked' or die $!;
chmod 0711, "$q/search" or die $!;
# A link whose owner is not its target's: SymLinksIfOwnerMatch refuses it
# (AH00037 at error level in the directory walk).
my $n = $srv->dir . '/www/n';
chown scalar(getpwnam('nobody')), -1, "$n/other.txt" or die $!;
symlink 'other.txt', "$n/link.txt" or die $!;
chmod 0600, "$q/lockfile.txt" or die $!;
# Files created after the start, so that the event-driven checks run too.
open my $fh, '>', "$q/new.txt" or die $!;
print $fh "new\n";
close $fh;

my $B = $srv->base;
my $listed = wait_for(sub {
    my $l = eval { fetch_list('q', $B) } or return undef;
    my $s = join ' ', sort map { (my $r = $_->{loc}) =~ s{^\Q$B\E/q/}{}; $r } @{ $l->{entries} };
    $s eq 'new.txt ok.txt' ? $s : undef }, 30);
is($listed, 'new.txt ok.txt', 'only the readable files are listed');
my $nl = wait_for(sub {
    my $l = eval { fetch_list('n', $B) } or return undef;
    my $s = join ' ', sort map { (my $r = $_->{loc}) =~ s{^\Q$B\E/n/}{}; $r } @{ $l->{entries} };
    $s eq 'ok.txt other.txt' ? $s : undef }, 30);
is($nl, 'ok.txt other.txt', 'the refused link is not listed');
# A graceful restart scans everything again.
$srv->graceful;
ok(wait_for(sub { $srv->log_text =~ /resuming normal operations.*resuming normal operations/s }, 20),
   'graceful restart done');
ok(wait_for(sub { my $l = eval { fetch_list('q', $B) }; $l && @{ $l->{entries} } == 2 }, 30),
   'listed again after the restart');
my $log = $srv->log_text;
my @httpd = grep { /AH0003[5-7]|AH00529|AH01630|AH01797/ } split /\n/, $log;
is(scalar(@httpd), 0, 'no error lines from the internal requests') or diag join "\n", @httpd;
my @err = grep { /\[(?:\w+:)?(?:error|crit|alert|emerg)\]/ } split /\n/, $log;
is(scalar(@err), 0, 'no error-level line at all') or diag join "\n", @err;
