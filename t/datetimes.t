# SPDX-License-Identifier: Apache-2.0
# Every datetime in every document of a set has at most six fractional
# digits (files with nanosecond mtimes: lastmod is the mtime truncated to
# the microsecond), and a change of mtime below the microsecond is still a
# change (journaled as updated, with the same lastmod).  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(private_server set_conf STATE_CONF get doc xpc wait_for wait_ok);

plan tests => 9;

my $srv = private_server(
    conf => STATE_CONF . "ResourceSyncRescanInterval 1\n"
            . set_conf('ns', 'www/ns', 'ResourceSyncResourceDump 1', 'ResourceSyncHash md5'));
$srv->populate(files => { 'www/ns/a.txt' => "a\n", 'www/ns/b.txt' => "b\n", 'www/ns/c.txt' => "c\n" });
my $www = $srv->dir . '/www/ns';
my $B = $srv->base;
my $DT = qr/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d+))?(?:Z|[+-]\d\d:\d\d)/;

sub touch_ns { my ($t, $f) = @_; system('touch', '-d', "\@$t", "$www/$f") == 0 or die "touch $f" }

# Every document reachable from the Source Description: { url => body }.
sub crawl {
    my (%seen, %docs);
    my @todo = ("$B/.well-known/resourcesync");
    while (my $u = shift @todo) {
        next if $seen{$u}++;
        my $r = get($u);
        return undef unless $r->code == 200;
        $docs{$u} = $r->content;
        my $x = xpc(doc($r->content));
        push @todo, grep { m{^\Q$B\E/resourcesync/.*\.xml$} }
                    map { $_->textContent } $x->findnodes('//sm:loc | //rs:ln/@href');
    }
    return \%docs;
}

# a.txt before the start (first Resource List and dump), b.txt after
# (a Change List entry).
touch_ns('1700000000.123456789', 'a.txt');
$srv->start_ok;
my $lm = '2023-11-14T22:13:20.123456Z';
wait_ok(sub { my $r = get("$B/resourcesync/ns/resourcelist.xml"); $r->code == 200 && $r->content =~ /\Q$lm\E/ }, 60,
        'the first Resource List lists a.txt');
touch_ns('1700000001.000000999', 'b.txt');
# Wait for a crawl whose Resource List and dump manifest show a.txt's
# mtime and whose Change List shows b.txt's.
my $docs = wait_for(sub {
    my $d = crawl() or return undef;
    my @with = grep { $d->{$_} =~ /\Q$lm\E/ } keys %$d;
    (grep { /resourcelist/ } @with) && (grep { m{/resourcedump/} } @with)
        && (grep { m{/changelist/} && $d->{$_} =~ m{/b\.txt</loc>} } keys %$d) ? $d : undef }, 60);
ok($docs, 'the Resource List and a dump manifest show the mtime of a.txt, a Change List b.txt');
$docs ||= crawl() || {};
my (@bad, $n);
for my $u (sort keys %$docs) {
    while ($docs->{$u} =~ /$DT/g) {
        $n++;
        push @bad, "$u: $&" if defined $1 && length($1) > 6;
    }
}
ok($n > 10, "datetimes found in the documents ($n in " . scalar(keys %$docs) . ')');
is_deeply(\@bad, [], 'every datetime in every document has at most six fractional digits');
ok(!grep({ /1700000001/ || /2023-11-14T22:13:21\.0+Z/ } values %$docs)
   && grep({ m{<lastmod>2023-11-14T22:13:21Z</lastmod>} } values %$docs),
   'b.txt (999 ns past the second): lastmod is the whole second, no fraction');

# A change of mtime within the same microsecond: still a change.
sub a_updates {
    my @all;
    for my $u (grep { m{/changelist/} } keys %{ crawl() || {} }) {
        my $x = xpc(doc(get($u)->content));
        push @all, map { $x->findvalue('sm:lastmod', $_) }
                   grep { $x->findvalue('sm:loc', $_) =~ m{/a\.txt$} } $x->findnodes('/sm:urlset/sm:url');
    }
    return \@all;
}
my $before = scalar @{ a_updates() };
touch_ns('1700000000.123456001', 'a.txt');
my $after = wait_for(sub { my $a = a_updates(); @$a > $before ? $a : undef }, 30);
ok($after, 'an mtime change below the microsecond is journaled');
is($after && $after->[-1], $lm, '... with the same lastmod as before');
ok($srv->log_text !~ /\[(?:[a-z_]+:)?(?:warn|error|crit|alert|emerg)\]/, 'no warning or error in the log')
    or diag($srv->log_text);
