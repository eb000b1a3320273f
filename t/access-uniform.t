# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# Access decided once per directory and kind of file (ResourceSyncAccessCheck
# auto) gives exactly the answers of one request per file (per-file): the
# same Resource List, locations and media types, on a tree with the access
# rules of the "rules" set (denied and password-protected directories,
# <Files>, an exclusion, an unreadable file, links in and out) and more:
# <FilesMatch>, AddHandler and AddType by extension (in upper case too), a
# <Location> naming one file, an Alias into the set naming one file, an
# .htaccess with <Files>, links where FollowSymLinks is off, an <If> on the
# query string.  The debug
# lines of the checkers show where one request served many files, and
# where each file got its own; that directories with the same <Directory>
# sections share answers, unless a <Directory> has a wildcard; a loaded
# mod_rewrite, or an <If> that looks at the file, turns it off.
# Private servers (one per mode).
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF STATUS_CONF fetch_list wait_for get);

plan tests => 29;

umask 022;
my $mods = '/usr/lib/apache2/modules';

# Everything but the mode (and extra modules).
sub conf {
    my ($mode, $extra) = @_;
    return ($extra // '')
        . "LoadModule auth_basic_module $mods/mod_auth_basic.so\n"
        . "LoadModule authn_core_module $mods/mod_authn_core.so\n"
        . "LoadModule authn_file_module $mods/mod_authn_file.so\n"
        . "LoadModule authz_user_module $mods/mod_authz_user.so\n"
        . STATE_CONF . STATUS_CONF . "ResourceSyncRescanInterval 1\nLogLevel info resourcesync:debug\n"
        . ($mode ? "ResourceSyncAccessCheck $mode\n" : '')
        . set_conf('u', 'www/u', 'ResourceSyncExclude *.tmp', 'AllowOverride All')
        . qq(<Directory "\@DIR\@/www/u/denied">\n    Require all denied\n</Directory>\n)
        . qq(<Directory "\@DIR\@/www/u/private">\n    AuthType Basic\n    AuthName private\n)
        . qq(    AuthUserFile "\@DIR\@/htpasswd"\n    Require valid-user\n</Directory>\n)
        . qq(<Directory "\@DIR\@/www/u/nolinks">\n    Options None\n</Directory>\n)
        . qq(<Files "secret.txt">\n    Require all denied\n</Files>\n)
        . qq(<FilesMatch "\\.pem\$">\n    Require all denied\n</FilesMatch>\n)
        . "AddHandler cgi-script .cgi\nAddType application/x-foo .foo\n"
        . qq(<Location "/u/loc/one.txt">\n    Require all denied\n</Location>\n)
        . qq(Redirect /u/loc/moved.txt http://example.org/moved.txt\n)
        . qq(<If "%{QUERY_STRING} == 'sendfile' && -R '10.0.0.0/8'">\n    EnableSendfile On\n</If>\n);
}

my %files = map { ("www/u/$_" => "$_\n") }
    qw(a.txt b.txt c.TXT d.html e.tar.gz noext secret.txt key.pem script.cgi x.foo y.FOO
       scratch.tmp unreadable.txt denied/d.txt private/p.txt loc/one.txt loc/two.txt
       loc/moved.txt ht/h.txt ht/i.txt ht/deep/h.txt ht/deep/j.txt nolinks/real.txt
       same/s.txt same/t.html);
$files{'www/u/ht/.htaccess'} = qq(<Files "h.txt">\n    Require all denied\n</Files>\n);
$files{'outside.txt'} = "outside\n";

my @want = qw(a.txt b.txt c.TXT d.html e.tar.gz ht/deep/j.txt ht/i.txt link-in.txt loc/two.txt
              nolinks/real.txt noext same/s.txt same/t.html x.foo y.FOO);
my %want_type = ('a.txt' => 'text/plain', 'b.txt' => 'text/plain', 'c.TXT' => 'text/plain',
                 'd.html' => 'text/html', 'e.tar.gz' => 'application/gzip',
                 'x.foo' => 'application/x-foo', 'y.FOO' => 'application/x-foo');

sub start {
    my ($mode, $extra) = @_;
    my $srv = private_server(mpm => 'prefork', conf => conf($mode, $extra));
    $srv->populate(files => \%files);
    my $u = $srv->dir . '/www/u';
    symlink('a.txt', "$u/link-in.txt") or die $!;
    symlink($srv->dir . '/outside.txt', "$u/link-out.txt") or die $!;
    symlink('real.txt', "$u/nolinks/ln.txt") or die $!;
    chmod 0000, "$u/unreadable.txt";
    $srv->start_ok("server starts (" . ($mode // 'default') . ")");
    return $srv;
}

# "path type" of each entry, sorted; waits until the list has @want's size.
sub listing {
    my ($srv) = @_;
    my $B = $srv->base;
    my @l;
    wait_for(sub {
        my $l = eval { fetch_list('u', $B) } or return 0;
        @l = sort map { (my $r = $_->{loc}) =~ s{^\Q$B\E/u/}{}; "$r " . ($_->{type} // '-') }
             @{ $l->{entries} };
        return @l == @want;
    }, 60);
    return join "\n", @l;
}

# { directory => [files, requests] } from the checkers' debug lines.
sub requests {
    my ($srv, $how) = @_;
    my %d;
    for (split /\n/, $srv->log_text) {
        $d{$1} = [$2, $3] if /set u: access of directory \/(\S*) decided \Q$how\E: (\d+) files, (\d+) requests/;
    }
    return \%d;
}

my $expected = join "\n", map {
    my $t = $want_type{$_} // (/\.html$/ ? 'text/html' : /\.txt$/ ? 'text/plain' : '-');
    "$_ $t" } sort @want;

# auto
my $auto = start(undef);
my $auto_list = listing($auto);
is($auto_list, $expected, 'auto: exactly the expected locations and types');
like($auto->log_text, qr/set u: access decided per directory/, 'auto: the set runs per directory');
like(get($auto->base . '/rs-status?auto')->content, qr/^SetAccessCheck: per-directory$/m,
     'auto: the status page says per-directory');
my $req = requests($auto, 'per directory');
# top: a b c unreadable (txt) | d.html | e.tar.gz | noext | secret.txt | key.pem |
# script.cgi | x y (foo): 8 keys; link-in.txt its own; scratch.tmp is excluded and
# link-out.txt (outside the set) never asked about
is_deeply($req->{''}, [13, 9], 'auto: 13 files of the top directory took 9 requests')
    or diag explain $req;
# Directories to which the same <Directory> sections apply share answers:
# loc/two.txt and same/s.txt take a.txt's, same/t.html d.html's.
is_deeply($req->{loc}, [3, 2], 'auto: <Location> and Redirect naming files: a key each; '
          . 'two.txt takes the answer of a.txt in the top directory');
is_deeply($req->{same}, [2, 0], 'auto: a directory with the sections of the top one: '
          . 'no request, its keys were answered there');
is_deeply($req->{nolinks}, [2, 2], 'auto: a directory with its own section asks again, '
          . 'and a link gets its own request');
my $perfile_dirs = requests($auto, 'per file');
is_deeply($perfile_dirs->{ht}, [2, 2], 'auto: a directory with an .htaccess is per file');
is_deeply($perfile_dirs->{'ht/deep'}, [2, 2], 'auto: ... and so is one below it');
$auto->stop;

# per-file
my $pf = start('per-file');
is(listing($pf), $auto_list, 'per-file: the same list as auto');
like($pf->log_text, qr/set u: access decided per file: ResourceSyncAccessCheck per-file/,
     'per-file: said at startup');
like(get($pf->base . '/rs-status?auto')->content, qr/^SetAccessCheck: per-file$/m,
     'per-file: the status page says per-file');
$req = requests($pf, 'per file');
is_deeply($req->{''}, [13, 13], 'per-file: one request per file');
is(scalar keys %{ requests($pf, 'per directory') }, 0, 'per-file: no directory decided by key');
$pf->stop;

# a <Directory> with a wildcard: answers shared by directory only
my $wild = start(undef, qq(<Directory "\@DIR\@/www/u/w*">\n    Require all granted\n</Directory>\n));
is(listing($wild), $auto_list, 'a wildcard <Directory>: the same list');
$req = requests($wild, 'per directory');
is_deeply([$req->{loc}, $req->{same}], [[3, 3], [2, 2]],
          'a wildcard <Directory>: no answer taken from another directory');
$wild->stop;

# mod_rewrite loaded: its hooks could tell files apart
my $rw = start(undef, "LoadModule rewrite_module $mods/mod_rewrite.so\n");
is(listing($rw), $auto_list, 'mod_rewrite loaded: the same list');
like($rw->log_text, qr/set u: access decided per file: mod_rewrite\.c has a \w+ hook/,
     'mod_rewrite loaded: per file, naming the module');
is(scalar keys %{ requests($rw, 'per directory') }, 0, 'mod_rewrite loaded: no directory by key');
$rw->stop;

# an <If> that looks at the file
my $if = start(undef, qq(<If "-f %{REQUEST_FILENAME}">\n    EnableSendfile On\n</If>\n));
is(listing($if), $auto_list, '<If> on the file: the same list');
like($if->log_text, qr/set u: access decided per file: <If "-f %\{REQUEST_FILENAME\}">/,
     '<If> on the file: per file, naming it');
$if->stop;

# an <If> calling a function (a blank before its parenthesis), which could read anything
my $fn = start(undef, qq(<If "req ('X-A') == 'b'">\n    EnableSendfile On\n</If>\n));
is(listing($fn), $auto_list, '<If> calling a function: the same list');
like($fn->log_text, qr/set u: access decided per file: <If "req \('X-A'\) == 'b'">/,
     '<If> calling a function: per file, naming it');
$fn->stop;
