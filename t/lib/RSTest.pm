# SPDX-License-Identifier: Apache-2.0
package RSTest;
# Helpers shared by the mod_resourcesync tests.
#
# Everything talks HTTP to a real httpd: the Apache::Test server for most
# tests, or a private server (RSTest::private_server) for tests that must
# restart or misconfigure one.
use strict;
use warnings;
use Exporter 'import';
use Apache::Test ();
use Apache::TestRequest ();
use Apache::TestConfig ();
use LWP::UserAgent ();
use HTTP::Request ();
use XML::LibXML ();
use Digest::MD5 ();
use Digest::SHA ();
use File::Basename qw(dirname);
use File::Path qw(make_path remove_tree);
use File::Temp ();
use IO::Socket::INET ();
use POSIX qw(setsid WNOHANG);
use Time::HiRes qw(sleep time);

our @EXPORT_OK = qw(base vhost_base t_dir tree ua get head req doc xpc validate
                    wait_for wait_ok list_entries fetch_list free_port private_server
                    started_server set_conf STATE_CONF STATUS_CONF
                    put put_atomic httpd_pid watcher_pids alive strong_etag
                    sd_url cap_url rl_url iso2epoch changes_of cl_index);

my $NS_SM = 'http://www.sitemaps.org/schemas/sitemap/0.9';
my $NS_RS = 'http://www.openarchives.org/rs/terms/';

sub t_dir { Apache::Test::vars('t_dir') }
sub tree  { t_dir() . '/htdocs/generated' . (@_ ? "/$_[0]" : '') }
sub base  { 'http://' . Apache::TestRequest::hostport() }

# Base URL of the IP-based virtual host (port from conf/rs-module.conf).
sub vhost_base {
    open my $fh, '<', t_dir() . '/conf/rs-module.conf' or die $!;
    while (my $line = <$fh>) {      # not $_: callers may be inside map/for
        return "http://127.0.0.1:$1" if $line =~ /RS_VHOST_PORT (\d+)/;
    }
    die "no RS_VHOST_PORT";
}

