# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# The configuration fingerprint: a restart after a change that cannot
# change an access decision, a media type or a URL (ServerTokens, LogLevel,
# Timeout..., and what differs between nodes: ServerName, Listen) checks no file again and keeps the Resource List generation;
# a change of a Require in the set's section, or of an AddType, checks every
# file again and the list follows it.  ServerTokens counts as soon as a rule
# tests SERVER_SOFTWARE, which it sets.
#
# "Checked again" is read from the startup scan's log line: a file whose row
# was decided under another fingerprint gets its row rewritten ("N rows
# written"); under the same fingerprint an unchanged tree writes none.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get fetch_list wait_for private_server set_conf STATE_CONF rl_url);

plan tests => 24;

umask 022;

my %FILES = ('a.txt' => "a\n", 'b.txt' => "b\n", 'c.html' => "<p>c</p>\n",
             'secret.txt' => "not always public\n");

sub conf {
    my ($require, $extra) = @_;
    # (the URLs do not follow ServerName)
    return STATE_CONF . "ResourceSyncBaseURL http://127.0.0.1:\@PORT\@\n" . ($extra // '')
           . set_conf('f', 'www/data', 'ResourceSyncMaxEntries 2', '<Files "secret.txt">',
                      "    Require $require", '</Files>');
}

# (files, listed, rows written) of the first full scan in a piece of the log.
sub scan_counts {
    my ($text) = @_;
    return $text =~ /set f: scanned (\d+) files .*?\((\d+) listed, (\d+) rows written/
        ? ($1, $2, $3) : ();
}

# Restart with a new configuration (stop, write, start); returns the counts
# of the startup scan and the Resource List once it is served.
sub restart_with {
    my ($srv, $conf, $name) = @_;
    $srv->stop;
    $srv->write_conf($conf);
    my $mark = length $srv->log_text;
    $srv->start_ok($name);
    # (the counts are the caller's next check: none when the scan was not logged)
    wait_for(sub { my @c = scan_counts(substr($srv->log_text, $mark)); @c ? 1 : undef }, 60);
    my @c = scan_counts(substr($srv->log_text, $mark));
    return (\@c, $mark);
}

# Generation of each part of an index (<history>-<gen>-<n>.xml).
sub part_gens {
    my ($l) = @_;
    return join ' ', map { m{/resourcelist/[0-9a-f]{8}-(\d+)-\d+\.xml$} ? $1 : -1 } @{ $l->{parts} };
}

sub by_name {
    my ($l) = @_;
    return { map { (($_->{loc} =~ m{/([^/]+)$})[0] => $_) } @{ $l->{entries} } };
}

# Wait until the list satisfies $ok; returns it (or the last one fetched).
sub list_when {
    my ($srv, $ok) = @_;
    my $last;
    return wait_for(sub { $last = fetch_list('f', $srv->base); $ok->($last) ? $last : undef }, 60)
           || $last;
}

my $srv = private_server(mpm => 'prefork', conf => conf('all granted'));
$srv->populate(dirs => ['www/data'], files => { map { ("www/data/$_" => $FILES{$_}) } keys %FILES });
$srv->start_ok('server starts');
my $l1 = list_when($srv, sub { keys %{ by_name($_[0]) } == 4 });
is(scalar keys %{ by_name($l1) }, 4, 'the four files are listed');
is(by_name($l1)->{'a.txt'}{type}, 'text/plain', 'a.txt is listed as text/plain');
my $g1 = part_gens($l1);
my $body1 = get(rl_url('f', $srv->base))->content;

# ------------------------------ changes that cannot matter: nothing re-checked
my $noop = "ServerTokens Prod\nServerSignature Off\nServerAdmin ops\@example.org\n"
           . "LogLevel notice\nTimeout 77\nKeepAlive Off\nMaxKeepAliveRequests 7\n"
           . "ResourceSyncRobots on\nResourceSyncHostMeta on\n"
           # what differs between the nodes that share a store (their URLs
           # given by ResourceSyncBaseURL, see conf)
           . "ServerName node-b.example\n"
           . "Listen 127.0.0.1:" . RSTest::free_port() . "\n"
           . "ResourceSyncNotifyTimeout 20\nResourceSyncFailover 30\n";
my ($c, $mark) = restart_with($srv, conf('all granted', $noop),
                              'starts again with ServerTokens, LogLevel, Timeout..., '
                              . 'ResourceSyncRobots and ResourceSyncHostMeta, ServerName, '
                              . 'Listen and the failover and delivery timeouts changed');
is("@$c", '4 4 0', 'the startup scan writes no row: no file was checked again '
                   . '(4 files, 4 listed, 0 rows written)');
my $l2 = fetch_list('f', $srv->base);
is(part_gens($l2), $g1, "the Resource List keeps its generation ($g1)");
is(get(rl_url('f', $srv->base))->content, $body1, '... and is the same document (same at)');

# ----------------------- a Require in the set's section: re-checked, followed
($c) = restart_with($srv, conf('all denied', $noop),
                    'starts again with secret.txt denied in the set\'s section');
is("@$c", '4 3 4', 'every file is checked again (4 files, 3 listed, 4 rows written)');
my $l3 = list_when($srv, sub { !by_name($_[0])->{'secret.txt'} });
ok(!by_name($l3)->{'secret.txt'} && keys %{ by_name($l3) } == 3,
   'the Resource List follows: secret.txt is no longer listed');
# (a newer snapshot: its index is newer; parts nothing changed in keep
# the generation they were written in, and the part of secret.txt went)
ok($l3->{at} && RSTest::iso2epoch($l3->{at}) > RSTest::iso2epoch($l2->{at}),
   "... in a newer snapshot (index at $l2->{at} -> $l3->{at})");

# ------------------------------------------- AddType: the listed type follows
($c) = restart_with($srv, conf('all denied', $noop . "AddType text/x-fingerprint .txt\n"),
                    'starts again with an AddType for .txt');
is("@$c", '4 3 4', 'every file is checked again (4 files, 3 listed, 4 rows written)');
my $l4 = list_when($srv, sub { (by_name($_[0])->{'a.txt'}{type} // '') eq 'text/x-fingerprint' });
is(by_name($l4)->{'a.txt'}{type}, 'text/x-fingerprint', 'a.txt is now listed with the new type');
is(by_name($l4)->{'c.html'}{type}, 'text/html', 'c.html keeps text/html');

# --------------- back to a change that cannot matter after the AddType: kept
my @g4 = split / /, part_gens($l4);
($c) = restart_with($srv, conf('all denied', $noop . "AddType text/x-fingerprint .txt\n"
                                             . "ServerTokens Full\nLogLevel info\n"),
                    'starts again with ServerTokens and LogLevel changed once more');
is("@$c", '4 3 0', 'no file is checked again (0 rows written)');
is(part_gens(fetch_list('f', $srv->base)), "@g4", 'the generation is kept');

# ------- ServerTokens counts when a rule tests SERVER_SOFTWARE (ap_expr)
my $tested = qq(expr "%{SERVER_SOFTWARE} =~ m#/#");
my $types = "AddType text/x-fingerprint .txt\n";
($c) = restart_with($srv, conf($tested, "ServerTokens Full\n$types"),
                    'starts again with secret.txt allowed by a rule on SERVER_SOFTWARE');
my $l5 = list_when($srv, sub { by_name($_[0])->{'secret.txt'} });
ok(by_name($l5)->{'secret.txt'}, 'with ServerTokens Full (a "/" in the banner) secret.txt is listed');
($c) = restart_with($srv, conf($tested, "ServerTokens Prod\n$types"),
                    'starts again with only ServerTokens changed, to Prod');
is("@$c", '4 3 4', 'every file is checked again: a rule tests SERVER_SOFTWARE (4 rows written)');
my $l6 = list_when($srv, sub { !by_name($_[0])->{'secret.txt'} });
ok(!by_name($l6)->{'secret.txt'}, 'with ServerTokens Prod ("Apache") secret.txt is no longer listed');

$srv->stop;
my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no module warnings or errors logged');
