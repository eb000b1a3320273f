# SPDX-License-Identifier: Apache-2.0
# A change of a set's base URLs (issue 25 point 1): the same state
# directory served first on one port, then on another port, then with
# ResourceSyncBaseURL https://.../mirror (scheme, host, port and a path
# prefix).  After each change every document the server serves -- crawled
# from the Source Description down: Capability List, Resource List Index
# and parts, Change List Index and closed lists, Resource Dump, Change
# Dump, their ZIP packages' manifests, both notification topics, and
# their Link headers -- names the new base URLs and no old one, also the
# documents served right after the restart; the old history's closed
# lists are gone; and once files change again the crawl is complete: a
# closed list, a package of each dump and both topics, and a Resource
# List that holds exactly the tree with every change made before the
# restart (also while the server was stopped).  On the new port the
# conformance crawl (rs-check crawl --verify-dumps) passes, and a strict
# destination (rs-check mirror --dumps, changes, mirror, compare) ends
# with the tree.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha1_hex sha256_hex);
use File::Temp qw(tempdir);
use RSTest qw(started_server set_conf STATE_CONF get put doc xpc wait_for free_port);
use RSTest::Docs qw(tree_files loc_relpath);
use RSDump qw(save zip_member);

plan tests => 22;

my $set_conf = set_conf('s', 'www/s', 'ResourceSyncMaxEntries 3', 'ResourceSyncHash sha-256',
                        'ResourceSyncResourceDump 1', 'ResourceSyncDumpMaxEntries 3',
                        'ResourceSyncChangeDump on', 'ResourceSyncNotify on',
                        'ResourceSyncNotifyDelay 200ms');
my $common = STATE_CONF . "ResourceSyncRescanInterval 1\nResourceSyncHub on\n";
my $srv = started_server(conf => $common . $set_conf,
                         files => { map { ("www/s/base-$_.txt" => "base $_\n") } 1 .. 6 });
my $www = $srv->dir . '/www/s';
my $tmp = tempdir(CLEANUP => 1);
my $n = 0;
my %manifests;    # SHA-1 of a package => its manifest.xml

# Changes that close Change Lists (3 entries each) and make every kind of
# document: $k new files and one rewritten.
sub churn {
    my ($k) = @_;
    put("$www/c" . ++$n . ".txt", "change $n\n") for 1 .. $k;
    put("$www/base-1.txt", "base 1 rewritten $n\n");
}

