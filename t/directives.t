# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# The directive table: every directive where it may stand (accepted by
# `httpd -t`) and where it may not (the exact message), and a refused value
# of each with the exact message docs/directives.md quotes.  Checks the
# configuration pass, and the examples docs/directives.md gives for the link
# directives; one server really starts, with and without link directives
# (they stay out of the configuration fingerprint).  Private servers only.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use RSTest qw(get cl_index private_server set_conf wait_for STATE_CONF);

# [directive, where it may stand, a valid value, a refused value, the message,
#  optionally a directive the valid value needs beside it where it is accepted]
# where: main (main server only), server (main server or <VirtualHost>),
# option (server level or the set's <Directory>).
my @table = (
    ['ResourceSyncRescanInterval', 'main', '30', '0',
     "ResourceSyncRescanInterval: '0' is not a number of seconds from 1 to 86400"],
    ['ResourceSyncLargeFileSize', 'main', 'off', '64M',
     "ResourceSyncLargeFileSize: '64M' is not 'off' nor a number of MiB from 1 to 1048576"],
    ['ResourceSyncVerifyInterval', 'main', 'Off', 'soon',
     "ResourceSyncVerifyInterval: 'soon' is not 'off' nor a duration (e.g. 3600, 90m, 12h, 1d)"],
    ['ResourceSyncRecentChanges', 'main', '100', '262145',
     "ResourceSyncRecentChanges: '262145' is not a number of changes from 16 to 262144"],
    ['ResourceSyncMassDeletion', 'main', '20% 5', '50% 0',
     "ResourceSyncMassDeletion: '0' is not a number of files from 1 to 1000000000"],
    ['ResourceSyncStore', 'main', 'pgsql "host=127.0.0.1 dbname=rs user=rs"', 'mysql',
     "ResourceSyncStore: 'mysql' is not sqlite or pgsql"],
    ['ResourceSyncNodeName', 'main', 'web-1.example:2', 'web/1',
     "ResourceSyncNodeName: 'web/1' is not a name of 1 to 64 letters, digits, '-', '.', '_' or ':'"],
    ['ResourceSyncPrefix', 'server', '/rsx', '/rsx/',
     "ResourceSyncPrefix: invalid URL-path '/rsx/' (an absolute path such as /resourcesync, "
     . "without a trailing '/')"],
    ['ResourceSyncAccessCheck', 'server', 'PER-FILE', 'per_file',
     "ResourceSyncAccessCheck: 'per_file' is not auto or per-file"],
    ['ResourceSyncBaseURL', 'server', 'https://x.example/p/', 'ftp://x.example',
     "ResourceSyncBaseURL: invalid URL 'ftp://x.example' (give scheme://host[:port][/path], "
     . "e.g. https://data.example.org)"],
    ['ResourceSyncHash', 'option', 'md5 sha-256', 'md5 none sha-1',
     "ResourceSyncHash: 'none' cannot be combined with algorithms ('md5 sha-1')"],
    ['ResourceSyncMaxEntries', 'option', '10', '50001',
     "ResourceSyncMaxEntries: '50001' is not a number from 2 to 50000"],
    ['ResourceSyncExclude', 'option', '*.tmp "a b"', '*.tmp [x',
     "ResourceSyncExclude: invalid pattern '[x': unterminated '[' in '[x'"],
    ['ResourceSyncDescribedBy', 'option', 'http://e.example/a', '/about',
     "ResourceSyncDescribedBy: '/about' is not an absolute http(s) URL"],
    ['ResourceSyncChangeListPeriod', 'option', '1h', '0',
     "ResourceSyncChangeListPeriod: '0' is not a duration (e.g. 3600, 90m, 12h, 1d)"],
    ['ResourceSyncJournalRetention', 'option', '12h', 'forever',
     "ResourceSyncJournalRetention: 'forever' is not a duration (e.g. 30d, 12h)"],
    ['ResourceSyncResourceDump', 'option', 'off', 'on',
     "ResourceSyncResourceDump: 'on' is not a duration (e.g. 3600, 90m, 12h, 1d) or off"],
    ['ResourceSyncDumpMaxEntries', 'option', '10', '50001',
     "ResourceSyncDumpMaxEntries: '50001' is not a number from 1 to 50000"],
    ['ResourceSyncDumpMaxSize', 'option', '3', '1048577',
     "ResourceSyncDumpMaxSize: '1048577' is not a number of MiB from 1 to 1048576"],
    ['ResourceSyncDumpGrace', 'option', '2h', 'later',
     "ResourceSyncDumpGrace: 'later' is not a duration (e.g. 3600, 90m, 12h, 1d)"],
    ['ResourceSyncChangeDump', 'option', 'OFF', '1',
     "ResourceSyncChangeDump: '1' is not On or Off"],
    ['ResourceSyncNotify', 'option', 'off', 'yes',
     "ResourceSyncNotify: 'yes' is not On or Off"],
    ['ResourceSyncNotifyDelay', 'option', '100ms', '-1',
     "ResourceSyncNotifyDelay: '-1' is not a delay from 0 to 1h (e.g. 100ms, 2s)"],
    ['ResourceSyncNotifyHub', 'option', 'https://hub.example/h PING', 'http://hub.example/h slow',
     "ResourceSyncNotifyHub: 'slow' is not fat or ping", 'ResourceSyncNotify on'],
    ['ResourceSyncNotifyRetry', 'option', '1h', '0',
     "ResourceSyncNotifyRetry: '0' is not a duration (e.g. 3600, 30m, 12h, 1d)"],
    ['ResourceSyncHubSignature', 'server', 'SHA512', 'md5',
     "ResourceSyncHubSignature: 'md5' is not sha1, sha256, sha384 or sha512"],
    ['ResourceSyncSpecVersion', 'option', '1.0', '1',
     "ResourceSyncSpecVersion: '1' is not 1.1 or 1.0"],
    ['ResourceSyncIncludeDotfiles', 'option', 'On', 'maybe',
     "ResourceSyncIncludeDotfiles: 'maybe' is not On or Off"],
    ['ResourceSyncHub', 'server', 'OFF', '1', "ResourceSyncHub: '1' is not on or off"],
    ['ResourceSyncRobots', 'server', 'On', 'yes', "ResourceSyncRobots: 'yes' is not On or Off"],
    ['ResourceSyncHostMeta', 'server', 'off', '1', "ResourceSyncHostMeta: '1' is not On or Off"],
    ['ResourceSyncHubLease', 'server', '60 1h', '1d soon',
     "ResourceSyncHubLease: 'soon' is not a duration (e.g. 300, 5m, 12h, 31d)"],
    ['ResourceSyncHubAllowCallback', 'server', '127.0.0.1 10.0.0.0/8', '127.0.0.1 ::1/129',
     "ResourceSyncHubAllowCallback: '::1/129' is not a host name, an IP address or a CIDR block "
     . "(e.g. 10.0.0.0/8)"],
    ['ResourceSyncHubMaxBacklog', 'server', '5', '10000001',
     "ResourceSyncHubMaxBacklog: '10000001' is not a number of notifications from 1 to 10000000"],
    ['ResourceSyncHubMaxSubscriptions', 'server', '10 5 3', '10 5 x',
     "ResourceSyncHubMaxSubscriptions: 'x' is not a number of subscriptions from 1 to 10000000"],
    ['ResourceSyncHubSpoolLimit', 'main', '10 16', '10 1048577',
     "ResourceSyncHubSpoolLimit: '1048577' is not a number of KiB from 16 to 1048576"],
    ['ResourceSyncHubRequestRate', 'main', '10 1m', 'x 1m',
     "ResourceSyncHubRequestRate: 'x' is not a number of requests from 1 to 10000000"],
    ['ResourceSyncHubVerifyTimeout', 'main', '10m', '50ms',
     "ResourceSyncHubVerifyTimeout: '50ms' is not a duration from 100ms to 10m"],
    ['ResourceSyncLink', 'set', 'describedby ^records/([0-9]+)\\.pdf$ meta/$1.xml if-exists',
     'up ^a b',
     'ResourceSyncLink: relation "up" means something else in ResourceSync and may not be used '
     . "on a resource's entry"],
    ['ResourceSyncMirror', 'set', 'https://mirror.example.org/d/ pri=2', 'mirror.example.org/d',
     'ResourceSyncMirror: mirror "mirror.example.org/d" is not an absolute URL without query or '
     . 'fragment (printable ASCII, percent-encoded)'],
);

