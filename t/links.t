# SPDX-License-Identifier: Apache-2.0
# Links end to end (issue 26): rs:ln relations per resource, checked
# against a model of the rules and the tree that this file computes itself
# (ResourceSync 1.1 section 14, docs/directives.md ResourceSyncLink and
# ResourceSyncMirror).  The set: records/N.pdf described by meta/N.xml
# (if-exists), a profile on every metadata record (an absolute URL), two
# mirrors with pri, docs/X.html with its alternate docs/X.pdf (the pdf
# then carries rel="canonical"), a collection (an absolute URL with a
# query, type=), a describedby rule without if-exists whose targets are
# missing at first, a "/path" target, and data/X.csv with its alternate
# data/X.csv.gz (a target with an encoding).  Expected relations: forward
# links of the ResourceSyncLink rules in rule order (a listed local target
# with its type, encoding, length, modified and the set's hashes, taken
# from the file and a GET; a local target that is not listed: rel, href,
# pri, or nothing with if-exists), then the inverse links (describes,
# canonical) by source path, then the mirrors in the order given (rel,
# href, pri), attributes in the order rel, href, pri, modified, hash,
# length, type, encoding.  Every <rs:ln> of every entry is compared byte
# for byte with the model in: the Resource List (index and parts), every
# Change List (open and closed: an entry has the stored links of the
# moment its change was journaled and the mirrors of the configuration
# it was written under - a closed list's of when it closed, the open
# list's of now -, a deletion none), the Resource Dump's manifests (while
# the dump has the Resource List's at), the Change Dump's manifests (each
# entry the same bytes as the Change List's for the same change) and the
# change notifications' payloads (the links of the moment of the change).
# Targets are created, changed and deleted while the server runs (each
# change waited for: its own entry carries the inverse, and the next
# Resource List shows the entries linking to it) and while it is stopped;
# then the directives change across a restart: the links are rendered
# again, no change is journaled, nothing is hashed again, the closed
# Change Lists keep their bytes; then the mirrors alone change across a
# restart: no row is resolved again, every part of the Resource List is
# written again, the open Change List gets another ETag, and every
# document shows the new mirrors, each once.  Every document validates
# against t/xsd; rs-check crawl finds no failure.  Private server.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use Digest::SHA qw(sha256_hex);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use JSON::PP ();
use POSIX qw(strftime);
use RSTest qw(private_server set_conf STATE_CONF get head validate wait_for wait_ok put);
use RSTest::Docs qw(tree_files);
use RSDump qw(save zip_member);

plan tests => 80;

# ---------------------------------------------------------------------------
# The rules, as the configuration says them and as the model reads them.

my $HASHES = 'md5 sha-256';
my @RULES_A = (
    [ link => 'describedby', '^records/([0-9]+)\.pdf$', 'meta/$1.xml', 'if-exists' ],
    [ mirror => 'http://mirror-a.example.org/lk/', 'pri=1' ],
    [ link => 'profile', '^meta/[0-9]+\.xml$', 'http://www.openarchives.org/OAI/2.0/oai_dc/' ],
    [ link => 'alternate', '^docs/(.+)\.html$', 'docs/$1.pdf' ],
    [ link => 'collection', '^(records|meta)/', 'http://example.org/coll/lk?part=$1&fmt=xml',
      'type=application/xml' ],
    [ mirror => 'https://mirror-b.example.net/data/', 'pri=2' ],
    [ link => 'describedby', '^docs/(.+)\.html$', 'meta/docs/$1.xml', 'pri=3' ],
    [ link => 'license', '^docs/', '/licenses/cc-by.html' ],
    [ link => 'alternate', '^data/(.+)\.csv$', 'data/$1.csv.gz' ],
);
# The change across a restart: mirror b gets another pri, the profile rule
# goes, a third mirror (without pri) comes last.
my @RULES_B = (@RULES_A[0, 1, 3, 4], [ mirror => 'https://mirror-b.example.net/data/', 'pri=7' ],
               @RULES_A[6 .. 8], [ mirror => 'http://mirror-c.example.com/x/' ]);
# Then the mirrors alone: mirror a goes, mirror c comes first with a pri.
my @RULES_C = ([ mirror => 'http://mirror-c.example.com/x/', 'pri=4' ],
               grep { $_->[0] ne 'mirror' } @RULES_B);
push @RULES_C, [ mirror => 'https://mirror-b.example.net/data/', 'pri=7' ];
my %INVERSE = (describedby => 'describes', describes => 'describedby', alternate => 'canonical',
               canonical => 'alternate');