# crawl($pub, $local, @old) -> { kinds => { kind => count }, urls => [every
# URL named], docs => { url => text }, bad => [what names an old base],
# resources => { relpath => sha-256 } from the Resource List }: every
# document served with 200, from the Source Description and the
# notification topics down, following each <loc> and rs:ln href below
# $pub's document paths; $pub is fetched at $local.  A ZIP package's text
# is its manifest.  @old: strings no document or Link header may hold.
sub crawl {
    my ($pub, $local, @old) = @_;
    my (%seen, %kinds, @urls, @bad, %docs, %res);
    my @queue = ("$pub/.well-known/resourcesync", map { "$pub/resourcesync/s/notify/$_" } qw(change framework));
    while (defined(my $u = shift @queue)) {
        next if $seen{$u}++;
        next unless index($u, "$pub/") == 0;
        my $path = substr($u, length $pub);
        next unless $path =~ m{^/(?:\.well-known|resourcesync)/};
        my $r = get($local . $path);
        next unless $r->code == 200;
        my $text = $r->content;
        if ($path =~ /\.zip$/) {
            my $key = sha1_hex($text);
            $manifests{$key} //= do { save("$tmp/p.zip", $text); zip_member("$tmp/p.zip", 'manifest.xml') };
            $text = $manifests{$key};
            $kinds{ $path =~ m{/changedump/} ? 'changedump package' : 'resourcedump package' }++;
        }
        $kinds{'closed list'}++ if $path =~ m{/changelist/[0-9a-f]{8}-\d+\.xml$};
        $kinds{'change topic'}++ if $path =~ m{/notify/change$} && length $text;
        $kinds{'framework topic'}++ if $path =~ m{/notify/framework$} && length $text;
        $docs{$u} = $text;
        for my $o (@old) {
            push @bad, "$path names $o" if index($text, $o) >= 0;
            push @bad, "$path: Link header names $o" if index($r->header('Link') // '', $o) >= 0;
        }
        next unless length $text;
        my $x = xpc(doc($text));
        my @found = ((map { $_->textContent } $x->findnodes('//sm:loc')),
                     (map { $_->value } $x->findnodes('//rs:ln/@href')));
        push @urls, @found;
        push @queue, @found;
        if ($path =~ m{/resourcelist(?:\.xml|/)} && $x->findnodes('/sm:urlset')) {
            for my $e ($x->findnodes('/sm:urlset/sm:url')) {
                my $rel = loc_relpath($x->findvalue('sm:loc', $e), "$pub/s/");
                $res{ $rel // $x->findvalue('sm:loc', $e) } = $x->findvalue('rs:md/@hash', $e);
            }
        }
    }
    return { kinds => \%kinds, urls => \@urls, docs => \%docs, bad => \@bad, resources => \%res };
}

# The tree on disk as the Resource List must hold it.
sub tree {
    my %t;
    for my $rel (tree_files($www)) {
        open my $fh, '<:raw', "$www/$rel" or die "$www/$rel: $!";
        local $/;
        $t{$rel} = 'sha-256:' . sha256_hex(<$fh>);
    }
    return \%t;
}

my @KINDS = ('closed list', 'resourcedump package', 'changedump package', 'change topic',
             'framework topic');

# Crawl until the Resource List is served (the first scan is done: later
# changes are journaled), change $k files, crawl until every kind of
# document is there and the Resource List holds the tree; every crawl on
# the way is checked for @old too.  Returns the last crawl.
sub crawl_complete {
    my ($what, $k, $pub, $local, @old) = @_;
    my ($c, @bad);
    wait_for(sub {
        $c = crawl($pub, $local, @old);
        push @bad, @{ $c->{bad} };
        return get("$local/resourcesync/s/resourcelist.xml")->code == 200;
    }, 60);
    churn($k);
    my $done = wait_for(sub {
        $c = crawl($pub, $local, @old);
        push @bad, @{ $c->{bad} };
        return !(grep { !$c->{kinds}{$_} } @KINDS) && _same($c->{resources}, tree());
    }, 90);
    ok($done, "$what: a closed list, both dumps' packages and both topics are served, and the "
              . "Resource List holds the tree")
        or diag(explain({ kinds => $c->{kinds}, listed => $c->{resources}, tree => tree() }));
    is_deeply([ sort(uniq(@bad)) ], [], "$what: no document served names an old base");
    my @foreign = grep { index($_, "$pub/") != 0 } @{ $c->{urls} };
    is_deeply([ sort(uniq(@foreign)) ], [], "$what: every URL named is below $pub/");
    return $c;
}

sub _same {
    my ($a, $b) = @_;
    return join("\n", map { "$_ $a->{$_}" } sort keys %$a) eq join("\n", map { "$_ $b->{$_}" } sort keys %$b);
}

sub uniq { my %s; grep { !$s{$_}++ } @_ }

# The closed lists a crawl found.
sub closed_lists { my ($c) = @_; grep { m{/changelist/[0-9a-f]{8}-\d+\.xml$} } keys %{ $c->{docs} } }

# Restart with another configuration (port, text), changes made while
# stopped; the crawl of everything served right after the start.
sub restart {
    my ($what, $port, $conf, $pub, @old) = @_;
    ok($srv->stop, "$what: server stops");
    put("$www/offline-$what.txt", "written while stopped\n");
    unlink "$www/base-2.txt" if -e "$www/base-2.txt";
    $srv->{port} = $port;
    $srv->write_conf($conf);
    $srv->start_ok("$what: server starts");
    my $early = crawl($pub, $srv->base, @old);
    is_deeply($early->{bad}, [], "$what: right after the start no document names an old base");
}

# 1. Port A: every kind of document, all naming port A (the crawl works).
my $A = $srv->base;
my $c1 = crawl_complete('port A', 7, $A, $A);
my @old_lists = closed_lists($c1);
ok(@old_lists >= 2, 'port A: closed lists were served') or diag(explain([ keys %{ $c1->{docs} } ]));
my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";
my $have_check = -x $rs_check;

# 2. The same state directory on port B.
my $portA = $srv->port;
my $pB = free_port();
restart('port B', $pB, $common . $set_conf, "http://127.0.0.1:$pB", "127.0.0.1:$portA");
my $B = $srv->base;
my $c2 = crawl_complete('port B', 4, $B, $B, "127.0.0.1:$portA");
my @gone = grep { my $p = substr($_, length $A); get($B . $p)->code != 404 } @old_lists;
is_deeply(\@gone, [], "port B: the old history's closed lists answer 404 at the new base");
SKIP: {
    skip "no rs-check at $rs_check", 2 unless $have_check;
    # The new base passes the conformance crawl, dumps verified.
    my $out = `$rs_check crawl $B --fetch-resources all --verify-dumps 2>&1`;
    is($?, 0, 'port B: rs-check crawl --fetch-resources all --verify-dumps passes') or diag($out);
    # A new destination: baseline from the Resource Dump, changes, an
    # incremental run from Change Dumps and Change Lists, then the tree.
    my $mirror_b = "$tmp/mirror-b";
    $out = `$rs_check mirror $B $mirror_b --set /s/ --dumps --url-base $B/s/ 2>&1`;
    my $ok = $? == 0 or diag("baseline: $out");
    churn(4);
    $ok &&= wait_for(sub {
        $out = `$rs_check mirror $B $mirror_b --set /s/ --dumps 2>&1`;
        return 0 unless $? == 0;
        $out .= `$rs_check compare $mirror_b $www 2>&1`;
        return $? == 0;
    }, 60) or diag($out);
    ok($ok, 'port B: rs-check mirror --dumps, changes, mirror again, compare: the tree');
}

# 3. Behind a proxy: ResourceSyncBaseURL with another scheme, host and a
# path prefix, on the same port.
my $P = 'https://rs.example.org/mirror';
my $portB = $srv->port;
restart('base URL', $portB, $common . "ResourceSyncBaseURL $P\n" . $set_conf, $P,
        "127.0.0.1:$portA", "127.0.0.1:$portB");
crawl_complete('base URL', 4, $P, $srv->base, "127.0.0.1:$portA", "127.0.0.1:$portB");
my @log = grep { /does not continue the published history/ } split /\n/, $srv->log_text;
is(scalar(@log), 2, 'each base change starts one new history, said once in the log')
    or diag(join("\n", @log));
like($log[0] // '', qr/the base URLs of set s changed from 'http:\/\/127\.0\.0\.1:$portA\/s\/ /,
     'the log names the set and its old base URLs');
$srv->stop;
