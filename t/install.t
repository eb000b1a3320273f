# SPDX-License-Identifier: Apache-2.0
# make install into a DESTDIR: the module, rs-tool and its man page, the
# Debian-style .load and .conf; a second install keeps an edited .conf and
# puts the new one beside it as .conf.dist.  The man page renders without
# warnings.  Needs no server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use RSTest qw(put);

plan tests => 7;

my $top = "$FindBin::Bin/..";
# The build directory of the module under test (build/ or build-asan/),
# already built: install copies, it does not rebuild.
my $build = dirname(RSTest::Server::module_path());
my $dest = tempdir('rs-install-XXXXXX', DIR => "$FindBin::Bin/logs", CLEANUP => 1);
my $libexec = `apxs -q LIBEXECDIR`;
chomp $libexec;
my $avail = "$dest/etc/apache2/mods-available";
sub slurp { open my $fh, '<', $_[0] or return undef; local $/; <$fh> }
sub install { my $o = `make -s -C $top install DESTDIR=$dest BUILD=$build 2>&1`; return ($? >> 8, $o) }

my ($rc, $out) = install();
is($rc, 0, 'make install') or diag($out);
ok(-f "$dest$libexec/mod_resourcesync.so" && -x "$dest/usr/bin/rs-tool"
   && -f "$dest/usr/share/man/man1/rs-tool.1", 'module, rs-tool and man page installed');
is(slurp("$avail/resourcesync.conf"), slurp("$top/conf/resourcesync.conf"), 'the .conf is installed');
ok(!-e "$avail/resourcesync.conf.dist", 'no .conf.dist at the first install');

put("$avail/resourcesync.conf", "# edited by the operator\n");
($rc, $out) = install();
is(slurp("$avail/resourcesync.conf"), "# edited by the operator\n", 'a second install keeps the edited .conf');
is(slurp("$avail/resourcesync.conf.dist"), slurp("$top/conf/resourcesync.conf"),
   'the new .conf goes beside it as .conf.dist');

my $warn = `groff -ww -man -Tutf8 -z $top/docs/rs-tool.1 2>&1`;
is($warn, '', 'the man page renders without warnings');