sub directives {
    map { $_->[0] eq 'mirror' ? join(' ', 'ResourceSyncMirror', @$_[1 .. $#$_])
                              : join(' ', 'ResourceSyncLink', @$_[1 .. $#$_]) } @_;
}

# The model's form of a rule: { mirror, rel, re, target, pri, type, if_exists }.
sub model_rules {
    map {
        my ($kind, @a) = @$_;
        my %r = (mirror => $kind eq 'mirror');
        if ($r{mirror}) { @r{qw(rel prefix)} = ('duplicate', shift @a) }
        else { @r{qw(rel re target)} = (shift @a, qr/${\ shift @a}/, shift @a) }
        for (@a) {
            $r{pri} = $1 if /^pri=(\d+)$/;
            $r{type} = $1 if /^type=(.+)$/;
            $r{if_exists} = 1 if $_ eq 'if-exists';
        }
        \%r;
    } @_;
}

my $SET_CONF_COMMON = STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncHub on\n"
                      . "ResourceSyncRescanInterval 1\nAddEncoding gzip .gz\n";
sub conf_for {
    my (@rules) = @_;
    return $SET_CONF_COMMON
        . set_conf('lk', 'www/lk', "ResourceSyncHash $HASHES", 'ResourceSyncMaxEntries 5',
                   'ResourceSyncResourceDump 1', 'ResourceSyncDumpMaxEntries 4',
                   'ResourceSyncChangeDump on', 'ResourceSyncNotify on',
                   'ResourceSyncNotifyDelay 200ms', directives(@rules));
}

my %FILES = (
    'records/1.pdf' => "%PDF-1.4 record 1\n", 'records/2.pdf' => "%PDF-1.4 record 2\n",
    'records/3.pdf' => "%PDF-1.4 record 3 (no metadata yet)\n",
    'records/10.pdf' => "%PDF-1.4 record 10\n",
    'meta/1.xml' => qq(<?xml version="1.0"?>\n<record id="1"/>\n),
    'meta/2.xml' => qq(<?xml version="1.0"?>\n<record id="2"/>\n),
    'meta/10.xml' => qq(<?xml version="1.0"?>\n<record id="10"/>\n),
    'meta/4.xml' => qq(<?xml version="1.0"?>\n<record id="4" orphan="yes"/>\n),
    'docs/guide.html' => "<html><body>guide</body></html>\n",
    'docs/guide.pdf' => "%PDF-1.4 the guide\n",
    'docs/user notes.html' => "<html><body>notes</body></html>\n",
    'docs/readme.txt' => "read me\n",
    'other.txt' => "not linked to anything but the mirrors\n",
    'data/table.csv' => "a,b\n1,2\n",
    'data/table.csv.gz' => "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03 not really gzip\n",
);

my $srv = private_server(conf => conf_for(@RULES_A));
$srv->populate(dirs => [ 'www/lk/meta/docs' ],
               files => { map { ("www/lk/$_" => $FILES{$_}) } keys %FILES });
my $B = $srv->base;
my $UB = "$B/lk/";                       # the set's URL base
my $www = $srv->dir . '/www/lk';
my $db = $srv->dir . '/state/state.db';
my $tmp = tempdir(CLEANUP => 1);
my @rules = model_rules(@RULES_A);

# ---------------------------------------------------------------------------
# The model.

# A path percent-encoded as the module's URLs are (RFC 3986 unreserved and
# "/" kept, anything else %XX, upper case).
sub esc {
    my ($s) = @_;
    $s =~ s{([^A-Za-z0-9\-._~/])}{sprintf('%%%02X', ord $1)}ge;
    return $s;
}
# An attribute value as libxml2 writes it.
sub xattr {
    my ($s) = @_;
    $s =~ s/&/&amp;/g;
    $s =~ s/</&lt;/g;
    $s =~ s/>/&gt;/g;
    $s =~ s/"/&quot;/g;
    $s =~ s/\r/&#13;/g;
    $s =~ s/\n/&#10;/g;
    $s =~ s/\t/&#9;/g;
    return $s;
}
# One <rs:ln>, attributes in the one order (undefined ones left out).
sub ln {
    my (%a) = @_;
    return '<rs:ln' . join('', map { defined $a{$_} ? qq( $_=") . xattr($a{$_}) . '"' : '' }
                                qw(rel href pri modified hash length type encoding)) . '/>';
}

# A W3C datetime as the module writes lastmod: UTC, the fraction truncated
# to microseconds, trailing zeros (and an empty fraction) left out.
sub w3c {
    my ($sec, $frac) = @_;
    $frac = substr(($frac // '') . '000000', 0, 6);
    $frac =~ s/0+$//;
    return strftime('%Y-%m-%dT%H:%M:%S', gmtime $sec) . (length $frac ? ".$frac" : '') . 'Z';
}

# The tree as the set lists it: { path => { modified, hash, length, type,
# encoding } }, every attribute from the file itself (stat, its bytes) and
# from the headers of a GET of its URL (media type and encoding).
my %head_cache;
sub tree_state {
    my %t;
    my @paths = sort(tree_files($www));
    return \%t unless @paths;
    open my $st, '-|', 'stat', '-c', '%.9Y %s %n', map { "$www/$_" } @paths or die "stat: $!";
    while (my $line = <$st>) {
        chomp $line;
        my ($sec, $frac, $size, $name) = $line =~ /^(\d+)\.(\d+) (\d+) \Q$www\E\/(.*)$/
            or die "stat: $line";
        open my $fh, '<:raw', "$www/$name" or die "$www/$name: $!";
        my $bytes = do { local $/; <$fh> };
        my $key = "$name $sec.$frac $size";
        my $h = $head_cache{$key} //= get($UB . esc($name));
        die "GET $name: " . $h->status_line unless $h->code == 200;
        my $ct = $h->header('Content-Type');
        $t{$name} = { modified => w3c($sec, $frac), length => $size,
                      hash => 'md5:' . md5_hex($bytes) . ' sha-256:' . sha256_hex($bytes),
                      type => $ct, encoding => scalar $h->header('Content-Encoding') };
    }
    close $st;
    return \%t;
}

# Substitute $1..$9 and $$ in a template; with $escape, each group is
# percent-encoded as a path is.
sub subst {
    my ($tmpl, $groups, $escape) = @_;
    $tmpl =~ s/\$(\$|[1-9])/$1 eq '$' ? '$' : do { my $g = $groups->[$1] \/\/ ''; $escape ? esc($g) : $g }/ge;
    return $tmpl;
}

# A ResourceSyncLink rule applied to path: undef when it does not match,
# else { local => set-relative target } or { href => URL } (a target
# outside the set).
sub apply {
    my ($r, $path) = @_;
    return undef unless $path =~ $r->{re};
    my @groups = (undef, map { defined $-[$_] ? substr($path, $-[$_], $+[$_] - $-[$_]) : undef } 1 .. $#-);
    if ($r->{target} =~ /^[A-Za-z][A-Za-z0-9+.-]*:/) {
        return { href => subst($r->{target}, \@groups, 1) };
    }
    if ($r->{target} =~ m{^/}) {
        return { href => $B . subst($r->{target}, \@groups, 1) };
    }
    my $t = subst($r->{target}, \@groups, 0);
    return undef if grep { $_ eq '' || $_ eq '.' || $_ eq '..' } split m{/}, $t, -1;
    return { local => $t };
}

sub attrs { my ($a) = @_; map { ($_ => $a->{$_}) } qw(modified hash length type encoding) }

# The <rs:ln> elements of the mirrors among @r for a path as its entry's
# <loc> has it (escaped), in the order given.
sub mirror_links {
    my ($epath, @r) = @_;
    return map { ln(rel => 'duplicate', href => $_->{prefix} . $epath, pri => $_->{pri}) }
           grep { $_->{mirror} } @r;
}

# The <rs:ln> elements the entry of path must carry in tree $t under @r.
sub expected_links {
    my ($path, $t, @r) = @_;
    return [ @{ stored_links($path, $t, @r) }, mirror_links(esc($path), @r) ];
}

# Those that come from the ResourceSyncLink rules (what the store keeps).
sub stored_links {
    my ($path, $t, @r) = @_;
    my @l;
    for my $r (grep { !$_->{mirror} } @r) {
        my $a = apply($r, $path) or next;
        if (defined $a->{href}) {
            push @l, ln(rel => $r->{rel}, href => $a->{href}, pri => $r->{pri}, type => $r->{type});
        }
        elsif ($t->{ $a->{local} }) {
            push @l, ln(rel => $r->{rel}, href => $UB . esc($a->{local}), pri => $r->{pri},
                        attrs($t->{ $a->{local} }));
        }
        elsif (!$r->{if_exists}) {
            push @l, ln(rel => $r->{rel}, href => $UB . esc($a->{local}), pri => $r->{pri});
        }
    }
    for my $src (sort keys %$t) {
        next if $src eq $path;
        for my $r (grep { !$_->{mirror} && $INVERSE{ $_->{rel} } } @r) {
            my $a = apply($r, $src) or next;
            next unless defined $a->{local} && $a->{local} eq $path;
            push @l, ln(rel => $INVERSE{ $r->{rel} }, href => $UB . esc($src), attrs($t->{$src}));
        }
    }
    return \@l;
}

# ---------------------------------------------------------------------------
# Reading the documents as they are: entries with their raw <rs:ln> bytes.

sub unxml {
    my ($s) = @_;
    $s =~ s/&lt;/</g; $s =~ s/&gt;/>/g; $s =~ s/&quot;/"/g; $s =~ s/&apos;/'/g; $s =~ s/&amp;/&/g;
    return $s;
}
# Entries of a <urlset>: [ { loc, change, datetime, at, ln => [raw <rs:ln>] } ].
sub entries {
    my ($xml) = @_;
    my @e;
    while ($xml =~ m{<url>(.*?)</url>}gs) {
        my $u = $1;
        my ($loc) = $u =~ m{<loc>([^<]*)</loc>};
        my ($md) = $u =~ m{<rs:md\b([^>]*)/?>};
        my %md = ($md // '') =~ /(\w+)="([^"]*)"/g;
        my ($lastmod) = $u =~ m{<lastmod>([^<]*)</lastmod>};
        push @e, { loc => unxml($loc // ''), change => $md{change} // '',
                   datetime => $md{datetime} // '', ln => [ $u =~ m{(<rs:ln\b[^>]*/>)}g ],
                   own => { modified => $lastmod, map { ($_ => unxml($md{$_})) }
                            grep { defined $md{$_} } qw(hash length type encoding) } };
    }
    return @e;
}
sub locs_in { map { unxml($_) } $_[0] =~ m{<sitemap>\s*<loc>([^<]*)</loc>}g }
sub root_at { $_[0] =~ m{^\s*<rs:md\b[^>]*\bat="([^"]+)"}m ? $1 : '' }

my @invalid;   # documents that did not validate: "url: error"
sub fetch_doc {
    my ($url) = @_;
    my $r = get($url);
    return undef unless $r->code == 200;
    my $err = validate($r->content);
    push @invalid, "$url: $err" if $err;
    return $r->content;
}

# The Resource List: { at, entries => { loc => [ln] }, order => [loc] }, or
# undef while it is not served (503) or a part is gone.
sub resource_list {
    my $idx = fetch_doc("$B/resourcesync/lk/resourcelist.xml") // return undef;
    my @docs = $idx =~ /<sitemapindex/ ? map { fetch_doc($_) } locs_in($idx) : ($idx);
    return undef if grep { !defined } @docs;
    my (%e, %own);
    for my $e (map { entries($_) } @docs) {
        push @{ $e{_dup} }, $e->{loc} if $e{ $e->{loc} };
        $e{ $e->{loc} } = $e->{ln};
        $own{ $e->{loc} } = $e->{own};
    }
    return { at => root_at($idx), entries => \%e, own => \%own,
             parts => [ $idx =~ /<sitemapindex/ ? locs_in($idx) : () ] };
}

# The generations the parts of a Resource List Index come from (a part's
# URL is resourcelist/<history>-<generation>-<n>.xml), sorted.
sub part_gens {
    my ($rl) = @_;
    my %g = map { /-(\d+)-\d+\.xml$/ ? ($1 => 1) : ('?' => 1) } @{ $rl ? $rl->{parts} : [] };
    return sort keys %g;
}

# The open Change List's URL (the index's entry without until), or undef.
sub open_list_url {
    my $r = get("$B/resourcesync/lk/changelist.xml");
    return undef unless $r->code == 200;
    for my $s ($r->content =~ m{<sitemap>(.*?)</sitemap>}gs) {
        return unxml($1) if $s !~ /\buntil="/ && $s =~ m{<loc>([^<]*)</loc>};
    }
    return undef;
}

# Every entry of every Change List, oldest first (undef while the index or
# a list does not answer 200), and the closed lists' bytes { url => xml }.
sub change_lists {
    my $idx = fetch_doc("$B/resourcesync/lk/changelist.xml") // return undef;
    my (@all, %closed);
    while ($idx =~ m{<sitemap>(.*?)</sitemap>}gs) {
        my $s = $1;
        my ($loc) = $s =~ m{<loc>([^<]*)</loc>};
        my $xml = fetch_doc(unxml($loc)) // return undef;
        $closed{ unxml($loc) } = $xml if $s =~ /\buntil="/;
        push @all, map { { %$_, list => unxml($loc) } } entries($xml);
    }
    return { entries => \@all, closed => \%closed };
}

# The expected state: the model's links of each listed path, and of each
# journaled change (in order, per loc): the stored ones, and with the
# mirrors of that moment.
my %journal;   # loc => [ { change, stored => [...], ln => [...] } ] in the order of the changes made
# The rules a closed list was written under, when not the current ones.
my %list_rules;   # list URL => [ model rules ]

# A journaled change as the model has it (path in tree $t under @r).
sub journaled {
    my ($op, $path, $t, @r) = @_;
    return { change => $op, stored => [], ln => [] } if $op eq 'deleted';
    my $stored = stored_links($path, $t, @r);
    return { change => $op, stored => $stored, ln => [ @$stored, mirror_links(esc($path), @r) ] };
}

# What the entry $e of a Change List must carry: the stored links of its
# change, the mirrors its list was written under; a deletion nothing.
sub cl_want {
    my ($e, $j) = @_;
    return [] if $j->{change} eq 'deleted';
    return [ @{ $j->{stored} }, mirror_links(substr($e->{loc}, length $UB),
                                             @{ $list_rules{ $e->{list} } || \@rules }) ];
}

# The Resource List compared with the model of tree $t: (problems).
sub rl_problems {
    my ($rl, $t, @r) = @_;
    my @p;
    my %want = map { ($UB . esc($_) => expected_links($_, $t, @r)) } keys %$t;
    for my $loc (sort keys %want) {
        my $got = $rl->{entries}{$loc};
        if (!$got) { push @p, "$loc: not listed"; next }
        push @p, "$loc:\n  got  " . join("\n       ", @$got) . "\n  want " . join("\n       ", @{ $want{$loc} })
            unless join("\n", @$got) eq join("\n", @{ $want{$loc} });
    }
    push @p, map { "$_: listed, not in the tree" } grep { $_ ne '_dup' && !$want{$_} } sort keys %{ $rl->{entries} };
    push @p, map { "$_: listed twice" } @{ $rl->{entries}{_dup} || [] };
    return @p;
}

# Wait until the Resource List shows the model of the tree as it is now;
# one test.  Returns the list.
sub rl_follows {
    my ($what, @r) = @_;
    my ($rl, @p);
    my $ok = wait_for(sub {
        my $t = tree_state();
        $rl = resource_list() or return 0;
        @p = rl_problems($rl, $t, @r);
        return !@p;
    }, 30);
    ok($ok, "$what: every entry of the Resource List has the links the rules give")
        or diag(join("\n", @p[0 .. ($#p > 9 ? 9 : $#p)]));
    return $rl;
}

# Entries of the Change Lists for loc.
sub cl_count {
    my ($loc) = @_;
    my $c = change_lists() or return -1;
    return scalar grep { $_->{loc} eq $loc } @{ $c->{entries} };
}

# Make one change to the tree while the server runs and wait until it is
# journaled; its expected entry is the model at that moment.
sub change {
    my ($what, $op, $path, $content) = @_;
    my $loc = $UB . esc($path);
    my $before = cl_count($loc);
    if ($op eq 'deleted') { unlink "$www/$path" or die "$www/$path: $!" }
    else { make_path("$www/" . ($path =~ m{^(.*)/} ? $1 : '.')); put("$www/$path", $content) }
    my $t = tree_state();
    push @{ $journal{$loc} }, journaled($op, $path, $t, @rules);
    wait_ok(sub { cl_count($loc) > $before }, 30, "$what: the change is journaled");
    rl_follows("$what, the next Resource List", @rules);
}

# The Change Lists against the journal the test kept: (problems), the
# entries keyed "loc datetime" => [ln], and the model's changes keyed the
# same way.
sub cl_problems {
    my ($c) = @_;
    my (@p, %by, %jby, %seen);
    for my $e (@{ $c->{entries} }) {
        $by{"$e->{loc} $e->{datetime}"} = $e->{ln};
        my $k = $seen{ $e->{loc} }++;
        my $want = $journal{ $e->{loc} }[$k];
        if (!$want) { push @p, "$e->{loc} $e->{change} $e->{datetime}: a change the test did not make"; next }
        $jby{"$e->{loc} $e->{datetime}"} = $want;
        push @p, "$e->{loc}: change $e->{change}, the test made $want->{change}"
            if $e->{change} ne $want->{change};
        my $wl = cl_want($e, $want);
        push @p, "$e->{loc} $e->{change} $e->{datetime}:\n  got  " . join("\n       ", @{ $e->{ln} })
                 . "\n  want " . join("\n       ", @$wl)
            unless join("\n", @{ $e->{ln} }) eq join("\n", @$wl);
    }
    for my $loc (sort keys %journal) {
        my $n = scalar @{ $journal{$loc} };
        push @p, "$loc: $n changes made, " . ($seen{$loc} // 0) . " listed"
            unless ($seen{$loc} // 0) == $n;
    }
    return (\@p, \%by, \%jby);
}

# Entries of other documents for the same changes: each has exactly the
# <rs:ln> bytes $by gives for the change (a Change List entry's, or the
# model's at the moment of the change).  (problems, entries compared)
sub same_as_changes {
    my ($what, $by, @e) = @_;
    my @p;
    for my $e (@e) {
        my $cl = $by->{"$e->{loc} $e->{datetime}"};
        if (!$cl) { push @p, "$what: $e->{loc} $e->{datetime}: no such change"; next }
        push @p, "$what: $e->{loc} $e->{datetime}:\n  got  " . join("\n       ", @{ $e->{ln} })
                 . "\n  list " . join("\n       ", @$cl)
            unless join("\n", @{ $e->{ln} }) eq join("\n", @$cl);
    }
    return @p;
}

# The manifest of every package of a dump document (following an index):
# (manifest xml ...), or () while the document is not served.
my %manifest_of;   # sha-256 of a package => its manifest
sub manifests {
    my ($url) = @_;
    my $d = fetch_doc($url) // return ();
    my @pk = $d =~ /<sitemapindex/ ? () : map { unxml($_) } $d =~ m{<url>\s*<loc>([^<]*)</loc>}g;
    return map { manifests($_) } locs_in($d) if $d =~ /<sitemapindex/;
    my @m;
    for my $p (@pk) {
        my $r = get($p);
        die "$p: " . $r->status_line unless $r->code == 200;
        my $k = sha256_hex($r->content);
        $manifest_of{$k} //= do {
            save("$tmp/p.zip", $r->content);
            my $m = zip_member("$tmp/p.zip", 'manifest.xml');
            my $err = validate($m);
            push @invalid, "$p manifest.xml: $err" if $err;
            $m;
        };
        push @m, $manifest_of{$k};
    }
    return @m;
}

# The change notifications in the store (sealed ones), as entries.
sub notification_entries {
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "SELECT payload FROM notifications WHERE setname = 'lk' AND topic = 'change' AND sealed = 1 ORDER BY id" 2>&1`;
    return () if $out =~ /^\s*$/;
    my $rows = eval { JSON::PP::decode_json($out) } or die "sqlite3: $out";
    my @e;
    for my $row (@$rows) {
        my $err = validate($row->{payload});
        push @invalid, "notification: $err" if $err;
        push @e, entries($row->{payload});
    }
    return @e;
}

# Everything at a quiet moment (no change pending): the Resource List, the
# Change Lists, both dumps' manifests and the notifications.  Seven tests.
sub check_all {
    my ($what, @r) = @_;
    @invalid = ();
    my $rl = rl_follows("$what: Resource List", @r);
    my $c = change_lists();
    my ($p, $by, $jby) = $c ? cl_problems($c) : ([ 'no Change Lists' ], {}, {});
    ok($c && !@$p, "$what: every entry of every Change List has the links of the moment of its change")
        or diag(join("\n", @$p[0 .. ($#$p > 9 ? 9 : $#$p)]));

    # A resource whose links did not change since its newest change, in a
    # list written under the current mirrors, has the same bytes in its
    # newest Change List entry and in the Resource List.
    my $t = tree_state();
    my (%newest, @sp);
    $newest{ $_->{loc} } = $_ for @{ $c ? $c->{entries} : [] };
    my $compared = 0;
    for my $path (sort keys %$t) {
        my $e = $newest{ $UB . esc($path) } or next;
        next unless join("\n", @{ expected_links($path, $t, @r) })
                    eq join("\n", @{ cl_want($e, $journal{ $e->{loc} }[-1]) });
        $compared++;
        push @sp, "$e->{loc}:\n  list " . join("\n       ", @{ $e->{ln} }) . "\n  rl   "
                  . join("\n       ", @{ $rl->{entries}{ $e->{loc} } || [] })
            unless $rl && join("\n", @{ $e->{ln} }) eq join("\n", @{ $rl->{entries}{ $e->{loc} } || [] });
    }
    ok(!@sp, "$what: $compared resources unchanged since their newest change: the same <rs:ln> "
             . "bytes in the Change List and the Resource List")
        or diag(join("\n", @sp[0 .. ($#sp > 9 ? 9 : $#sp)]));

    # The Resource Dump once it has the Resource List's at (the list read
    # again: a later snapshot may have replaced the one above): its
    # manifests hold every resource with that list's bytes, which are the
    # model's.
    my (@m, @dp, $rld);
    my $same = wait_for(sub {
        my $d = get("$B/resourcesync/lk/resourcedump.xml");
        $rld = resource_list() or return 0;
        return 0 unless $d->code == 200 && root_at($d->content) eq $rld->{at};
        @m = manifests("$B/resourcesync/lk/resourcedump.xml");
        return 1;
    }, 60);
    @dp = $same ? rl_problems($rld, $t, @r) : ('no Resource Dump with the Resource List\'s at');
    my %in_dump;
    for my $e (map { entries($_) } @m) {
        push @dp, "$e->{loc}: twice in the dump" if $in_dump{ $e->{loc} }++;
        my $want = $rld->{entries}{ $e->{loc} };
        if (!$want) { push @dp, "$e->{loc}: in the dump, not in the Resource List"; next }
        push @dp, "$e->{loc}:\n  dump " . join("\n       ", @{ $e->{ln} }) . "\n  list "
                  . join("\n       ", @$want)
            unless join("\n", @{ $e->{ln} }) eq join("\n", @$want);
    }
    push @dp, map { "$_: in the Resource List, not in the dump" }
              grep { $_ ne '_dup' && !$in_dump{$_} } keys %{ $same ? $rld->{entries} : {} };
    ok($same && !@dp, "$what: the Resource Dump's manifests have the Resource List's <rs:ln> bytes "
                      . "(same at)")
        or diag(join("\n", @dp[0 .. ($#dp > 9 ? 9 : $#dp)]));

    # The Change Dump: a package per closed list, its manifest's entries
    # with the Change List's bytes.
    my %closed = map { ("$_->{loc} $_->{datetime}" => 1) } map { entries($_) } values %{ $c ? $c->{closed} : {} };
    my (@cd, %in_cd);
    wait_for(sub {   # until every closed list has its package (checked below)
        @cd = map { entries($_) } manifests("$B/resourcesync/lk/changedump.xml");
        %in_cd = map { ("$_->{loc} $_->{datetime}" => 1) } @cd;
        return !grep { !$in_cd{$_} } keys %closed;
    }, 30);
    my @cp = (same_as_changes('change dump', $by, @cd),
              map { "no Change Dump package has $_" } grep { !$in_cd{$_} } sort keys %closed);
    ok(!@cp, "$what: the Change Dump's manifests hold the " . scalar(keys %closed)
             . " changes of the closed lists with the Change Lists' <rs:ln> bytes")
        or diag(join("\n", @cp[0 .. ($#cp > 9 ? 9 : $#cp)]));

    # Change notifications: the same changes, each rendered when it was
    # journaled (the mirrors of that moment).
    my @ne;
    wait_for(sub {   # until the last change is in a sealed notification (checked below)
        @ne = notification_entries();
        my %n = map { ("$_->{loc} $_->{datetime}" => 1) } @ne;
        return !grep { !$n{$_} } keys %$by;
    }, 20);
    my %n = map { ("$_->{loc} $_->{datetime}" => 1) } @ne;
    my @np = (same_as_changes('notification', { map { ($_ => $jby->{$_}{ln}) } keys %$jby }, @ne),
              map { "no notification carries $_" } grep { !$n{$_} } sort keys %$by);
    ok(!@np, "$what: the change notifications (" . scalar(@ne)
             . " entries) carry every change with the <rs:ln> bytes of its moment")
        or diag(join("\n", @np[0 .. ($#np > 9 ? 9 : $#np)]));
    is_deeply([ @invalid ], [], "$what: every document, manifest and payload validates");
    return ($rl, $c);
}

# ---------------------------------------------------------------------------
# 1. The tree as it starts.

$srv->start_ok or exit 1;    # (start_ok shows why)
wait_ok(sub { resource_list() }, 60, 'the first Resource List is served');
my $initial = change_lists();
is(scalar(@{ $initial ? $initial->{entries} : [ 'none' ] }), 0, 'the first scan journals nothing');
{
    # The model itself, on a few entries spelled out: a guard against a
    # model that agrees with a wrong server.
    my $t = tree_state();
    my $l = expected_links('records/1.pdf', $t, @rules);
    is($l->[0], '<rs:ln rel="describedby" href="' . $UB . 'meta/1.xml" modified="'
               . $t->{'meta/1.xml'}{modified} . '" hash="md5:' . md5_hex($FILES{'meta/1.xml'})
               . ' sha-256:' . sha256_hex($FILES{'meta/1.xml'}) . '" length="'
               . length($FILES{'meta/1.xml'}) . '" type="' . $t->{'meta/1.xml'}{type} . '"/>',
       'model: the describedby link of records/1.pdf, by hand');
    is_deeply([ @$l[1 .. $#$l] ],
              [ '<rs:ln rel="collection" href="http://example.org/coll/lk?part=records&amp;fmt=xml" type="application/xml"/>',
                '<rs:ln rel="duplicate" href="http://mirror-a.example.org/lk/records/1.pdf" pri="1"/>',
                '<rs:ln rel="duplicate" href="https://mirror-b.example.net/data/records/1.pdf" pri="2"/>' ],
              'model: the other links of records/1.pdf, the mirrors last in their order, by hand');
    is_deeply(expected_links('docs/user notes.html', $t, @rules),
              [ qq(<rs:ln rel="alternate" href="${UB}docs/user%20notes.pdf"/>),
                qq(<rs:ln rel="describedby" href="${UB}meta/docs/user%20notes.xml" pri="3"/>),
                qq(<rs:ln rel="license" href="$B/licenses/cc-by.html"/>),
                '<rs:ln rel="duplicate" href="http://mirror-a.example.org/lk/docs/user%20notes.html" pri="1"/>',
                '<rs:ln rel="duplicate" href="https://mirror-b.example.net/data/docs/user%20notes.html" pri="2"/>' ],
              'model: a target that is missing without if-exists is a plain link, by hand');
    my $inv = expected_links('docs/guide.pdf', $t, @rules);
    like($inv->[-3], qr{^<rs:ln rel="canonical" href="\Q${UB}\Edocs/guide\.html" modified="[^"]+" hash="md5:\w{32} sha-256:\w{64}" length="\d+" type="text/html"/>$},
         'model: docs/guide.pdf carries rel="canonical" to docs/guide.html, after its forward links, before the mirrors');
    like((grep { /rel="alternate"/ } @{ expected_links('data/table.csv', $t, @rules) })[0] // '',
         qr{^<rs:ln rel="alternate" href="\Q${UB}\Edata/table\.csv\.gz" modified="[^"]+" hash="md5:\w{32} sha-256:\w{64}" length="\d+" type="[^"]+" encoding="gzip"/>$},
         'model: a target with an encoding, by hand');
    is(scalar(grep { /rel="describedby"/ } @{ expected_links('records/3.pdf', $t, @rules) }), 0,
       'model: if-exists without the target: no describedby link');
}
{
    # What the model takes from the files and GETs is what each file's own
    # entry says (lastmod, hash, length, type, encoding).
    my $t = tree_state();
    my $rl = resource_list();
    my %got = map { my $p = $_; ($p => $rl ? $rl->{own}{ $UB . esc($p) } : undef) } keys %$t;
    my %want = map { my $a = $t->{$_}; ($_ => { map { ($_ => $a->{$_}) } grep { defined $a->{$_} } keys %$a }) } keys %$t;
    is_deeply(\%got, \%want, 'model: the attributes of each file are those of its own entry');
}
check_all('at start', @rules);

# 2. Targets created, changed and deleted while the server runs, one at a
# time.
change('meta/3.xml created', 'created', 'meta/3.xml', qq(<?xml version="1.0"?>\n<record id="3"/>\n));
change('meta/1.xml changed', 'updated', 'meta/1.xml',
       qq(<?xml version="1.0"?>\n<record id="1" version="2">longer</record>\n));
change('meta/2.xml deleted', 'deleted', 'meta/2.xml');
change('meta/docs/guide.xml created (a rule without if-exists)', 'created', 'meta/docs/guide.xml',
       qq(<?xml version="1.0"?>\n<about doc="guide"/>\n));
change('records/1.pdf changed (the source of an inverse link)', 'updated', 'records/1.pdf',
       "%PDF-1.4 record 1, second edition\n");
change('records/5.pdf created without metadata', 'created', 'records/5.pdf', "%PDF-1.4 record 5\n");
change('docs/guide.pdf deleted (an alternate without if-exists)', 'deleted', 'docs/guide.pdf');
change('docs/guide.pdf created again', 'created', 'docs/guide.pdf', "%PDF-1.4 the guide, again\n");
my ($rl2, $c2) = check_all('after the changes', @rules);
ok($c2 && keys %{ $c2->{closed} } >= 1, 'after the changes: a Change List is closed (its Change Dump package was compared)');

# 3. Changes while the server is stopped (each independent of the others'
# links, so that the order in which the next start journals them does not
# matter): a target appears for a listed record, a target changes, a
# target without a source goes, a source goes.
ok($srv->stop, 'the server stops');
my %offline = ('meta/5.xml' => [ 'created', qq(<?xml version="1.0"?>\n<record id="5"/>\n) ],
               'meta/10.xml' => [ 'updated', qq(<?xml version="1.0"?>\n<record id="10" v="2"/>\n) ],
               'meta/4.xml' => [ 'deleted' ], 'records/3.pdf' => [ 'deleted' ]);
for my $p (sort keys %offline) {
    if ($offline{$p}[0] eq 'deleted') { unlink "$www/$p" or die "$www/$p: $!" }
    else { put("$www/$p", $offline{$p}[1]) }
}
$srv->start_ok('the server starts again');
{
    # (the tree as it was while the server was stopped: nothing changed since)
    my $t = tree_state();
    for my $p (sort keys %offline) {
        push @{ $journal{ $UB . esc($p) } }, journaled($offline{$p}[0], $p, $t, @rules);
    }
}
wait_ok(sub { !grep { cl_count($UB . esc($_)) < scalar @{ $journal{ $UB . esc($_) } } } keys %offline },
        60, 'the changes made while it was stopped are journaled');
my ($rl3, $c3) = check_all('after a stop', @rules);

# 4. The directives change across a restart: the links are rendered again,
# from the rows as they are; no change is journaled and nothing is hashed.
# The lists closed so far keep the mirrors they were written with.
my $entries_before = scalar @{ $c3->{entries} };
my %closed_before = %{ $c3->{closed} };
$list_rules{$_} = [ @rules ] for keys %closed_before;
ok($srv->stop, 'the server stops for the new directives');
my $mark = length $srv->log_text;
@rules = model_rules(@RULES_B);
$srv->write_conf(conf_for(@RULES_B));
$srv->start_ok('the server starts with other links');
my $scan = wait_for(sub { substr($srv->log_text, $mark) =~ /set lk: scanned \d+ files .*?, (\d+) bytes hashed\)/ ? [$1] : undef }, 60);
is($scan ? $scan->[0] : 'no scan line', 0, 'new directives: the first scan hashes nothing');
my ($rl4, $c4) = check_all('new directives', @rules);
is(scalar @{ $c4 ? $c4->{entries} : [] }, $entries_before, 'new directives: no change is journaled');
my @changed = grep { !defined $c4->{closed}{$_} || $c4->{closed}{$_} ne $closed_before{$_} } sort keys %closed_before;
is_deeply(\@changed, [], 'new directives: every closed Change List has the same bytes');
ok(!grep({ /profile/ } map { @$_ } values %{ $rl4 ? $rl4->{entries} : {} })
   && grep({ /mirror-c\.example\.com/ } map { @$_ } values %{ $rl4 ? $rl4->{entries} : {} }),
   'new directives: the profile links are gone, the third mirror is there');

# 4b. The mirrors alone change across a restart: no row is resolved again
# (no line about link rules), every part of the Resource List is written
# again (parts are otherwise kept), the open Change List's ETag changes,
# and every document carries the new mirrors, each once (check_all
# compares every <rs:ln> with the model).
my $c4closed = $c4 ? $c4->{closed} : {};
$list_rules{$_} //= [ @rules ] for keys %$c4closed;
my ($gen4) = reverse part_gens($rl4);
my $open4 = open_list_url();
my $etag_open4 = $open4 ? head($open4)->header('ETag') : undef;
ok($srv->stop, 'the server stops for other mirrors');
$mark = length $srv->log_text;
@rules = model_rules(@RULES_C);
$srv->write_conf(conf_for(@RULES_C));
$srv->start_ok('the server starts with other mirrors');
$scan = wait_for(sub { substr($srv->log_text, $mark) =~ /set lk: scanned \d+ files .*?, (\d+) bytes hashed\)/ ? [$1] : undef }, 60);
is($scan ? $scan->[0] : 'no scan line', 0, 'new mirrors: the first scan hashes nothing');
my ($rl5, $c5) = check_all('new mirrors', @rules);
is(scalar @{ $c5 ? $c5->{entries} : [] }, $entries_before, 'new mirrors: no change is journaled');
unlike(substr($srv->log_text, $mark), qr/link rules changed/, 'new mirrors: no row is resolved again');
my @gens = part_gens($rl5);
ok($rl5 && @{ $rl5->{parts} } > 1 && @gens == 1 && $gens[0] ne '?' && $gens[0] > ($gen4 // 0),
   'new mirrors: every part of the Resource List Index is written again ('
   . scalar(@{ $rl5 ? $rl5->{parts} : [] }) . ' parts)')
    or diag("part generations now: @gens; the newest before: " . ($gen4 // 'none'));
my $open5 = open_list_url();
isnt($open5 && head($open5)->header('ETag'), $etag_open4,
     'new mirrors: the open Change List, the same records, has another ETag');

# 5. The conformance crawl.
my $rs_check = $ENV{RS_CHECK} // "$FindBin::Bin/../../shared/tools/rs-check";
SKIP: {
    skip "no rs-check at $rs_check", 1 unless -x $rs_check;
    my $out = `$rs_check crawl $B --fetch-resources all --verify-dumps 2>&1`;
    ok($? == 0 && $out =~ /\d+ passed, 0 failed\s*$/, 'rs-check crawl --fetch-resources all --verify-dumps: 0 failed')
        or diag($out);
}
my @bad = grep { /\[[a-z_0-9]+:(?:warn|error|crit|alert|emerg)\]/ } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no warning or error in the log');
$srv->stop;
