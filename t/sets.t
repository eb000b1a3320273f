# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# Several sets per virtual host, sets in two virtual hosts with their own
# prefixes, and a set outside DocumentRoot reached through Alias.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use RSTest qw(base vhost_base get head doc xpc sd_url cap_url rl_url list_entries);

plan tests => 28;

my $main  = base();
my $vhost = vhost_base();
my @main_sets = qw(main small mut rules dots aliased);

# Capability list URLs listed by a Source Description.
sub sd_caps {
    my ($b) = @_;
    my $r = get(sd_url($b));
    return undef unless $r->code == 200;
    my $x = xpc(doc($r->content));
    return [map { $_->textContent } $x->findnodes('/sm:urlset/sm:url/sm:loc')];
}

# ----------------------------------------------------- Source Descriptions
my $caps = sd_caps($main);
is_deeply([sort @{ $caps || [] }], [sort map { cap_url($_, $main) } @main_sets],
          'main SD lists exactly the main server\'s sets, under /resourcesync')
    or diag explain $caps;
ok(!grep({ /vset/ } @{ $caps || [] }), 'main SD does not list vset');

my $vcaps = sd_caps($vhost);
is_deeply($vcaps, [cap_url('vset', $vhost, '/rs')], 'vhost SD lists only vset, under /rs')
    or diag explain $vcaps;

# ------------------------------------------------------- Capability Lists
for my $set (@main_sets) {
    my $r = get(cap_url($set, $main));
    my $ok = $r->code == 200;
    if ($ok) {
        my $x = xpc(doc($r->content));
        $ok = $x->findvalue('/sm:urlset/rs:ln[@rel="up"]/@href') eq sd_url($main)
           && $x->findvalue('/sm:urlset/sm:url[rs:md/@capability="resourcelist"]/sm:loc')
              eq rl_url($set, $main);
    }
    ok($ok, "capability list of $set: 200, up is the main SD, lists its resourcelist under "
            . "/resourcesync") or diag $r->as_string;
}
{
    my $r = get(cap_url('vset', $vhost, '/rs'));
    my $ok = $r->code == 200;
    if ($ok) {
        my $x = xpc(doc($r->content));
        $ok = $x->findvalue('/sm:urlset/rs:ln[@rel="up"]/@href') eq sd_url($vhost)
           && $x->findvalue('/sm:urlset/sm:url[rs:md/@capability="resourcelist"]/sm:loc')
              eq rl_url('vset', $vhost, '/rs');
    }
    ok($ok, 'capability list of vset: 200, up is the vhost SD, lists its resourcelist under /rs')
        or diag $r->as_string;
}

# --------------------------------------- prefixes belong to their own host
is(get(cap_url('vset', $main, '/rs'))->code, 404, 'main server: /rs/vset/... is 404');
is(get(cap_url('main', $main, '/rs'))->code, 404, 'main server: /rs/main/... is 404');
is(get(cap_url('vset', $main))->code, 404, 'main server: /resourcesync/vset/... is 404');
is(get(rl_url('vset', $main))->code, 404, 'main server: /resourcesync/vset/resourcelist.xml is 404');
is(get(cap_url('vset', $vhost))->code, 404, 'vhost: /resourcesync/vset/... is 404');
is(get(cap_url('main', $vhost))->code, 404, 'vhost: /resourcesync/main/... is 404');
is(get(cap_url('main', $vhost, '/rs'))->code, 404, 'vhost: /rs/main/... (a main-server set) is 404');
is(get(rl_url('main', $vhost, '/rs'))->code, 404, 'vhost: /rs/main/resourcelist.xml is 404');

# ------------------------------------------------------------ vset's list
my @v = list_entries('vset', $vhost, '/rs');
is_deeply([sort map { $_->{loc} } @v], ["$vhost/vdata/v1.txt", "$vhost/vdata/v2.txt"],
          'vset lists exactly /vdata/v1.txt and /vdata/v2.txt on the vhost');
my $vl = get("$vhost/vdata/v1.txt");
is($vl->header('Link'), '<' . cap_url('vset', $vhost, '/rs') . '>; rel="resourcesync"',
   'Link header of /vdata/v1.txt on the vhost points at vset\'s capability list');
my $vo = get("$vhost/outside.txt");
ok($vo->code == 200 && !defined $vo->header('Link'),
   'vhost /outside.txt (not in a set) is served without a Link header');

# ------------------------------------------------------------ set aliased
my @a = list_entries('aliased');
is_deeply([sort map { $_->{loc} } @a], ["$main/aliased/a1.txt", "$main/aliased/dir/a2.txt"],
          'aliased lists exactly /aliased/a1.txt and /aliased/dir/a2.txt')
    or diag explain [map { $_->{loc} } @a];
for my $e (sort { $a->{loc} cmp $b->{loc} } @a) {
    my $r = get($e->{loc});
    ok($r->code == 200 && $e->{hash} eq 'md5:' . md5_hex($r->content)
       && $e->{length} == length($r->content),
       "aliased: $e->{loc} is served with the listed md5 and length")
        or diag $r->status_line;
}
my $al = head("$main/aliased/a1.txt");
is($al->header('Link'), '<' . cap_url('aliased', $main) . '>; rel="resourcesync"',
   'Link header of /aliased/a1.txt points at aliased\'s capability list');
my $ad = head("$main/aliased/dir/a2.txt");
is($ad->header('Link'), '<' . cap_url('aliased', $main) . '>; rel="resourcesync"',
   'Link header of /aliased/dir/a2.txt points at aliased\'s capability list');
# The tree itself is not below DocumentRoot: its directory name does not
# leak into URLs.
ok(!grep({ $_->{loc} =~ m{/generated/|/t/aliased/} } @a), 'aliased: no filesystem paths in locs');

# Every main-server set's list is served (not 404) and is under its prefix.
my @bad = grep { my $c = get(rl_url($_, $main))->code; $c != 200 && $c != 503 } @main_sets;
is_deeply(\@bad, [], 'every main-server set\'s resourcelist.xml answers');
