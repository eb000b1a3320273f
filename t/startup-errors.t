# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# Bad configuration stops startup with a message naming the directive and
# the value; the minimal configuration starts.  Private servers only.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use IO::Socket::INET ();
use RSTest qw(get cap_url list_entries private_server set_conf STATE_CONF wait_for wait_ok);

umask 022;


# name => [configuration, regex the output or the error log must match on
#          one line (directive and offending value), optional setup sub]
my @cases = (
    ['ResourceSyncMaxEntries 0', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncMaxEntries 0'),
     qr/ResourceSyncMaxEntries\b.*'0'/],
    ['ResourceSyncMaxEntries 50001', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncMaxEntries 50001'),
     qr/ResourceSyncMaxEntries\b.*'50001'/],
    # A Change List Index of one entry could name no closed list.
    ['ResourceSyncMaxEntries 1', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncMaxEntries 1'),
     qr/ResourceSyncMaxEntries: '1' is not a number from 2 to 50000/],
    ['ResourceSyncMaxEntries abc', STATE_CONF . "ResourceSyncMaxEntries abc\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncMaxEntries\b.*'abc'/],
    ['ResourceSyncRescanInterval 0', STATE_CONF . "ResourceSyncRescanInterval 0\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncRescanInterval\b.*'0'/],
    ['ResourceSyncRescanInterval 86401', STATE_CONF . "ResourceSyncRescanInterval 86401\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncRescanInterval\b.*'86401'/],
    ['ResourceSyncLargeFileSize 0', STATE_CONF . "ResourceSyncLargeFileSize 0\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncLargeFileSize: '0' is not 'off' nor a number of MiB/],
    ['ResourceSyncLargeFileSize 64M', STATE_CONF . "ResourceSyncLargeFileSize 64M\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncLargeFileSize: '64M' is not/],
    ['ResourceSyncVerifyInterval 0', STATE_CONF . "ResourceSyncVerifyInterval 0\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncVerifyInterval: '0' is not 'off' nor a duration/],
    ['ResourceSyncVerifyInterval soon', STATE_CONF . "ResourceSyncVerifyInterval soon\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncVerifyInterval: 'soon' is not/],
    ['ResourceSyncRecentChanges 15', STATE_CONF . "ResourceSyncRecentChanges 15\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncRecentChanges\b.*'15'/],
    ['ResourceSyncRecentChanges 1e6', STATE_CONF . "ResourceSyncRecentChanges 1e6\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncRecentChanges\b.*'1e6'/],
    ['ResourceSyncRecentChanges in a virtual host', STATE_CONF
        . "<VirtualHost 127.0.0.1:\@PORT\@>\n    ResourceSyncRecentChanges 100\n</VirtualHost>\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncRecentChanges\b.*(not allowed|cannot occur)/],
    ['ResourceSyncStore mysql', STATE_CONF . "ResourceSyncStore mysql\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncStore: 'mysql' is not sqlite or pgsql$/],
    ['ResourceSyncStore pgsql without a connection string', STATE_CONF . "ResourceSyncStore pgsql\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncStore pgsql: needs a connection string \(e\.g\. ResourceSyncStore pgsql "host=db\.example\.org dbname=rs user=rs"\)$/],
    ['ResourceSyncStore sqlite with a connection string', STATE_CONF
        . qq(ResourceSyncStore sqlite "dbname=rs"\n) . set_conf('ds', 'www/data'),
     qr/ResourceSyncStore sqlite: takes no connection string \(the store is state\.db in ResourceSyncStateDir\)$/],
    ['ResourceSyncStore in a virtual host', STATE_CONF
        . qq(<VirtualHost 127.0.0.1:\@PORT\@>\n    ResourceSyncStore sqlite\n</VirtualHost>\n)
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncStore cannot occur within <VirtualHost> section$/],
    ['ResourceSyncNodeName with a space', STATE_CONF . qq(ResourceSyncNodeName "web 1"\n)
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncNodeName: 'web 1' is not a name of 1 to 64 letters, digits, '-', '\.', '_' or ':'$/],
    ['ResourceSyncFailover 1s', STATE_CONF . "ResourceSyncFailover 1s\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncFailover: '1s' is not a duration from 2s to 1h \(e\.g\. 10, 30s, 2m\)$/],
    ['ResourceSyncFailover 2h', STATE_CONF . "ResourceSyncFailover 2h\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncFailover: '2h' is not a duration from 2s to 1h/],
    ['ResourceSyncFailover twice', STATE_CONF . "ResourceSyncFailover 10\nResourceSyncFailover 20\n"
        . set_conf('ds', 'www/data'), qr/ResourceSyncFailover 20: already set at \S+:\d+$/],
    ['ResourceSyncFailover in a virtual host', STATE_CONF
        . qq(<VirtualHost 127.0.0.1:\@PORT\@>\n    ResourceSyncFailover 10\n</VirtualHost>\n)
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncFailover cannot occur within <VirtualHost> section$/],
    ['ResourceSyncMassDeletion 100%', STATE_CONF . "ResourceSyncMassDeletion 100%\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncMassDeletion: '100%' is not off or a share from 1% to 99%/],
    ['ResourceSyncMassDeletion 50', STATE_CONF . "ResourceSyncMassDeletion 50\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncMassDeletion: '50' is not off or a share/],
    ['ResourceSyncMassDeletion 50% 0', STATE_CONF . "ResourceSyncMassDeletion 50% 0\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncMassDeletion: '0' is not a number of files from 1 to 1000000000/],
    ['ResourceSyncMassDeletion off 10', STATE_CONF . "ResourceSyncMassDeletion off 10\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncMassDeletion: '10' after off/],
    ['ResourceSyncMassDeletion twice', STATE_CONF . "ResourceSyncMassDeletion off\nResourceSyncMassDeletion 20%\n"
        . set_conf('ds', 'www/data'), qr/ResourceSyncMassDeletion: given twice/],
    ['ResourceSyncPrefix without leading slash', STATE_CONF . "ResourceSyncPrefix rsync\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncPrefix\b.*'rsync'/],
    ['ResourceSyncBaseURL not-a-url', STATE_CONF . "ResourceSyncBaseURL not-a-url\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncBaseURL\b.*'not-a-url'/],
    ['ResourceSyncDescribedBy relative (server)', STATE_CONF . "ResourceSyncDescribedBy about.html\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncDescribedBy\b.*'about\.html'/],
    ['ResourceSyncDescribedBy relative (set)', STATE_CONF
        . set_conf('ds', 'www/data', 'ResourceSyncDescribedBy /about/set.html'),
     qr{ResourceSyncDescribedBy\b.*'/about/set\.html'}],
    ['ResourceSyncHash sha-3', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncHash sha-256 sha-3'),
     qr/ResourceSyncHash\b.*'sha-3'/],
    ['ResourceSyncHash none md5', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncHash none md5'),
     qr/ResourceSyncHash\b.*'none'.*'md5'|ResourceSyncHash\b.*'md5'.*'none'/],
    ['ResourceSyncExclude unterminated [', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncExclude "[abc"'),
     qr/ResourceSyncExclude\b.*'\[abc'/],
    ['duplicate set names', STATE_CONF . set_conf('twin', 'www/a') . set_conf('twin', 'www/b'),
     qr/ResourceSyncSet\b.*duplicate.*'twin'/],
    ['overlapping sets (nested directories)', STATE_CONF . set_conf('outer', 'www/data')
        . set_conf('inner', 'www/data/sub'),
     qr{ResourceSyncSet inner\b.*'[^']*/www/data/sub'.*overlaps.*'outer'}],
    ['ResourceSyncSet in <Location>', STATE_CONF . qq(<Location "/data">\n    ResourceSyncSet ds\n</Location>\n),
     qr/ResourceSyncSet\b.*<Location/],
    ['ResourceSyncSet at server level', STATE_CONF . "ResourceSyncSet ds\n",
     qr/ResourceSyncSet\b.*(not allowed here|<Directory)/],
    ['invalid set name', STATE_CONF . set_conf('bad/name', 'www/data'),
     qr{ResourceSyncSet\b.*'bad/name'}],
    ['set name starting with a dot', STATE_CONF . set_conf('.hidden', 'www/data'),
     qr{ResourceSyncSet\b.*'\.hidden'}],
    ['missing ResourceSyncStateDir', set_conf('ds', 'www/data'),
     qr/ResourceSyncStateDir\b.*(not set|required)/],
    # ap_server_root_relative gives NULL for a path APR rejects (longer
    # than APR_PATH_MAX): an error, not a crash while reading the file.
    ['state directory path too long', qq(ResourceSyncStateDir "\@DIR\@/) . ('x' x 5000) . qq("\n)
        . set_conf('ds', 'www/data'),
     qr{ResourceSyncStateDir: invalid path '[^']*/x{5000}'}],
    ['state directory that cannot be created', qq(ResourceSyncStateDir "\@DIR\@/afile/state"\n)
        . set_conf('ds', 'www/data'),
     qr{ResourceSyncStateDir\b.*'[^']*/afile/state'},
     sub { my $d = shift; open my $fh, '>', "$d/afile" or die $!; close $fh }],
    ['state directory inside DocumentRoot', qq(ResourceSyncStateDir "\@DIR\@/www/state"\n)
        . set_conf('ds', 'www/data'),
     qr{ResourceSyncStateDir\b.*'[^']*/www/state'.*DocumentRoot}],
    ['state directory inside a set outside DocumentRoot', qq(ResourceSyncStateDir "\@DIR\@/ext/state"\n)
        . qq(Alias /ext "\@DIR\@/ext"\n)
        . qq(<Directory "\@DIR\@/ext">\n    Require all granted\n    ResourceSyncSet ext /ext\n</Directory>\n),
     qr{ResourceSyncStateDir\b.*'[^']*/ext/state'.*set 'ext'}],
    ['set directory not below DocumentRoot without url-path', STATE_CONF . set_conf('far', 'elsewhere'),
     qr{ResourceSyncSet far\b.*'[^']*/elsewhere'.*not below DocumentRoot}],
    ['set option in a <Directory> without ResourceSyncSet', STATE_CONF . set_conf('ds', 'www/data')
        . qq(<Directory "\@DIR\@/www">\n    ResourceSyncHash sha-256\n</Directory>\n),
     qr{ResourceSyncHash \(.*httpd\.conf:\d+\).*without ResourceSyncSet}],
    ['set option in <Location>', STATE_CONF . set_conf('ds', 'www/data')
        . qq(<Location "/data">\n    ResourceSyncExclude *.tmp\n</Location>\n),
     qr{ResourceSyncExclude\b.*<Location}],
    ['ResourceSyncStateDir given twice', STATE_CONF . qq(ResourceSyncStateDir "\@DIR\@/state2"\n)
        . set_conf('ds', 'www/data'),
     qr{ResourceSyncStateDir '[^']*/state2': already set to '[^']*/state' at [^ ]*/httpd\.conf:\d+}],
    ['ResourceSyncAccessCheck sometimes', STATE_CONF . "ResourceSyncAccessCheck sometimes\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncAccessCheck: 'sometimes' is not auto or per-file/],
    ['ResourceSyncIncludeDotfiles maybe', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncIncludeDotfiles maybe'),
     qr/ResourceSyncIncludeDotfiles: 'maybe' is not On or Off/],
    ['ResourceSyncChangeListPeriod 5x', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncChangeListPeriod 5x'),
     qr/ResourceSyncChangeListPeriod: '5x' is not a duration/],
    ['ResourceSyncJournalRetention forever', STATE_CONF . "ResourceSyncJournalRetention forever\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncJournalRetention: 'forever' is not a duration/],
    ['ResourceSyncResourceDump sometimes', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncResourceDump sometimes'),
     qr/ResourceSyncResourceDump: 'sometimes' is not a duration \(e\.g\. 3600, 90m, 12h, 1d\) or off/],
    ['ResourceSyncDumpMaxEntries 0', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncDumpMaxEntries 0'),
     qr/ResourceSyncDumpMaxEntries: '0' is not a number from 1 to 50000/],
    # A package's manifest is a document: 50,000 entries at most, and no
    # more than the set's ResourceSyncMaxEntries.
    ['ResourceSyncDumpMaxEntries 50001', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncDumpMaxEntries 50001'),
     qr/ResourceSyncDumpMaxEntries: '50001' is not a number from 1 to 50000/],
    ['ResourceSyncDumpMaxEntries above ResourceSyncMaxEntries',
     STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncMaxEntries 50', 'ResourceSyncDumpMaxEntries 100'),
     qr/ResourceSyncDumpMaxEntries 100 \(set ds, .*\): more than ResourceSyncMaxEntries 50, the entries of a document/],
    ['ResourceSyncDumpMaxEntries many', STATE_CONF . "ResourceSyncDumpMaxEntries many\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncDumpMaxEntries: 'many' is not a number/],
    ['ResourceSyncDumpMaxSize 1G', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncDumpMaxSize 1G'),
     qr/ResourceSyncDumpMaxSize: '1G' is not a number of MiB from 1 to 1048576/],
    ['ResourceSyncDumpMaxSize 0', STATE_CONF . "ResourceSyncDumpMaxSize 0\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncDumpMaxSize: '0' is not a number of MiB/],
    ['ResourceSyncDumpGrace 0', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncDumpGrace 0'),
     qr/ResourceSyncDumpGrace: '0' is not a duration \(e\.g\. 3600, 90m, 12h, 1d\)/],
    ['ResourceSyncDumpGrace later', STATE_CONF . "ResourceSyncDumpGrace later\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncDumpGrace: 'later' is not a duration/],
    ['ResourceSyncChangeDump daily', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncChangeDump daily'),
     qr/ResourceSyncChangeDump: 'daily' is not On or Off/],
    ['ResourceSyncChangeDump with ResourceSyncHash none', STATE_CONF
        . set_conf('ds', 'www/data', 'ResourceSyncHash none', 'ResourceSyncChangeDump on'),
     qr/ResourceSyncChangeDump on \(set ds, [^)]*httpd\.conf:\d+\): needs a digest, but the set has ResourceSyncHash none/],
    ['ResourceSyncNotify yes', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncNotify yes'),
     qr/ResourceSyncNotify: 'yes' is not On or Off/],
    ['ResourceSyncNotify on without a hub', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncNotify on'),
     qr/ResourceSyncNotify on \(set ds, [^)]*httpd\.conf:\d+\): needs a hub, but neither ResourceSyncHub on nor ResourceSyncNotifyHub names one/],
    ['ResourceSyncNotifyHub in the section of a set without ResourceSyncNotify on', STATE_CONF
        . set_conf('ds', 'www/data', 'ResourceSyncNotifyHub http://127.0.0.1:9/hub'),
     qr{mod_resourcesync: ResourceSyncNotifyHub http://127\.0\.0\.1:9/hub \(set ds, [^)]*httpd\.conf:\d+\): the set has no ResourceSyncNotify on, so nothing is ever published to this hub$}],
    ['ResourceSyncNotifyDelay 2h', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncNotifyDelay 2h'),
     qr/ResourceSyncNotifyDelay: '2h' is not a delay from 0 to 1h \(e\.g\. 100ms, 2s\)/],
    ['ResourceSyncNotifyDelay 1.5ms', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncNotifyDelay 1.5ms'),
     qr/ResourceSyncNotifyDelay: '1\.5ms' is not a delay/],
    ['ResourceSyncSpecVersion 2.0', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncSpecVersion 2.0'),
     qr/ResourceSyncSpecVersion: '2\.0' is not 1\.1 or 1\.0/],
    ['ResourceSyncSet with an invalid URL-path', STATE_CONF
        . qq(<Directory "\@DIR\@/ext">\n    ResourceSyncSet ext "/with space"\n</Directory>\n),
     qr{ResourceSyncSet ext: invalid URL-path '/with space'}],
    ['ResourceSyncHub maybe', STATE_CONF . "ResourceSyncHub maybe\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncHub: 'maybe' is not on or off/],
    ['ResourceSyncHub in a directory', STATE_CONF . set_conf('ds', 'www/data', 'ResourceSyncHub on'),
     qr/ResourceSyncHub\b.*(not allowed|cannot occur)/],
    ['ResourceSyncHubLease soon 1d', STATE_CONF . "ResourceSyncHubLease soon 1d\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubLease: 'soon' is not a duration/],
    ['ResourceSyncHubLease 2d 1d', STATE_CONF . "ResourceSyncHubLease 2d 1d\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubLease: minimum '2d' is longer than maximum '1d'/],
    ['ResourceSyncHubLease 300', STATE_CONF . "ResourceSyncHubLease 300\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubLease takes two arguments/],
    ['ResourceSyncHubAllowCallback 10.0.0.0/33', STATE_CONF
        . "ResourceSyncHubAllowCallback 127.0.0.1 10.0.0.0/33\n" . set_conf('ds', 'www/data'),
     qr{ResourceSyncHubAllowCallback: '10\.0\.0\.0/33' is not a host name, an IP address or a CIDR block}],
    ['ResourceSyncHubAllowCallback host_name', STATE_CONF
        . "ResourceSyncHubAllowCallback host_name\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubAllowCallback: 'host_name' is not a host name/],
    ['ResourceSyncHubMaxBacklog 0', STATE_CONF . "ResourceSyncHubMaxBacklog 0\n" . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubMaxBacklog: '0' is not a number of notifications from 1 to 10000000/],
    ['ResourceSyncHubMaxSubscriptions lots', STATE_CONF . "ResourceSyncHubMaxSubscriptions lots\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubMaxSubscriptions: 'lots' is not a number of subscriptions/],
    ['ResourceSyncHubMaxSubscriptions 10 20', STATE_CONF . "ResourceSyncHubMaxSubscriptions 10 20\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubMaxSubscriptions: per-address '20' is larger than total '10'/],
    ['ResourceSyncHubMaxSubscriptions 10 5 11', STATE_CONF . "ResourceSyncHubMaxSubscriptions 10 5 11
"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubMaxSubscriptions: per-client '11' is larger than total '10'/],
    ['ResourceSyncHubSpoolLimit in a virtual host', STATE_CONF
        . "<VirtualHost 127.0.0.1:\@PORT\@>\n    ResourceSyncHubSpoolLimit 10\n</VirtualHost>\n"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubSpoolLimit cannot occur within <VirtualHost> section/],
    ['ResourceSyncHubSpoolLimit 10 8', STATE_CONF . "ResourceSyncHubSpoolLimit 10 8
"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubSpoolLimit: '8' is not a number of KiB from 16 to 1048576/],
    ['ResourceSyncHubRequestRate 10 soon', STATE_CONF . "ResourceSyncHubRequestRate 10 soon
"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubRequestRate: 'soon' is not a duration/],
    ['ResourceSyncHubVerifyTimeout 20m', STATE_CONF . "ResourceSyncHubVerifyTimeout 20m
"
        . set_conf('ds', 'www/data'),
     qr/ResourceSyncHubVerifyTimeout: '20m' is not a duration from 100ms to 10m/],
    ["set URL-path inside ResourceSyncPrefix", STATE_CONF . "ResourceSyncPrefix /data\n"
        . set_conf('ds', 'www/data'),
     qr{ResourceSyncSet ds\b.*'/data/'.*ResourceSyncPrefix '/data'}],
    # The link directives (rs:ln relations): each refused value, the whole
    # message (the line after httpd's "Syntax error on line N").
    link_case('ResourceSyncLink with an unknown relation', 'ResourceSyncLink describes-not ^a$ b',
              'ResourceSyncLink: unknown relation "describes-not" (an IANA-registered relation '
              . 'name or an absolute URI)'),
    link_case('ResourceSyncLink rel="index"', 'ResourceSyncLink index ^a$ b',
              'ResourceSyncLink: relation "index" means something else in ResourceSync and may '
              . "not be used on a resource's entry"),
    link_case('ResourceSyncLink with a bad regular expression',
              'ResourceSyncLink describedby ^records/([0-9]+$ meta/$1.xml',
              q{ResourceSyncLink: '^records/([0-9]+$' is not a valid regular expression }
              . '(bad argument at offset 17)'),
    link_case('ResourceSyncLink with $3 past the 2 groups',
              'ResourceSyncLink alternate ^(docs)/(.+)\\.html$ $1/$3.pdf',
              'ResourceSyncLink: target "$1/$3.pdf": $3 but the pattern has 2 groups'),
    link_case('ResourceSyncLink with more than 9 groups',
              'ResourceSyncLink related ^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)$ x/$1',
              'ResourceSyncLink: pattern "^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)$": at most 9 groups can '
              . 'be used'),
    link_case('ResourceSyncLink pri=0', 'ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml pri=0',
              "ResourceSyncLink pri: '0' is not a number from 1 to 999999"),
    link_case('ResourceSyncLink pri=1000000',
              'ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml pri=1000000',
              "ResourceSyncLink pri: '1000000' is not a number from 1 to 999999"),
    link_case('ResourceSyncLink pri=first', 'ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml pri=first',
              "ResourceSyncLink pri: 'first' is not a number from 1 to 999999"),
    link_case('ResourceSyncLink with an unknown option',
              'ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml when=listed',
              "ResourceSyncLink: unknown option 'when=listed' (type=MEDIA, pri=N or if-exists)"),
    link_case('ResourceSyncLink with an option given twice',
              'ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml pri=1 pri=2',
              "ResourceSyncLink: 'pri=2' repeats an option given before"),
    link_case('ResourceSyncLink if-exists on an absolute URL',
              'ResourceSyncLink describedby ^(.+)\\.pdf$ https://meta.example.org/$1 if-exists',
              'ResourceSyncLink: if-exists applies to targets that are files of the set, not to '
              . '"https://meta.example.org/$1"'),
    link_case('ResourceSyncLink if-exists on a URL-path',
              'ResourceSyncLink describedby ^(.+)\\.pdf$ /meta/$1.xml if-exists',
              'ResourceSyncLink: if-exists applies to targets that are files of the set, not to '
              . '"/meta/$1.xml"'),
    link_case('ResourceSyncLink type= on a file of the set',
              'ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml type=application/xml',
              'ResourceSyncLink: type= applies to targets that are not files of the set, not to '
              . q{"$1.xml" (a file's link carries its own type)}),
    link_case('ResourceSyncLink type= that is not a media type',
              'ResourceSyncLink collection ^ https://c.example.org/ type=html',
              'ResourceSyncLink: type "html" is not a media type (type/subtype)'),
    link_case('ResourceSyncLink without a target', 'ResourceSyncLink describedby ^a$',
              'ResourceSyncLink takes REL PATTERN TARGET [type=MEDIA] [pri=N] [if-exists]'),
    link_case('ResourceSyncMirror with a prefix that is not an absolute URL',
              'ResourceSyncMirror mirror.example.org/data',
              'ResourceSyncMirror: mirror "mirror.example.org/data" is not an absolute URL without '
              . 'query or fragment (printable ASCII, percent-encoded)'),
    link_case('ResourceSyncMirror with a query', 'ResourceSyncMirror https://m.example.org/get?p=',
              'ResourceSyncMirror: mirror "https://m.example.org/get?p=" is not an absolute URL '
              . 'without query or fragment (printable ASCII, percent-encoded)'),
    link_case('ResourceSyncMirror pri=0', 'ResourceSyncMirror https://m.example.org/ pri=0',
              "ResourceSyncMirror pri: '0' is not a number from 1 to 999999"),
    link_case('ResourceSyncMirror if-exists', 'ResourceSyncMirror https://m.example.org/ if-exists',
              "ResourceSyncMirror: unknown option 'if-exists' (pri=N)"),
    ['ResourceSyncLink at server level', STATE_CONF . "ResourceSyncLink describedby ^a\$ b\n"
        . set_conf('ds', 'www/data'),
     qr/^\QResourceSyncLink is only allowed in the <Directory> section that holds ResourceSyncSet\E$/],
    ['ResourceSyncMirror in a <Directory> without ResourceSyncSet', STATE_CONF . set_conf('ds', 'www/data')
        . qq(<Directory "\@DIR\@/www">\n    ResourceSyncMirror https://m.example.org/\n</Directory>\n),
     qr{mod_resourcesync: ResourceSyncMirror \([^)]*httpd\.conf:\d+\) is in a <Directory> section without ResourceSyncSet, where it has no effect: put it in the section that holds ResourceSyncSet$}],
);

# A case of a link directive in the set's section, refused with exactly
# message.
sub link_case {
    my ($name, $directive, $message) = @_;
    return [$name, STATE_CONF . set_conf('ds', 'www/data', $directive), qr/^\Q$message\E$/];
}

plan tests => @cases + 23;

# Processes started from this private server's configuration.
sub running {
    my ($srv) = @_;
    my $conf = $srv->dir . '/httpd.conf';
    my @p;
    for my $cl (glob '/proc/[0-9]*/cmdline') {
        open my $fh, '<', $cl or next;
        my $c = <$fh> // next;
        push @p, $cl =~ m{/proc/(\d+)/} if index($c, $conf) >= 0;
    }
    return @p;
}

sub listening {
    my ($srv) = @_;
    return IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $srv->port, Timeout => 1)
        ? 1 : 0;
}

for my $c (@cases) {
    my ($name, $conf, $re, $setup) = @$c;
    my $srv = private_server(conf => $conf);
    make_path($srv->dir . '/www/data', $srv->dir . '/elsewhere', $srv->dir . '/ext');
    $setup->($srv->dir) if $setup;
    my ($rc, $out) = $srv->start;
    my $text = $out . "\n" . $srv->log_text;
    my @left = running($srv);
    my $line = (grep { $_ =~ $re } split /\n/, $text)[0];
    my $ok = $rc != 0 && defined $line && !@left && !listening($srv) && !$srv->pid;
    ok($ok, "startup error: $name")
        or diag("exit $rc; running: @left; output and log:\n$text");
    note("$name: $line") if defined $line;
    if (@left) {      # leave nothing behind, whatever happened
        kill 'TERM', @left;
    }
}

# --------------------------------------------- the minimal configuration
# Exactly what the issue shows (LoadModule is part of every private
# configuration).
{
    my $srv = private_server(conf => <<'CONF');
ResourceSyncStateDir "@DIR@/state"
<Directory "@DIR@/www/data">
    ResourceSyncSet dataset1
</Directory>
CONF
    my $d = $srv->dir;
    $srv->populate(files => { 'www/data/one.txt' => "one\n", 'www/data/sub/two.txt' => "two 2\n",
                              'www/outside.txt' => "not in the set\n" });
    my ($rc, $out) = $srv->start;
    ok($rc == 0 && running($srv) && listening($srv),
       'minimal configuration: httpd -k start succeeds and the server runs') or diag $out;
    my $cap = get(cap_url('dataset1', $srv->base));
    is($cap->code, 200, 'minimal configuration: /resourcesync/dataset1/capabilitylist.xml is served');
    like($cap->content, qr{<loc>\Q@{[$srv->base]}\E/resourcesync/dataset1/resourcelist\.xml</loc>},
         'minimal configuration: the capability list points at the resource list');
    my @e = eval { list_entries('dataset1', $srv->base) };
    is_deeply([sort map { $_->{loc} } @e],
              [$srv->base . '/data/one.txt', $srv->base . '/data/sub/two.txt'],
              'minimal configuration: the resource list lists the /data/... files')
        or diag($@, explain \@e);
    ok(-d "$d/state" && (stat "$d/state")[4] == ($> == 0 ? scalar getpwnam('nobody') : $>),
       'minimal configuration: the state directory is created for the run user');
    unlike($srv->log_text, qr/\[resourcesync:(warn|error|crit|alert|emerg)\]/,
           'minimal configuration: no module warnings or errors logged');
    $srv->stop;
    ok(!running($srv) && !listening($srv), 'minimal configuration: stops cleanly');
}

# ------------------------------------ hubs that nothing is published to
# Server-level hubs are defaults, inherited by virtual hosts: a server
# with sets none of which publishes is warned about once per start, by its
# base URL, for each such setting; a server whose sets publish and a
# server without sets are not named.
{
    my ($pa, $pb, $pc) = map { RSTest::free_port() } 1 .. 3;
    my $vhost = sub {
        my ($port, $more) = @_;
        return "Listen 127.0.0.1:$port\n<VirtualHost 127.0.0.1:$port>\n    ServerName 127.0.0.1:$port\n"
            . qq(    DocumentRoot "\@DIR\@/v$port"\n$more</VirtualHost>\n);
    };
    my $srv = private_server(conf => STATE_CONF . "ResourceSyncHub on\n"
        . "ResourceSyncNotifyHub http://127.0.0.1:9/hub\n" . set_conf('ds', 'www/data')
        . $vhost->($pa, set_conf('va', "v$pa/d", 'ResourceSyncNotify on'))
        . $vhost->($pb, "ResourceSyncHub off\n" . set_conf('vb', "v$pb/d"))
        . $vhost->($pc, ''));
    $srv->populate(dirs => ['www/data', "v$pa/d", "v$pb/d", "v$pc"]);
    my ($rc, $out) = $srv->start;
    my $logged = $rc == 0 && wait_for(sub { $srv->log_text =~ /resuming normal operations/ }, 20);
    my @warned = sort map { /\[resourcesync:warn\].* mod_resourcesync: (server .*)$/ ? $1 : () }
                 split /\n/, $srv->log_text;
    my ($main, $vb) = ($srv->base, "http://127.0.0.1:$pb");
    my $none = 'but none of its sets has ResourceSyncNotify on';
    ok($logged, 'a server with hubs none of its sets publishes to starts') or diag("exit $rc: $out");
    is_deeply(\@warned,
              [sort "server $vb: ResourceSyncNotifyHub http://127.0.0.1:9/hub at server level, $none, so "
               . 'nothing is ever published to it',
               "server $main: ResourceSyncHub on, $none, so its hub never delivers anything",
               "server $main: ResourceSyncNotifyHub http://127.0.0.1:9/hub at server level, $none, "
               . 'so nothing is ever published to it'],
              'warned once per setting, naming each server whose sets publish nothing')
        or diag($srv->log_text);
    $srv->stop;
}

# ------------------------------------------------ apachectl -t reports it
{
    my $srv = private_server(conf => set_conf('ds', 'www/data'));    # no state dir
    make_path($srv->dir . '/www/data');
    my $d = $srv->dir;
    my $bin = RSTest::Server::httpd_bin();
    my $out = `$bin -d $d -f $d/httpd.conf -t 2>&1`;
    ok($? != 0 && $out =~ /ResourceSyncStateDir\b.*(not set|required)/,
       'httpd -t (configuration test) reports a missing ResourceSyncStateDir')
        or diag $out;
}

# ------------------------------------- a URL-path that is not the directory
# A second argument that maps elsewhere cannot be caught while reading the
# configuration (Alias and friends decide); the watcher says so clearly.
{
    my $srv = private_server(conf => STATE_CONF . qq(Alias /elsewhere "\@DIR\@/other"\n)
        . qq(<Directory "\@DIR\@/other">\n    Require all granted\n</Directory>\n)
        . qq(<Directory "\@DIR\@/ext">\n    Require all granted\n    ResourceSyncSet wrong /elsewhere\n</Directory>\n));
    make_path($srv->dir . '/ext', $srv->dir . '/other');
    my ($rc, $out) = $srv->start;
    my $line = RSTest::wait_for(sub {
        (grep { /\[resourcesync:error\].*set wrong: its URL-path \/elsewhere\/ maps to/ }
              split /\n/, $srv->log_text)[0] }, 20);
    ok($rc == 0 && $line, 'a URL-path that maps to another directory is logged as an error')
        or diag($out, $srv->log_text);
    $srv->stop;
}

# ------------------------------ a watcher that cannot start is not respawned
# (here the state database is a directory): one clear error, no loop.
{
    my $srv = private_server(conf => STATE_CONF . set_conf('ds', 'www/data'));
    make_path($srv->dir . '/www/data', $srv->dir . '/state/state.db');
    chmod 0777, $srv->dir . '/state';
    my ($rc, $out) = $srv->start;
    my $gave_up = RSTest::wait_for(sub {
        $srv->log_text =~ /watcher \(pid \d+\) could not start; not restarting it/ }, 20);
    sleep 3;
    my $starts = () = $srv->log_text =~ /cannot open the state store/g;
    ok($rc == 0 && $gave_up && $starts == 1,
       'a watcher that cannot open the store exits once and is not respawned')
        or diag($out, $srv->log_text);
    $srv->stop;
}

# --------------------- apachectl -t checks that the state directory can be used
# It looks without creating anything: a parent that is a file, or (as root)
# an immutable parent, is reported; a directory that can be created is not
# created by the test.
sub configtest {
    my ($srv) = @_;
    my $d = $srv->dir;
    my $bin = RSTest::Server::httpd_bin();
    my $out = `$bin -d $d -f $d/httpd.conf -t 2>&1`;
    return ($? >> 8, $out);
}
{
    my $srv = private_server(conf => qq(ResourceSyncStateDir "\@DIR\@/afile/state"\n)
                                     . set_conf('ds', 'www/data'));
    make_path($srv->dir . '/www/data');
    open my $fh, '>', $srv->dir . '/afile' or die $!;
    close $fh;
    my ($rc, $out) = configtest($srv);
    ok($rc != 0 && $out =~ m{ResourceSyncStateDir: cannot create '[^']*/afile/state': '[^']*/afile' is not a directory},
       'httpd -t reports a state directory whose parent is a file') or diag "exit $rc: $out";
}
{
    # A symbolic link at the state directory's name: refused, by the test
    # and by the start (root would give away whatever it points to).
    my $srv = private_server(conf => qq(ResourceSyncStateDir "\@DIR\@/linked"\n)
                                     . set_conf('ds', 'www/data'));
    my $d = $srv->dir;
    make_path("$d/www/data", "$d/target");
    symlink("$d/target", "$d/linked") or die $!;
    my ($rc, $out) = configtest($srv);
    ok($rc != 0 && $out =~ m{ResourceSyncStateDir: '[^']*/linked' is a symbolic link: name the directory itself},
       'httpd -t reports a state directory that is a symbolic link') or diag "exit $rc: $out";
    ($rc, $out) = $srv->start;
    ok($rc != 0 && ($srv->log_text . $out) =~ m{'[^']*/linked' is a symbolic link}
       && (stat "$d/target")[4] == $>,
       'the start refuses it too, and its target keeps its owner') or diag "exit $rc: $out";
}
{
    my $srv = private_server(conf => qq(ResourceSyncStateDir "\@DIR\@/new/state"\n)
                                     . set_conf('ds', 'www/data'));
    make_path($srv->dir . '/www/data');
    my ($rc, $out) = configtest($srv);
    ok($rc == 0 && $out =~ /Syntax OK/ && !-e $srv->dir . '/new',
       'httpd -t accepts a state directory that can be created, and does not create it')
        or diag "exit $rc: $out";
}
SKIP: {
    skip 'chattr +i needs root', 4 unless $> == 0;
    my $srv = private_server(conf => qq(ResourceSyncStateDir "\@DIR\@/locked/state"\n)
                                     . set_conf('ds', 'www/data'));
    my $d = $srv->dir;
    make_path("$d/www/data", "$d/locked");
    system('chattr', '+i', "$d/locked") == 0 or die 'chattr';
    my ($rc, $out) = configtest($srv);
    system('chattr', '-i', "$d/locked");
    ok($rc != 0 && $out =~ m{ResourceSyncStateDir: cannot create '[^']*/locked/state' in '[^']*/locked': Operation not permitted},
       'httpd -t reports a state directory that cannot be created in an immutable parent')
        or diag "exit $rc: $out";

    # A restart that finds the state directory unusable keeps the server
    # up, serving what it holds, and says so once.
    $srv = private_server(conf => STATE_CONF . set_conf('ds', 'www/data'));
    $d = $srv->dir;
    $srv->populate(files => { 'www/data/a.txt' => "a\n" });
    my ($src, $sout) = $srv->start;
    my $before = $src == 0 && eval { list_entries('ds', $srv->base) };
    my $pid = $srv->pid;
    system('chattr', '+i', "$d/state") == 0 or die 'chattr';
    my $log_before = length $srv->log_text;
    $srv->graceful;
    my $restarted = RSTest::wait_for(sub {
        substr($srv->log_text, $log_before) =~ /resuming normal operations/ }, 20);
    my $file = get($srv->base . '/data/a.txt');
    my $list = get($srv->base . '/resourcesync/ds/resourcelist.xml');
    my $after = substr($srv->log_text, $log_before);
    system('chattr', '-i', "$d/state");
    my @lines = grep { /ResourceSyncStateDir: cannot give '[^']*\/state' to user nobody: Operation not permitted; changes are not followed until a restart finds it usable/ }
                split /\n/, $after;
    ok($before && $restarted && kill(0, $pid) && $file->code == 200 && $list->code == 200
       && $list->content =~ m{/data/a\.txt</loc>},
       'graceful restart with an unusable state directory: httpd stays up and serves the list it holds')
        or diag("start $src: $sout; file ", $file->code, ', list ', $list->code, "\n", $after);
    is(scalar @lines, 1, 'graceful restart with an unusable state directory: logged once at error')
        or diag $after;
    unlike($after, qr/Configuration Failed|AH00016|AH00020/, 'graceful restart: no configuration failure');
    $srv->stop;
}

# ----------------------------- a relative ResourceSyncStateDir is said once
{
    my $srv = private_server(conf => qq(ResourceSyncStateDir rstate\n) . set_conf('ds', 'www/data'));
    $srv->populate(files => { 'www/data/a.txt' => "a\n" });
    my ($rc, $out) = $srv->start;
    my $d = $srv->dir;
    # The port answers once the listeners are open, before the daemon's
    # post_config has logged: wait until the server says it is ready.
    wait_ok(sub { $srv->log_text =~ /resuming normal operations/ }, 20,
            'a relative ResourceSyncStateDir: the server says it is ready');
    my @n = grep { m{\[resourcesync:notice\].*ResourceSyncStateDir 'rstate' is relative: using '\Q$d\E/rstate' \(relative to ServerRoot\)} }
            split /\n/, $srv->log_text;
    ok($rc == 0 && -d "$d/rstate" && wait_for(sub { -e "$d/rstate/state.db" }, 20),
       'a relative ResourceSyncStateDir is created below ServerRoot, and the watcher uses it')
        or diag $out;
    is(scalar @n, 1, 'a relative ResourceSyncStateDir is logged once at notice') or diag $srv->log_text;
    $srv->stop;
}
