# SPDX-License-Identifier: Apache-2.0
# Every discovery document and Resource List of both virtual hosts: schema
# validity and the links and metadata that tie them together.
use strict;
use warnings;
use Test::More;
use Apache::Test ();
use FindBin;
use lib "$FindBin::Bin/lib";
use Time::HiRes ();
use RSTest qw(get doc xpc validate wait_for sd_url cap_url rl_url iso2epoch base vhost_base);
use RSTest::Docs qw(sets_of_vhost set_info is_w3c_utc media_type part_urls);

# Validate with the lenient schema, and also with the official one when the
# document has entries and no media type with a dot (see t/xsd/README.md).
sub check_valid {
    my ($what, $xml) = @_;
    my $err = validate($xml, 'lenient');
    ok(!defined $err, "$what: valid (lenient schema)") or diag($err);
    my $x = xpc(doc($xml));
    my $entries = $x->findvalue('count(/sm:urlset/sm:url | /sm:sitemapindex/sm:sitemap)');
    my @dotted = grep { /\./ } map { $_->value } $x->findnodes('//rs:md/@type | //rs:ln/@type');
    if ($entries > 0 && !@dotted) {
        $err = validate($xml, 'strict');
        ok(!defined $err, "$what: valid (official schema)") or diag($err);
    }
}

sub fetch_ok {
    my ($url) = @_;
    my $r = wait_for(sub { my $r = get($url); $r->code == 503 ? undef : $r }, 60) || get($url);
    is($r->code, 200, "GET $url") or diag($r->status_line);
    return $r->content;
}

# rs:ln elements directly below the root (or below a given node)
sub links {
    my ($x, $node, $rel) = @_;
    return map { $_->getAttribute('href') }
           $x->findnodes("rs:ln[\@rel='$rel']", $node);
}

# --- Source Descriptions -------------------------------------------------
my %describedby = (main => 'http://example.org/about-main');
for my $vh (qw(main vhost)) {
    my $b = $vh eq 'vhost' ? vhost_base() : base();
    my $url = sd_url($b);
    my $xml = fetch_ok($url);
    check_valid("SD of $vh vhost", $xml);
    my $d = doc($xml);
    my $x = xpc($d);
    my $root = $d->documentElement;
    is($root->localname, 'urlset', "SD $vh: a urlset");
    is($x->findvalue('/sm:urlset/rs:md/@capability'), 'description',
       "SD $vh: rs:md capability=description");
    is_deeply([links($x, $root, 'describedby')], ['http://example.org/about-this-source'],
              "SD $vh: describedby of the source");
    my @urls = $x->findnodes('/sm:urlset/sm:url');
    my @want = map { cap_url($_, $b, set_info($_)->{prefix}) } sets_of_vhost($vh);
    is_deeply([sort map { $x->findvalue('sm:loc', $_) } @urls], [sort @want],
              "SD $vh: exactly the capability lists of its own sets");
    for my $u (@urls) {
        my $loc = $x->findvalue('sm:loc', $u);
        (my $set = $loc) =~ s{.*/([^/]+)/capabilitylist\.xml$}{$1};
        is($x->findvalue('rs:md/@capability', $u), 'capabilitylist',
           "SD $vh: $set has capability=capabilitylist");
        is_deeply([links($x, $u, 'describedby')],
                  [$describedby{$set} ? ($describedby{$set}) : ()],
                  "SD $vh: describedby of set $set");
    }
}

