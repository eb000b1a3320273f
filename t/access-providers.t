# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# The access check looks like a remote anonymous client to every
# authorization provider httpd ships: a directory admitted only to local
# clients (Require local, ip, host, forward-dns, env, expr on the address)
# or to users with a password is never listed, neither in the Resource List
# nor in the Change List for a file created while running - although the
# test client, on 127.0.0.1, is admitted to all but the password one.
# Private server.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for fetch_list put changes_of);

my %rule = (
    local => 'Require local',
    ip    => 'Require ip 127.0.0.1 ::1',
    host  => 'Require host localhost',
    fwd   => 'Require forward-dns localhost',
    env   => 'Require env from_here',
    expr  => q{Require expr "-R '127.0.0.0/8' || %{REMOTE_ADDR} == '127.0.0.1'"},
    user  => 'Require valid-user',
    named => 'Require user alice',
);
my @guarded = sort keys %rule;

plan tests => 1 + 3 + 4 * @guarded;

umask 022;
my $mods = '/usr/lib/apache2/modules';
my $conf = join('', map { "LoadModule ${_}_module $mods/mod_$_.so\n" }
                        qw(authn_core authn_file auth_basic authz_user setenvif))
    . STATE_CONF . "ResourceSyncRescanInterval 1\n"
    . set_conf('ap', 'www/ap')
    . qq(SetEnvIf Remote_Addr "^127\\.0\\.0\\.1\$" from_here\n)
    . join('', map {
          my $auth = /^(user|named)$/
              ? qq(    AuthType Basic\n    AuthName "ap"\n    AuthUserFile "\@DIR\@/htpasswd"\n) : '';
          qq(<Directory "\@DIR\@/www/ap/$_">\n$auth    $rule{$_}\n</Directory>\n) } @guarded);

my $srv = started_server(
    conf  => $conf,
    files => { 'htpasswd' => "alice:\$apr1\$x\$invalidinvalidinvalid0\n",
               'www/ap/open/f.txt' => "open\n",
               map { ("www/ap/$_/f.txt" => "$_\n") } @guarded });
my $B = $srv->base;
my $www = $srv->dir . '/www';

# The rules admit the local test client (but not without a password).
for my $g (@guarded) {
    is(get("$B/ap/$g/f.txt")->code, ($g eq 'user' || $g eq 'named') ? 401 : 200,
       "$g: the test client on 127.0.0.1 gets "
       . (($g eq 'user' || $g eq 'named') ? '401' : '200') . " ($rule{$g})");
}

my %listed = map { $_->{loc} => 1 } @{ fetch_list('ap', $B)->{entries} };
ok($listed{"$B/ap/open/f.txt"}, 'open/f.txt is listed') or diag explain \%listed;
for my $g (@guarded) {
    ok(!$listed{"$B/ap/$g/f.txt"}, "$g/f.txt is not listed ($rule{$g})");
}

# Change List: every entry of every list of set "ap".
sub changes { map { $_->{loc} } changes_of('ap', $B) }

# Files created while running: the guarded ones first, then the open one;
# once the open one is journaled, the guarded ones have been decided.
put("$www/ap/$_/new.txt", "new $_\n") for @guarded;
put("$www/ap/open/new.txt", "new open\n");
my $c = wait_for(sub { my @c = changes(); (grep { $_ eq "$B/ap/open/new.txt" } @c) ? \@c : undef },
                 30);
ok($c, 'open/new.txt created while running is in the Change List');
my %journaled = map { $_ => 1 } @{ $c || [] };
for my $g (@guarded) {
    ok(!$journaled{"$B/ap/$g/new.txt"}, "$g/new.txt created while running is not journaled");
}
%listed = map { $_->{loc} => 1 } @{ wait_for(sub {
    my $l = fetch_list('ap', $B)->{entries};
    (grep { $_->{loc} eq "$B/ap/open/new.txt" } @$l) ? $l : undef }, 30) || [] };
ok($listed{"$B/ap/open/new.txt"}, 'open/new.txt is in the next Resource List');
for my $g (@guarded) {
    ok(!$listed{"$B/ap/$g/new.txt"}, "$g/new.txt is not in the next Resource List");
}