my %may = (main => [qw(top)], server => [qw(top vhost)], option => [qw(top setdir vhostdir)],
           set => [qw(setdir vhostdir)]);
my %may_not = (
    main   => { vhost => 'D cannot occur within <VirtualHost> section',
                setdir => 'D not allowed in <Directory> context' },
    server => { setdir => 'D not allowed in <Directory> context',
                location => 'D not allowed in <Location> context' },
    option => { location => 'D cannot occur within <Location> section',
                files => 'D cannot occur within <Files> section',
                if => 'D cannot occur within <If> section',
                otherdir => 'D (FILE) is in a <Directory> section without ResourceSyncSet, where '
                            . 'it has no effect: put set options in the section that holds '
                            . 'ResourceSyncSet, or at server level' },
    set    => { top => 'D is only allowed in the <Directory> section that holds ResourceSyncSet',
                vhost => 'D is only allowed in the <Directory> section that holds ResourceSyncSet',
                location => 'D cannot occur within <Location> section',
                files => 'D cannot occur within <Files> section',
                if => 'D cannot occur within <If> section',
                otherdir => 'D (FILE) is in a <Directory> section without ResourceSyncSet, where '
                            . 'it has no effect: put it in the section that holds ResourceSyncSet' },
);
# The configuration with the line d in place p.
my %place = (
    top      => sub { STATE_CONF . "$_[0]\n" . set_conf('ds', 'www/data') },
    vhost    => sub { STATE_CONF . set_conf('ds', 'www/data')
                      . "<VirtualHost 127.0.0.1:\@PORT\@>\n    $_[0]\n</VirtualHost>\n" },
    setdir   => sub { STATE_CONF . set_conf('ds', 'www/data', $_[0]) },
    vhostdir => sub { STATE_CONF . "<VirtualHost 127.0.0.1:\@PORT\@>\n"
                      . set_conf('vs', 'www/data', $_[0]) . "</VirtualHost>\n" },
    otherdir => sub { STATE_CONF . set_conf('ds', 'www/data')
                      . qq(<Directory "\@DIR\@/www/other">\n    $_[0]\n</Directory>\n) },
    location => sub { STATE_CONF . set_conf('ds', 'www/data')
                      . qq(<Location "/data">\n    $_[0]\n</Location>\n) },
    files    => sub { STATE_CONF . set_conf('ds', 'www/data')
                      . qq(<Files "x">\n    $_[0]\n</Files>\n) },
    if       => sub { STATE_CONF . set_conf('ds', 'www/data')
                      . qq(<If "true">\n    $_[0]\n</If>\n) },
);

