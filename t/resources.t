# SPDX-License-Identifier: Apache-2.0
# Every resource listed for the sets main, small, aliased and vset: it is
# served as listed (length, hashes, type, lastmod), its loc is correctly
# percent-encoded, and the listed paths are exactly the files of the tree.
use strict;
use warnings;
use Test::More;
use Apache::Test ();
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 ();
use Digest::SHA ();
use HTTP::Date ();
use RSTest qw(get fetch_list iso2epoch);
use RSTest::Docs qw(set_info tree_files loc_relpath media_type has_raw_unsafe);

my %DIGEST = (
    'md5'     => sub { Digest::MD5::md5_hex($_[0]) },
    'sha-1'   => sub { Digest::SHA::sha1_hex($_[0]) },
    'sha-256' => sub { Digest::SHA::sha256_hex($_[0]) },
    'sha-512' => sub { Digest::SHA::sha512_hex($_[0]) },
);

# Hash algorithms each set is configured with (t/conf/extra.conf.in); the
# default is md5.
my %HASHES = (main => [qw(md5 sha-1 sha-256 sha-512)], small => ['sha-256'],
              aliased => ['md5'], vset => ['md5']);

# The odd names of t/lib/make-tree.pl (bytes as on disk), below main/.
my @ODD = ("odd/with space.txt", "odd/100% sure.txt", "odd/a#b?c&d.txt",
           "odd/q\"uo'te<>.txt", "odd/plus+semi;colon:at\@eq=.txt",
           "odd/\xc3\xbcn\xc3\xafc\xc3\xb6d\xc3\xa9-\xe6\x96\x87.txt",
           "odd/caf\xe9-latin1.txt", "odd/no-extension");

sub printable { my $s = shift; $s =~ s/([^\x20-\x7e])/sprintf('\\x%02x', ord $1)/ge; $s }

for my $set (qw(main small aliased vset)) {
    my $si = set_info($set);
    my $list = fetch_list($set, $si->{base}, $si->{prefix});
    my @entries = @{ $list->{entries} };
    ok(@entries > 0, "$set: has entries");

    my %listed;
    for my $e (@entries) {
        my $loc = $e->{loc};
        my $rel = loc_relpath($loc, $si->{url_base});
        ok(defined $rel, "$set: $loc is below $si->{url_base}") or next;
        ok(!has_raw_unsafe($loc), "$set: $loc is percent-encoded");
        ok(!$listed{$rel}++, "$set: " . printable($rel) . " listed once");

        my $r = get($loc);
        is($r->code, 200, "$set: GET $loc") or do { diag($r->status_line); next };
        my $body = $r->content;
        ok(defined $e->{length}, "$set: $loc has a length");
        is(length($body), $e->{length} // -1, "$set: $loc body length = listed length");
        is($r->header('Content-Length'), $e->{length}, "$set: $loc Content-Length = listed length");

        # Every configured algorithm is listed, and every listed digest matches.
        my %h = map { split /:/, $_, 2 } split ' ', ($e->{hash} // '');
        is_deeply([sort keys %h], [sort @{ $HASHES{$set} }], "$set: $loc lists the configured hashes");
        for my $alg (sort keys %h) {
            my $f = $DIGEST{$alg};
            ok($f && $f->($body) eq $h{$alg}, "$set: $loc $alg matches the body")
                or diag("listed $alg:$h{$alg}");
        }

        # Type: listed exactly when httpd serves one, and the same one.
        is(media_type($e->{type}), media_type(scalar $r->header('Content-Type')),
           "$set: $loc type = served Content-Type");

        # Last-Modified is lastmod truncated to whole seconds.
        my $lm = HTTP::Date::str2time($r->header('Last-Modified') // '');
        my $listed = iso2epoch($e->{lastmod} // '');
        ok(defined $lm && defined $listed && int($listed) == $lm,
           "$set: $loc Last-Modified = lastmod in seconds")
            or diag("Last-Modified " . ($r->header('Last-Modified') // 'none')
                    . ", lastmod " . ($e->{lastmod} // 'none'));
    }

    # Exactly the files of the tree (bytes compared).
    my @files = sort(tree_files($si->{dir}));
    is_deeply([map { printable($_) } sort keys %listed], [map { printable($_) } @files],
              "$set: listed paths are exactly the files under $si->{dir}");

    if ($set eq 'main') {
        ok($listed{$_}, "main: odd name " . printable($_) . " listed") for @ODD;
        my ($empty) = grep { loc_relpath($_->{loc}, $si->{url_base}) eq 'empty.txt' } @entries;
        ok($empty && defined $empty->{length} && $empty->{length} eq '0',
           'main: empty.txt has length="0"');
        # The non-UTF-8 name is percent-encoded byte by byte.
        ok(scalar(grep { $_->{loc} =~ m{/odd/caf%E9-latin1\.txt$}i } @entries),
           'main: the Latin-1 name is encoded as %E9');
        ok(scalar(grep { $_->{loc} =~ m{/odd/with%20space\.txt$} } @entries),
           'main: a space is encoded as %20');
        ok(scalar(grep { $_->{loc} =~ m{/odd/100%25%20sure\.txt$} } @entries),
           'main: a percent sign is encoded as %25');
    }
}

done_testing();