# --- Capability Lists and Resource Lists ----------------------------------
for my $set (sets_of_vhost('main'), sets_of_vhost('vhost')) {
    my $si = set_info($set);
    my $cl = cap_url($set, $si->{base}, $si->{prefix});
    my $rl = rl_url($set, $si->{base}, $si->{prefix});

    my $xml = fetch_ok($cl);
    check_valid("capability list of $set", $xml);
    my $d = doc($xml);
    my $x = xpc($d);
    my $root = $d->documentElement;
    is($root->localname, 'urlset', "$set capability list: a urlset");
    is_deeply([links($x, $root, 'up')], [sd_url($si->{base})], "$set capability list: up = SD");
    is($x->findvalue('/sm:urlset/rs:md/@capability'), 'capabilitylist',
       "$set capability list: rs:md capability=capabilitylist");
    is_deeply([links($x, $root, 'describedby')],
              [$describedby{$set} ? ($describedby{$set}) : ()],
              "$set capability list: describedby");
    my @urls = $x->findnodes('/sm:urlset/sm:url');
    is(scalar @urls, 2, "$set capability list: two entries");
    (my $cli = $rl) =~ s{resourcelist\.xml$}{changelist.xml};
    is_deeply([map { $x->findvalue('sm:loc', $_) } @urls], [$rl, $cli],
              "$set capability list: the resource list, then the change list index");
    is_deeply([map { $x->findvalue('rs:md/@capability', $_) } @urls], ['resourcelist', 'changelist'],
              "$set capability list: capabilities resourcelist and changelist");

    # The Resource List (or its Index and every part).
    $xml = fetch_ok($rl);
    my $now = Time::HiRes::time();
    check_valid("resource list of $set", $xml);
    $d = doc($xml);
    $x = xpc($d);
    $root = $d->documentElement;
    my $kind = $root->localname;
    like($kind, qr/^(?:urlset|sitemapindex)$/, "$set resource list: urlset or sitemapindex");
    my ($at, $completed) = check_list_md($x, $root, $set, 'resource list', $cl, $now);

    my @docs = ([$rl, $xml]);
    if ($kind eq 'sitemapindex') {
        my @parts = part_urls($x);
        ok(@parts >= 1, "$set index: has parts");
        for my $sm ($x->findnodes('/sm:sitemapindex/sm:sitemap')) {
            is($x->findvalue('rs:md/@at', $sm), $at, "$set index: part entry has the index's at");
        }
        for my $p (@parts) {
            my $pxml = fetch_ok($p);
            check_valid("part $p", $pxml);
            my $pd = doc($pxml);
            my $px = xpc($pd);
            is($pd->documentElement->localname, 'urlset', "$p: a urlset");
            is_deeply([links($px, $pd->documentElement, 'index')], [$rl], "$p: rs:ln index");
            my ($pat) = check_list_md($px, $pd->documentElement, $set, "part $p", $cl, $now);
            is($pat, $at, "$p: same at as its index");
            push @docs, [$p, $pxml];
        }
    }
    for (@docs) {
        my ($u, $dx) = @$_;
        my $xx = xpc(doc($dx));
        my @bad = grep { !is_w3c_utc($_) } map { $_->textContent } $xx->findnodes('//sm:lastmod');
        is_deeply(\@bad, [], "$u: every lastmod is UTC with Z");
        my $n = $xx->findvalue('count(//sm:lastmod)');
        ok($n > 0 || $u eq $rl && $kind eq 'sitemapindex', "$u: entries have a lastmod")
            or diag("no lastmod in $u");
    }
}

# rs:ln up and rs:md of a resource list, index or part; returns (at, completed)
sub check_list_md {
    my ($x, $root, $set, $what, $cl, $now) = @_;
    is_deeply([links($x, $root, 'up')], [$cl], "$set $what: up = capability list");
    my ($md) = $x->findnodes('rs:md', $root);
    ok($md, "$set $what: has rs:md") or return;
    is($md->getAttribute('capability'), 'resourcelist', "$set $what: capability=resourcelist");
    my $at = $md->getAttribute('at');
    my $completed = $md->getAttribute('completed');
    ok(is_w3c_utc($at), "$set $what: at is UTC with Z") or diag($at // 'none');
    ok(is_w3c_utc($completed), "$set $what: completed is UTC with Z") or diag($completed // 'none');
    my ($a, $c) = (iso2epoch($at // ''), iso2epoch($completed // ''));
    ok(defined $a && defined $c && $c >= $a, "$set $what: completed >= at")
        or diag("at=" . ($at // '') . " completed=" . ($completed // ''));
    ok(defined $a && $a <= $now, "$set $what: at not in the future")
        or diag("at=" . ($at // '') . " now=$now");
    return ($at, $completed);
}

done_testing();
