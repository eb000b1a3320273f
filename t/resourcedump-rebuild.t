# SPDX-License-Identifier: Apache-2.0
# Rebuilding the Resource Dump: after one file changes, the new dump
# differs only in the package holding it (every other package keeps its
# URL, bytes and ETag), and a package that left the dump stays
# downloadable for ResourceSyncDumpGrace, then answers 404.  The dump
# survives a graceful and a hard restart: served at once (no 503), and the
# new watcher's first build keeps every package.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get doc xpc wait_for put);
use Digest::MD5 qw(md5_hex);
use Time::HiRes qw(time);

plan tests => 21;

my %files = map { sprintf('www/data/d/f%02d.txt', $_) => "file $_\n" } 0 .. 59;
my $srv = started_server(conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
                                 . set_conf('ds', 'www/data', 'ResourceSyncResourceDump 1',
                                            'ResourceSyncDumpMaxEntries 8',
                                            'ResourceSyncDumpGrace 3'),
                         files => \%files);
my $B = $srv->base;
my $dump_url = "$B/resourcesync/ds/resourcedump.xml";

# The dump's packages: loc => { hash, length }.
sub packages {
    my $r = get($dump_url);
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return { map { $x->findvalue('sm:loc', $_) => { hash => $x->findvalue('rs:md/@hash', $_),
                                                    length => $x->findvalue('rs:md/@length', $_) } }
             $x->findnodes('/sm:urlset/sm:url') };
}

my $before = wait_for(\&packages, 60);
ok($before, 'the first Resource Dump is published');
my @locs = sort keys %{ $before || {} };
cmp_ok(scalar @locs, '>=', 4, 'several packages (ResourceSyncDumpMaxEntries 8)');
my %etag = map { $_ => get($_)->header('ETag') } @locs;
my %md5 = map { $_ => md5_hex(get($_)->content) } @locs;

put($srv->dir . '/www/data/d/f31.txt', "file 31, second version\n");
my $after = wait_for(sub {
    my $p = packages();
    return $p && join(' ', sort keys %$p) ne join(' ', @locs) ? $p : undef;
}, 60);
ok($after, 'a new Resource Dump after the change');
$after ||= {};
my @gone = grep { !$after->{$_} } @locs;
my @new = grep { !$before->{$_} } keys %$after;
is(scalar @gone, 1, 'one package left the dump');
is(scalar @new, 1, 'one package joined it');
my @kept = grep { $after->{$_} } @locs;
is(scalar @kept, @locs - 1, 'every other package is listed with the same URL');
is_deeply([map { $after->{$_} } @kept], [map { $before->{$_} } @kept],
          '... the same length and hash in resourcedump.xml');
is_deeply([map { md5_hex(get($_)->content) } @kept], [map { $md5{$_} } @kept],
          '... and the same bytes');
is_deeply([map { get($_)->header('ETag') } @kept], [map { $etag{$_} } @kept],
          '... and the same ETag');
my $newzip = @new ? get($new[0])->content : '';
ok(index($newzip, "file 31, second version\n") >= 0, 'the new package holds the new version');

# Grace: the package that left is still served, then 404 once its
# generation is older than ResourceSyncDumpGrace (3 s).
my $old = $gone[0] // "$B/none";
my $seen = time();
is(get($old)->code, 200, 'the package that left the dump is still served');
my $gone_at = wait_for(sub { get($old)->code == 404 ? time() : undef }, 30);
ok($gone_at, 'then it answers 404 after ResourceSyncDumpGrace')
    or diag "still served after 30 s";

# Restarts.  The current dump, its document's ETag and its packages' ETags.
sub state {
    my $r = get($dump_url);
    my $p = packages() || {};
    return { code => $r->code, body => $r->content, etag => $r->header('ETag') // '',
             pkg => { map { $_ => get($_)->header('ETag') } sort keys %$p } };
}
my $pre = state();

# Graceful: every answer from the signal until the new watcher's first
# build (a new generation: another ETag of resourcedump.xml) is a 200.
$srv->graceful;
my @codes;
my $rebuilt = wait_for(sub {
    my $r = get($dump_url);
    push @codes, $r->code;
    return $r->code == 200 && ($r->header('ETag') // '') ne $pre->{etag};
}, 60);
ok($rebuilt, 'graceful restart: the new watcher builds the dump again');
is_deeply([grep { $_ != 200 } @codes], [], '... resourcedump.xml answered 200 throughout')
    or diag "@codes";
my $post = state();
is($post->{body}, $pre->{body}, '... with the same document');
is_deeply($post->{pkg}, $pre->{pkg}, '... and every package kept its URL and ETag');

# Hard restart: served right after the start, before any build.
$srv->stop;
ok(($srv->start)[0] == 0, 'hard restart: the server starts again');
my $first = state();
is($first->{code}, 200, '... resourcedump.xml answers 200 at once');
is($first->{body}, $pre->{body}, '... the same document');
is_deeply($first->{pkg}, $pre->{pkg}, '... and the same packages with their ETags');