sub sd_url  { ($_[0] // base()) . '/.well-known/resourcesync' }
sub cap_url { my ($set, $b, $p) = @_; ($b // base()) . ($p // '/resourcesync') . "/$set/capabilitylist.xml" }
sub rl_url  { my ($set, $b, $p) = @_; ($b // base()) . ($p // '/resourcesync') . "/$set/resourcelist.xml" }

my $UA;
sub ua {
    $UA ||= LWP::UserAgent->new(timeout => 30, max_redirect => 0, keep_alive => 0);
    return $UA;
}

# req(METHOD, URL, [header => value ...]) -> HTTP::Response
sub req {
    my ($method, $url, @h) = @_;
    return ua()->request(HTTP::Request->new($method, $url, [@h]));
}
sub get  { req('GET', @_) }
sub head { req('HEAD', @_) }

# Parse XML into a document; dies on malformed input.
sub doc { XML::LibXML->load_xml(string => $_[0]) }

# XPath context with prefixes sm: (sitemap) and rs:.
sub xpc {
    my $x = XML::LibXML::XPathContext->new($_[0]);
    $x->registerNs(sm => $NS_SM);
    $x->registerNs(rs => $NS_RS);
    return $x;
}

# validate($xml, 'lenient'|'strict'|'1.0') -> undef if valid, else the error
my %SCHEMA;
sub validate {
    my ($xml, $which) = @_;
    my $file = { lenient => 'resourcesync-lenient.xsd', strict => 'resourcesync.xsd',
                 '1.0' => 'resourcesync-1.0.xsd' }->{$which || 'lenient'};
    $SCHEMA{$file} ||= XML::LibXML::Schema->new(location => t_dir() . "/xsd/$file");
    my $ok = eval { $SCHEMA{$file}->validate(doc($xml)); 1 };
    return $ok ? undef : "$@";
}

# wait_for(sub { ... true when done ... }, timeout_seconds) -> last value
# (false when the time ran out).  Its result must be checked where it
# waits: wait_ok does that as a test.
sub wait_for {
    my ($cond, $timeout) = @_;
    my $deadline = time() + ($timeout || 30);
    my $v;
    while (1) {
        $v = $cond->();
        return $v if $v || time() > $deadline;
        sleep 0.2;
    }
}

# wait_ok(sub { ... true when done ... }, timeout_seconds, $what) -> the
# condition's last value.  wait_for as one test named $what: a timeout fails
# here, with a diagnostic saying what was awaited and for how long, instead
# of surfacing later as a misleading failure of a check that read too early.
sub wait_ok {
    my ($cond, $timeout, $what) = @_;
    die "wait_ok: no name for the wait\n" unless defined $what && length $what;
    require Test::More;
    my $t0 = time();
    my $v = wait_for($cond, $timeout);
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::ok($v, $what)
        or Test::More::diag(sprintf('timed out after %.1f s waiting for: %s', time() - $t0, $what));
    return $v;
}

# Entries of one <urlset> document: list of hashes with loc, lastmod,
# length, type, encoding, hash, at (document's), and the doc's root name.
sub _entries {
    my ($xml) = @_;
    my $d = doc($xml);
    my $x = xpc($d);
    my @e;
    for my $u ($x->findnodes('/sm:urlset/sm:url')) {
        my %h = (loc => $x->findvalue('sm:loc', $u), lastmod => $x->findvalue('sm:lastmod', $u));
        my ($md) = $x->findnodes('rs:md', $u);
        if ($md) {
            $h{$_} = $md->getAttribute($_) for qw(length type encoding hash change datetime);
        }
        push @e, \%h;
    }
    return @e;
}

# fetch_list(set, base, prefix) -> { root => 'urlset'|'sitemapindex',
#   at => ..., entries => [...], parts => [urls], docs => [xml...] }
# Follows an index to its parts.  Waits while the list answers 503.
# A 503 (the list not written yet; behind a balancer, a part of a
# generation the answering node does not hold yet) is waited out, the
# whole list read again, for 60 s.
sub fetch_list {
    my ($set, $b, $p) = @_;
    my $url = rl_url($set, $b, $p);
    my ($res, $last);
    wait_for(sub { ($res, $last) = _fetch_list_once($url); $res }, 60)
        or die "$url: $last";
    return $res;
}

# (the list, undef) or (undef, why) when a document answered 503.
sub _fetch_list_once {
    my ($url) = @_;
    my $r = get($url);
    return (undef, "still 503") if $r->code == 503;
    die "$url: " . $r->status_line unless $r->is_success;
    my $d = doc($r->content);
    my $x = xpc($d);
    my %res = (root => $d->documentElement->localname, docs => [$r->content],
               at => $x->findvalue('/*/rs:md/@at'), entries => [], parts => []);
    if ($res{root} eq 'sitemapindex') {
        for my $loc (map { $_->textContent } $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc')) {
            my $pr = get($loc);
            return (undef, "$loc: still 503") if $pr->code == 503;
            die "$loc: " . $pr->status_line unless $pr->is_success;
            push @{$res{parts}}, $loc;
            push @{$res{docs}}, $pr->content;
            push @{$res{entries}}, _entries($pr->content);
        }
    }
    else {
        push @{$res{entries}}, _entries($r->content);
    }
    return (\%res, undef);
}

sub list_entries { @{ fetch_list(@_)->{entries} } }

# changes_of(set, base, prefix) -> the entries (as in fetch_list, with
# change and datetime) of every Change List of the set, oldest first; an
# empty list while the index or a list does not answer 200.
sub changes_of {
    my ($set, $b, $p) = @_;
    my $r = get(($b // base()) . ($p // '/resourcesync') . "/$set/changelist.xml");
    return () unless $r->code == 200;
    my $x = xpc(doc($r->content));
    my @all;
    for my $loc (map { $_->textContent } $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc')) {
        my $lr = get($loc);
        return () unless $lr->code == 200;
        push @all, _entries($lr->content);
    }
    return @all;
}

# cl_index(set, base, prefix) -> the set's Change List Index: { from,
# lists => [ { loc, from, until } ], xml }, or undef while it does not
# answer 200.
sub cl_index {
    my ($set, $b, $p) = @_;
    my $r = get(($b // base()) . ($p // '/resourcesync') . "/$set/changelist.xml");
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    my @l = map { { loc => $x->findvalue('sm:loc', $_), from => $x->findvalue('rs:md/@from', $_),
                    until => $x->findvalue('rs:md/@until', $_) } }
            $x->findnodes('/sm:sitemapindex/sm:sitemap');
    return { from => $x->findvalue('/sm:sitemapindex/rs:md/@from'), lists => \@l,
             xml => $r->content };
}

# W3C datetime (UTC, Z) -> epoch seconds (fractional)
sub iso2epoch {
    my ($s) = @_;
    my ($Y, $M, $D, $h, $m, $sec, $frac) =
        $s =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z$/ or return undef;
    require Time::Local;
    return Time::Local::timegm($sec, $m, $h, $D, $M - 1, $Y) + ($frac || 0);
}

# ---------------------------------------------------------------------------
# Files in a test tree.

# put($path, $content): create or overwrite the file $path in place (open,
# write, close: a watcher sees one close after writing).  Its directory
# must exist.  Dies, naming the path and the cause, when it cannot.
sub put {
    my ($path, $content) = @_;
    open my $fh, '>', $path or die "$path: $!";
    binmode $fh;
    print $fh $content;
    close $fh or die "$path: $!";
}

# put_atomic($path, $content, $tmpdir): create or replace $path atomically:
# the content is written to a temporary file in $tmpdir (on the same file
# system, and outside the set so that no scan lists it), then renamed to
# $path; a scan sees the old file or the new one, never one half written.
# $path's directory is created when missing.
sub put_atomic {
    my ($path, $content, $tmpdir) = @_;
    make_path(dirname($path));
    my $tmp = "$tmpdir/put-atomic.$$";
    put($tmp, $content);
    rename $tmp, $path or die "rename $tmp to $path: $!";
}

# ---------------------------------------------------------------------------
# Processes.

# Parent process of the shared Apache::Test server (from its pid file).
sub httpd_pid {
    open my $fh, '<', t_dir() . '/logs/httpd.pid' or return undef;
    my $pid = <$fh>;
    chomp $pid if defined $pid;
    return $pid;
}

# alive($pid) -> whether the process exists and has not exited.  A process
# that exited stays a zombie until its parent reaps it; a daemon's parent
# is init, which here may take seconds to do so: kill(0) would still find it.
sub alive {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/stat" or return 0;
    my $line = <$fh> // return 0;
    return $line !~ /^\d+ \(.*?\) Z /;
}

# watcher_pids($ppid) -> pids of the rs-watcher processes whose parent is
# $ppid (the server's parent process), found by walking /proc.  Processes
# come and go during the walk: an entry that vanishes between the listing
# and the read (open fails, or the read returns nothing) is skipped, never
# an error.
sub watcher_pids {
    my ($ppid) = @_;
    return () unless $ppid;
    my @w;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $line = <$fh> // next;
        push @w, $1 if $line =~ /^(\d+) \(rs-watcher\) \S+ (\d+)/ && $2 == $ppid;
    }
    return @w;
}

# strong_etag($response) -> its ETag when that is a strong one ("..."
# without W/), else undef.  Every ETag the module sends is strong.
sub strong_etag {
    my ($r) = @_;
    my $etag = $r->header('ETag');
    return defined $etag && $etag =~ /^"[^"]+"$/ ? $etag : undef;
}

sub free_port {
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1)
        or die "no free port: $!";
    my $port = $s->sockport;
    close $s;
    return $port;
}

# ---------------------------------------------------------------------------
# Private servers: own config, own port, own state; for startup errors and
# restarts.  private_server(%opts) returns an RSTest::Server.
#   conf  => extra configuration text (@DIR@ is the server's directory,
#            @PORT@ its port); the minimal ResourceSync config is NOT added:
#            give it yourself
#   mpm   => 'event' (default) or 'prefork'
#   env   => { NAME => value }: extra environment of httpd (@DIR@ replaced)
#   launcher => a command (shell words, @DIR@ replaced) that runs httpd's
#            start command given as its arguments: e.g. "unshare -m sh
#            @DIR@/ns.sh" to start the server in a mount namespace of its own
#   user, group => the run user when started as root (nobody, nogroup)
sub private_server { RSTest::Server->new(@_) }

# started_server(%opts): a private server, populated and started, for the
# tests that need one server of their own.  Takes private_server's options
# and:
#   dirs  => [paths]: directories to create below the server's directory
#   files => { path => content }: files to write below it (directories
#            created); written in place with put()
#   name  => the name of the test that the start succeeded
#            ('server starts' unless given)
# Starting is one test (Test::More::is on the exit status of httpd -k
# start, with its output as a diagnostic).  Returns the RSTest::Server.
sub started_server {
    my (%o) = @_;
    my %populate = (dirs => delete $o{dirs}, files => delete $o{files});
    my $name = delete $o{name};
    my $srv = private_server(%o);
    $srv->populate(%populate);
    $srv->start_ok($name);
    return $srv;
}

# Configuration text for private servers (@DIR@ is the server's directory).
#   STATE_CONF: the state directory, @DIR@/state
#   STATUS_CONF: the status page at /rs-status
#   set_conf($set, $dir, @directives): a <Directory "@DIR@/$dir"> declaring
#       the set $set, with one more directive a line for each of @directives
use constant STATE_CONF => qq(ResourceSyncStateDir "\@DIR\@/state"\n);
use constant STATUS_CONF => "<Location /rs-status>\n    SetHandler resourcesync-status\n</Location>\n";
sub set_conf {
    my ($set, $dir, @directives) = @_;
    return qq(<Directory "\@DIR\@/$dir">\n    ResourceSyncSet $set\n)
        . join('', map { "    $_\n" } @directives) . "</Directory>\n";
}

package RSTest::Server;
use strict;
use warnings;
use File::Path qw(make_path remove_tree);
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);

sub module_path {
    open my $fh, '<', RSTest::t_dir() . '/conf/rs-module.conf' or die $!;
    while (my $line = <$fh>) { return $1 if $line =~ /^LoadModule resourcesync_module (\S+)/ }
    die "no module path";
}

sub new {
    my ($class, %o) = @_;
    my $dir = File::Temp::tempdir('rs-private-XXXXXX', DIR => RSTest::t_dir() . '/logs',
                                  CLEANUP => 0);
    chmod 0755, $dir;
    my $self = bless { dir => $dir, port => RSTest::free_port(), mpm => $o{mpm} || 'event',
                       conf => $o{conf} // '', env => $o{env} || {},
                       launcher => $o{launcher} // '', server_root => $o{server_root},
                       docroot => $o{docroot},
                       user => $o{user} || 'nobody', group => $o{group} || 'nogroup' }, $class;
    make_path("$dir/logs", "$dir/run", "$dir/www");
    $self->write_conf;
    return $self;
}

sub dir  { $_[0]{dir} }
sub port { $_[0]{port} }
sub base { "http://127.0.0.1:$_[0]{port}" }
sub error_log { "$_[0]{dir}/logs/error_log" }

sub write_conf {
    my ($self, $conf) = @_;
    $self->{conf} = $conf if defined $conf;
    my $d = $self->{dir};
    my $mods = '/usr/lib/apache2/modules';
    my $body = $self->{conf};
    $body =~ s/\@DIR\@/$d/g;
    $body =~ s/\@PORT\@/$self->{port}/g;
    my $user = $> == 0 ? "User $self->{user}\nGroup $self->{group}\n" : '';
    my $mod = module_path();
    my $root = $self->{server_root} // $d;
    my $www = $self->{docroot} // "$d/www";
    open my $fh, '>', "$d/httpd.conf" or die $!;
    print $fh <<"CONF";
ServerRoot "$root"
Listen 127.0.0.1:$self->{port}
ServerName 127.0.0.1:$self->{port}
PidFile $d/httpd.pid
ErrorLog $d/logs/error_log
LogLevel info
DefaultRuntimeDir $d/run
Mutex file:$d/run default
$user
LoadModule mpm_$self->{mpm}_module $mods/mod_mpm_$self->{mpm}.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule authz_host_module $mods/mod_authz_host.so
LoadModule mime_module $mods/mod_mime.so
LoadModule alias_module $mods/mod_alias.so
TypesConfig /etc/mime.types
LoadModule resourcesync_module $mod
# As Debian's apache2.conf: no access file is looked for above the tree
# (without it httpd reads one in every directory up to /, and the watcher
# follows them all).
<Directory />
    AllowOverride None
</Directory>
DocumentRoot "$www"
<Directory "$www">
    Require all granted
</Directory>
$body
CONF
    close $fh;
}

sub httpd_bin { $ENV{RS_ASAN} ? RSTest::t_dir() . '/httpd-asan' : '/usr/sbin/apache2' }

# start() -> (exit status of "httpd -k start", its stderr); after a
# successful start, waits until the port answers and the parent's pid file
# is written (at most 20 s; the port takes connections before the pid file
# is written, and stop needs it), and when they are not, says so (a
# diagnostic, and a line added to the output).
sub start {
    my ($self) = @_;
    my $d = $self->{dir};
    my $bin = httpd_bin();
    # env => { NAME => value }: extra environment of the server (and its
    # watcher); @DIR@ in a value is the server's directory.
    my $env = join ' ', map { (my $v = $self->{env}{$_}) =~ s/\@DIR\@/$d/g; "$_=" . quotemeta($v) }
                        sort keys %{ $self->{env} };
    (my $launcher = $self->{launcher}) =~ s/\@DIR\@/$d/g;
    my $out = `env $env $launcher setsid $bin -d $d -f $d/httpd.conf -k start 2>&1`;
    my $rc = $? >> 8;
    $self->{answers} = 0;
    if ($rc == 0) {
        $self->{answers} = RSTest::wait_for(sub {
            $self->pid && IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $self->{port},
                                                Timeout => 1) }, 20) ? 1 : 0;
        unless ($self->{answers}) {
            my $why = "httpd -k start exited 0, but within 20 s " . ($self->pid
                ? "nothing answered on 127.0.0.1:$self->{port}" : "it wrote no pid file");
            $out .= "$why\n";
            require Test::More;
            Test::More::diag("$self->{dir}: $why");
        }
    }
    return ($rc, $out);
}

# start_ok($name) -> true when "httpd -k start" succeeded and the port
# answers; that is one test (named $name, 'server starts' unless given),
# with the exit status and output of the start as a diagnostic when it fails.
sub start_ok {
    my ($self, $name) = @_;
    require Test::More;
    my ($rc, $out) = $self->start;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $ok = Test::More::ok($rc == 0 && $self->{answers}, $name // 'server starts');
    Test::More::diag("exit $rc: $out") unless $ok;
    return $ok;
}

# populate(dirs => [paths], files => { path => content }): create
# directories and write files (put, their directories created first) below
# the server's directory, paths relative to it.
sub populate {
    my ($self, %o) = @_;
    my $d = $self->{dir};
    make_path(map { "$d/$_" } @{ $o{dirs} || [] });
    for my $rel (sort keys %{ $o{files} || {} }) {
        make_path(File::Basename::dirname("$d/$rel"));
        RSTest::put("$d/$rel", $o{files}{$rel});
    }
}

sub pid {
    my ($self) = @_;
    open my $fh, '<', "$self->{dir}/httpd.pid" or return undef;
    my $pid = <$fh>;
    chomp $pid if defined $pid;
    return $pid;
}

sub signal {
    my ($self, $sig) = @_;
    my $pid = $self->pid or return;
    kill $sig, $pid;
}

# Stop and wait until the parent has exited (at most 20 s); true when it
# has, else false with a diagnostic.
sub stop {
    my ($self) = @_;
    my $pid = $self->pid or return 1;
    kill 'TERM', $pid;
    my $gone = RSTest::wait_for(sub { !RSTest::alive($pid) }, 20);
    unless ($gone) {
        require Test::More;
        Test::More::diag("$self->{dir}: httpd (pid $pid) still runs 20 s after SIGTERM");
    }
    unlink "$self->{dir}/httpd.pid";
    return $gone;
}

# Graceful restart: returns when the new generation answers.
sub graceful {
    my ($self) = @_;
    $self->signal('USR1');
}

# Pids of the rs-watcher processes that are children of the parent
# process (one, except for a moment around a restart or a respawn).
sub watchers { RSTest::watcher_pids($_[0]->pid) }

# Pid of the watcher process (the first of watchers), or undef.
sub watcher_pid { (RSTest::watcher_pids($_[0]->pid))[0] }

sub log_text {
    my ($self) = @_;
    open my $fh, '<', $self->error_log or return '';
    local $/;
    return <$fh>;
}

sub DESTROY {
    my ($self) = @_;
    $self->stop if $self->pid;
}

1;