my $srv = private_server();
my $d = $srv->dir;
make_path("$d/www/data", "$d/www/other");

# `httpd -t` of a configuration: (exit status, the message: the line after
# "Syntax error on line N of FILE:", or the module's emerg message of the
# check_config pass; "Syntax OK"), with FILE:LINE of httpd.conf as FILE.
sub configtest {
    my ($conf) = @_;
    $srv->write_conf($conf);
    my $bin = RSTest::Server::httpd_bin();
    my $out = `$bin -d $d -f $d/httpd.conf -t 2>&1`;
    my $rc = $? >> 8;
    my ($msg) = $out =~ /^AH00526: Syntax error on line \d+ of [^\n]*:\n([^\n]*)/m;
    ($msg) = $out =~ /mod_resourcesync: ([^\n]*)/ unless defined $msg;
    ($msg) = $out =~ /^(Syntax OK)$/m unless defined $msg;
    $msg =~ s/\Q$d\E\/httpd\.conf:\d+/FILE/g if defined $msg;
    return ($rc, $msg // $out);
}

my $n = 0;
$n += 1 + @{ $may{ $_->[1] } } + keys %{ $may_not{ $_->[1] } } for @table;
# The code blocks of the sections of docs/directives.md named.
sub doc_examples {
    open my $fh, '<', "$FindBin::Bin/../docs/directives.md" or die "docs/directives.md: $!";
    my $text = do { local $/; <$fh> };
    my @blocks;
    for my $name (@_) {
        my ($section) = $text =~ /^## \Q$name\E\n(.*?)(?=^## )/ms or die "no section $name";
        push @blocks, map { [$name, $_] } $section =~ /^```\n(.*?)^```$/msg;
    }
    return @blocks;
}
my @examples = doc_examples('ResourceSyncLink', 'ResourceSyncMirror', 'ResourceSyncStore',
                            'ResourceSyncNodeName');
# The live part: a start, then three restarts.
my @live = (
    ['without link directives', []],
    ['with a describedby rule and a mirror',
     ['ResourceSyncLink describedby ^records/([0-9]+)\\.pdf$ meta/$1.xml if-exists',
      'ResourceSyncMirror https://mirror.example.org/ln pri=1']],
    ['with the rules changed, one added and the order changed',
     ['ResourceSyncMirror https://mirror.example.org/ln pri=2',
      'ResourceSyncLink profile ^meta/ http://purl.org/dc/elements/1.1/',
      'ResourceSyncLink describedby ^records/([0-9]+)\\.pdf$ meta/$1.xml']],
    ['without link directives again', []],
);

plan tests => $n + 17 + @examples + 2 + 3 * (@live - 1) + 1;

for my $e (@table) {
    my ($name, $where, $good, $bad, $message, $with) = @$e;
    for my $p (@{ $may{$where} }) {
        my ($rc, $msg) = configtest($place{$p}->("$name $good" . ($with ? "\n$with" : '')));
        is("$rc $msg", '0 Syntax OK', "$name $good: accepted ($p)");
    }
    for my $p (sort keys %{ $may_not{$where} }) {
        (my $want = $may_not{$where}{$p}) =~ s/^D/$name/;
        my ($rc, $msg) = configtest($place{$p}->("$name $good"));
        is("$rc $msg", "1 $want", "$name: refused ($p)");
    }
    my ($rc, $msg) = configtest($place{ $where =~ /^(option|set)$/ ? 'setdir' : 'top' }->("$name $bad"));
    is("$rc $msg", "1 $message", "$name $bad: refused");
}

# ResourceSyncStateDir and ResourceSyncSet: their own places and messages.
my @own = (
    ['ResourceSyncStateDir in a virtual host',
     set_conf('ds', 'www/data') . "<VirtualHost 127.0.0.1:\@PORT\@>\n"
     . "    ResourceSyncStateDir \"\@DIR\@/state\"\n</VirtualHost>\n",
     'ResourceSyncStateDir cannot occur within <VirtualHost> section'],
    ['ResourceSyncStateDir given twice', STATE_CONF . qq(ResourceSyncStateDir "\@DIR\@/two"\n)
     . set_conf('ds', 'www/data'),
     "ResourceSyncStateDir '$d/two': already set to '$d/state' at FILE (one state directory per "
     . 'httpd instance)'],
    ['ResourceSyncStore given twice', STATE_CONF . "ResourceSyncStore sqlite\nResourceSyncStore "
     . qq(pgsql "dbname=rs password=secret"\n) . set_conf('ds', 'www/data'),
     'ResourceSyncStore pgsql: already set at FILE (one store per httpd instance)'],
    ['ResourceSyncStore pgsql without a connection string',
     STATE_CONF . "ResourceSyncStore pgsql\n" . set_conf('ds', 'www/data'),
     'ResourceSyncStore pgsql: needs a connection string (e.g. ResourceSyncStore pgsql '
     . '"host=db.example.org dbname=rs user=rs")'],
    ['ResourceSyncStore sqlite with a connection string',
     STATE_CONF . qq(ResourceSyncStore sqlite "dbname=rs"\n) . set_conf('ds', 'www/data'),
     'ResourceSyncStore sqlite: takes no connection string (the store is state.db in '
     . 'ResourceSyncStateDir)'],
    ['ResourceSyncNodeName given twice',
     STATE_CONF . "ResourceSyncNodeName a\nResourceSyncNodeName b\n" . set_conf('ds', 'www/data'),
     "ResourceSyncNodeName 'b': already set to 'a'"],
    ['ResourceSyncSet at server level', STATE_CONF . "ResourceSyncSet ds\n",
     'ResourceSyncSet not allowed here'],
    ['ResourceSyncSet in <DirectoryMatch>',
     STATE_CONF . qq(<DirectoryMatch "^\@DIR\@/www/data">\n    ResourceSyncSet ds\n)
     . "</DirectoryMatch>\n",
     'ResourceSyncSet must be used inside a <Directory> section'],
    ['ResourceSyncSet in <If> in <Directory>',
     STATE_CONF . qq(<Directory "\@DIR\@/www/data">\n<If "true">\n    ResourceSyncSet ds\n)
     . "</If>\n</Directory>\n",
     'ResourceSyncSet cannot occur within <If> section'],
    ['ResourceSyncSet with a wildcard',
     STATE_CONF . qq(<Directory "\@DIR\@/www/d*">\n    ResourceSyncSet ds\n</Directory>\n),
     qq{ResourceSyncSet ds: <Directory "$d/www/d*/"> must be a plain absolute path (no wildcards }
     . 'or regular expressions)'],
    ['ResourceSyncSet twice in a section',
     STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncSet dt'),
     "ResourceSyncSet dt: this <Directory> already holds set 'ds'"],
    ['ResourceSyncSet with a name too long', STATE_CONF . set_conf('a' x 65, 'www/data'),
     "ResourceSyncSet: invalid set name '" . ('a' x 65) . "' (use 1 to 64 letters, digits, '-', "
     . "'_' or '.', not starting with '.')"],
);
for my $c (@own) {
    my ($label, $conf, $want) = @$c;
    my ($rc, $msg) = configtest($conf);
    is("$rc $msg", "1 $want", $label);
}

# A hub in the section of a set that publishes nothing can never take
# effect: refused by `httpd -t`, naming the hub, the set and where it is
# declared.  The set's section decides over the server level; hubs at
# server level are defaults (a warning at startup, t/startup-errors.t).
my $nohub = 'the set has no ResourceSyncNotify on, so nothing is ever published to this hub';
my @hubs = (
    ['ResourceSyncNotifyHub in the section of a set without notifications',
     STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncNotifyHub https://hub.example/h ping',
                           'ResourceSyncNotifyHub https://hub2.example/h'),
     "1 ResourceSyncNotifyHub https://hub.example/h (set ds, FILE): $nohub"],
    ['ResourceSyncNotifyHub in the section of a set with ResourceSyncNotify off over on at '
     . 'server level',
     STATE_CONF . "ResourceSyncNotify on\nResourceSyncHub on\n"
     . set_conf('ds', 'www/data', 'ResourceSyncNotify off', 'ResourceSyncNotifyHub https://hub.example/h'),
     "1 ResourceSyncNotifyHub https://hub.example/h (set ds, FILE): $nohub"],
    ['ResourceSyncNotifyHub in the section of a virtual host\'s set without notifications',
     STATE_CONF . "<VirtualHost 127.0.0.1:\@PORT\@>\n"
     . set_conf('vs', 'www/data', 'ResourceSyncNotifyHub http://hub.example/v') . "</VirtualHost>\n",
     "1 ResourceSyncNotifyHub http://hub.example/v (set vs, FILE): $nohub"],
    ['ResourceSyncNotifyHub in a set\'s section, ResourceSyncNotify on at server level: accepted',
     STATE_CONF . "ResourceSyncNotify on\n"
     . set_conf('ds', 'www/data', 'ResourceSyncNotifyHub https://hub.example/h'),
     '0 Syntax OK'],
    ['ResourceSyncNotifyHub at server level, a set without notifications: accepted',
     STATE_CONF . "ResourceSyncNotifyHub https://hub.example/h\n" . set_conf('ds', 'www/data'),
     '0 Syntax OK'],
);
for my $c (@hubs) {
    my ($label, $conf, $want) = @$c;
    my ($rc, $msg) = configtest($conf);
    is("$rc $msg", $want, $label);
}

# ------------------------------- the examples of the link directives
# Each passes `httpd -t` as written, its /srv/www being this server's www.
for my $e (@examples) {
    my ($name, $block) = @$e;
    (my $conf = $block) =~ s{/srv/www}{\@DIR\@/www}g;
    my ($rc, $msg) = configtest(STATE_CONF . $conf);
    is("$rc $msg", '0 Syntax OK', "the example of $name in docs/directives.md passes httpd -t")
        or diag $conf;
}

# ----------------------- a real start, and restarts changing the link rules
# A valid configuration with both directives starts.  The rules are not part
# of the configuration fingerprint: a restart that adds, changes, reorders or
# removes them decides no file again (the startup scan writes no row) and
# keeps the fingerprint in the open Change List's ETag.
my $live = private_server(conf => STATE_CONF . set_conf('ln', 'www/data'));
$live->populate(files => { 'www/data/records/1.pdf' => "%PDF-1.4 one\n",
                           'www/data/meta/1.xml' => "<record/>\n" });
# The rows written by the first full scan after log offset $mark, or undef.
sub rows_written {
    my ($mark) = @_;
    my $line = wait_for(sub {
        substr($live->log_text, $mark) =~ /(set ln: scanned \d+ files .*? rows written)/ ? $1 : undef },
        60);
    return $line && $line =~ /(\d+) rows written/ ? $1 : undef;
}
# The configuration fingerprint in the open Change List's ETag
# ("o<id>-<first>-<last>-<from>-<fingerprint>", then "-m<mirrors' digest>"
# for a set with mirrors).
sub etag_fingerprint {
    my $ix = wait_for(sub { my $i = cl_index('ln', $live->base); $i && @{ $i->{lists} } ? $i : undef },
                      30) or return 'no Change List Index';
    my $etag = get($ix->{lists}[-1]{loc})->header('ETag') // '';
    return $etag =~ /^"o(?:[0-9a-f]+-){4}([0-9a-f]{12})(?:-m[0-9a-f]{12})?"$/ ? $1 : "ETag $etag";
}
my ($fp0, $first);
for my $i (0 .. $#live) {
    my ($label, $directives) = @{ $live[$i] };
    $live->stop if $i;
    $live->write_conf(STATE_CONF . set_conf('ln', 'www/data', @$directives));
    my $mark = length $live->log_text;
    $live->start_ok("starts $label");
    my $rows = rows_written($mark);
    if (!$i) {
        is($rows, 2, 'the first scan writes the rows of the two files');
        $fp0 = etag_fingerprint();
        next;
    }
    is($rows, 0, "$label: the startup scan decides no file again (0 rows written)");
    is(etag_fingerprint(), $fp0, "$label: the open Change List's ETag keeps the configuration "
       . 'fingerprint');
}
$live->stop;
my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ } split /\n/, $live->log_text;
is_deeply(\@bad, [], 'no module warnings or errors logged');
