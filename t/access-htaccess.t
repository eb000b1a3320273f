# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# Access files are followed: a <Files> denial, a RewriteRule [F] (renamed
# into place) or a "Require all denied" written into an .htaccess inside a
# set takes what it denies out of the Resource List within seconds
# (journaled as deleted); removing a denying .htaccess, or renaming it
# away, brings the files back (journaled as created).  The same changes made while the server is stopped are
# honoured by the startup scan.  Private server (prefork: stopped and
# started).
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF get doc xpc wait_for fetch_list put changes_of);

plan tests => 32;

umask 022;
my $mods = '/usr/lib/apache2/modules';
my $srv = private_server(
    mpm  => 'prefork',
    conf => "LoadModule rewrite_module $mods/mod_rewrite.so\n" . STATE_CONF
            . "ResourceSyncRescanInterval 1\nAccessFileName .htaccess .acl\n"
            . set_conf('h', 'www/h', 'AllowOverride All'));
$srv->populate(files => { map { ("www/h/$_" => "$_\n") }
                          qw(pub.txt files/secret.txt files/ok.txt rw/page.txt rw/keep.txt
                             sub/s.txt) });
$srv->start_ok;
my $B = $srv->base;
my $H = $srv->dir . '/www/h';

# Relative paths in the Resource List, sorted, joined with spaces.
sub listed {
    my $l = eval { fetch_list('h', $B) } or return '';
    return join ' ', sort map { (my $r = $_->{loc}) =~ s{^\Q$B\E/h/}{}; $r } @{ $l->{entries} };
}

# Wait until the Resource List is exactly $want; returns what it last was.
sub listed_becomes {
    my ($want, $timeout) = @_;
    my $last;
    wait_for(sub { ($last = listed()) eq $want }, $timeout || 15);
    return $last;
}

# The Change List's entries as "change path", in order.
sub changes {
    return map { my $rel = $_->{loc}; $rel =~ s{^\Q$B\E/h/}{}; "$_->{change} $rel" }
           changes_of('h', $B);
}

# Wait until the Change List's newest entry for $path is $change.
sub journaled {
    my ($change, $path) = @_;
    return wait_for(sub { my @c = grep { / \Q$path\E$/ } changes(); @c && $c[-1] eq "$change $path" },
                    15);
}

my $all = 'files/ok.txt files/secret.txt pub.txt rw/keep.txt rw/page.txt sub/s.txt';
is(listed_becomes($all, 30), $all, 'at first everything is listed');

# --- while running ------------------------------------------------------
put("$H/files/.htaccess", qq(<Files "secret.txt">\n    Require all denied\n</Files>\n));
is(get("$B/h/files/secret.txt")->code, 403, '<Files> denial in .htaccess: the file answers 403');
my $want = 'files/ok.txt pub.txt rw/keep.txt rw/page.txt sub/s.txt';
is(listed_becomes($want), $want, '<Files> denial: the file leaves the Resource List');
ok(journaled('deleted', 'files/secret.txt'), '<Files> denial: journaled as deleted');

# Written elsewhere, renamed into place.
put("$H/rw/.htaccess.new", "RewriteEngine On\nRewriteRule ^page\\.txt\$ - [F]\n");
rename "$H/rw/.htaccess.new", "$H/rw/.htaccess" or die $!;
is(get("$B/h/rw/page.txt")->code, 403, 'RewriteRule [F] in .htaccess: the file answers 403');
is(get("$B/h/rw/keep.txt")->code, 200, 'RewriteRule [F]: the other file answers 200');
$want = 'files/ok.txt pub.txt rw/keep.txt sub/s.txt';
is(listed_becomes($want), $want, 'RewriteRule [F]: the file leaves the Resource List');
ok(journaled('deleted', 'rw/page.txt'), 'RewriteRule [F]: journaled as deleted');

put("$H/.htaccess", "Require all denied\n");
is(get("$B/h/pub.txt")->code, 403, 'Require all denied in the top .htaccess: 403');
is(listed_becomes(''), '', 'Require all denied at the top: everything leaves the list');
ok(journaled('deleted', 'sub/s.txt'), 'Require all denied at the top: journaled as deleted');

unlink "$H/.htaccess" or die $!;
is(get("$B/h/pub.txt")->code, 200, 'top .htaccess removed: 200 again');
is(listed_becomes($want), $want, 'top .htaccess removed: the files are listed again');
ok(journaled('created', 'pub.txt'), 'top .htaccess removed: journaled as created');

# Renamed away.
rename "$H/files/.htaccess", "$H/files/.htaccess.off" or die $!;
$want = 'files/ok.txt files/secret.txt pub.txt rw/keep.txt sub/s.txt';
is(listed_becomes($want), $want, 'denying .htaccess renamed away: the file comes back');
ok(journaled('created', 'files/secret.txt'), 'denying .htaccess renamed away: journaled as created');

# The second name of AccessFileName.
put("$H/sub/.acl", "Require all denied\n");
$want = 'files/ok.txt files/secret.txt pub.txt rw/keep.txt';
is(listed_becomes($want), $want, 'a denying .acl (AccessFileName .htaccess .acl) is followed');
unlink "$H/sub/.acl" or die $!;
$want = 'files/ok.txt files/secret.txt pub.txt rw/keep.txt sub/s.txt';
is(listed_becomes($want), $want, 'its removal too');

# --- while stopped ------------------------------------------------------
# Access files are changed, created and removed while the server is down;
# the files they govern are not touched.
sub restart_with {
    my ($change) = @_;
    $srv->stop;
    $change->();
    $srv->start_ok('server starts again');
}

restart_with(sub {
    put("$H/files/.htaccess", qq(<Files "ok.txt">\n    Require all denied\n</Files>\n));
    put("$H/rw/.htaccess", "RewriteEngine On\nRewriteRule ^keep\\.txt\$ - [F]\n");
    put("$H/sub/.htaccess", "Require all denied\n");
});
$want = 'files/secret.txt pub.txt rw/page.txt';
is(listed_becomes($want, 30), $want,
   'after a restart: new and changed denials are honoured, a changed RewriteRule too');
ok(journaled('deleted', 'files/ok.txt'), 'after a restart: <Files> denial journaled as deleted');
ok(journaled('created', 'rw/page.txt'), 'after a restart: a RewriteRule no longer denying: created');

# sub is denied by its own .htaccess since the start: removing that file
# while running must still be seen.
unlink "$H/sub/.htaccess" or die $!;
$want = 'files/secret.txt pub.txt rw/page.txt sub/s.txt';
is(listed_becomes($want), $want, 'a directory denied by its own .htaccess since the start comes back');
ok(journaled('created', 'sub/s.txt'), '... journaled as created');

restart_with(sub { put("$H/.htaccess", "Require all denied\n") });
is(listed_becomes('', 30), '', 'after a restart: Require all denied at the top empties the list');
ok(journaled('deleted', 'pub.txt'), 'after a restart: journaled as deleted');

restart_with(sub { unlink "$H/.htaccess", "$H/files/.htaccess", "$H/rw/.htaccess",
                   "$H/sub/.htaccess" });
is(listed_becomes($all, 30), $all, 'after a restart: every denying .htaccess removed, all is back');
ok(journaled('created', 'sub/s.txt'), 'after a restart: journaled as created');

# The access files themselves are never listed.
unlike(join(' ', changes()), qr/htaccess/, 'no .htaccess in the Change List');
$srv->stop;
