# SPDX-License-Identifier: Apache-2.0
use strict;
use warnings;
# rs:md type and encoding are what a GET of the resource returns
# (ResourceSync 1.1 section 7: encoding "should be equal to the value of
# the content-encoding header in the HTTP response", type is "the Media
# Type of a resource representation returned when the URI in <loc> is
# dereferenced").  A private server whose set has AddEncoding (gzip .gz,
# compress .Z), an AddType, a ForceType in a <Files> section and plain
# files: for every entry of the Resource List, of the Change Lists, of the
# Resource and Change Dumps' manifests and of the change topic's
# notification, the type equals the media type of the Content-Type a real
# GET of its <loc> returns (without parameters) and the encoding its
# Content-Encoding (both absent when the response has none).  Then a restart with another
# AddType: the new type is listed, and the Change List says the file was
# updated.
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(get doc xpc wait_for wait_ok private_server set_conf STATE_CONF fetch_list
              changes_of put validate);
use RSDump qw(dump_packages bad_log_lines);
use IO::Compress::Gzip qw(gzip);

plan tests => 25;

umask 022;

sub gz { my $out; gzip(\$_[0] => \$out) or die "gzip failed"; return $out }

sub conf {
    my ($rst_type) = @_;
    return STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncHub on\n"
           . set_conf('m', 'www/data', 'ResourceSyncNotify on', 'ResourceSyncNotifyDelay 500ms',
                      'ResourceSyncResourceDump 1', 'ResourceSyncChangeDump on',
                      'ResourceSyncMaxEntries 4', 'AddEncoding gzip .gz',
                      'AddEncoding compress .Z', "AddType $rst_type .rst",
                      '<Files "forced.bin">', '    ForceType text/x-forced', '</Files>');
}

my %FILES = ('plain.txt' => "plain\n", 'page.html' => "<p>page</p>\n",
             'data.txt.gz' => gz("compressed text\n"), 'sub/archive.tar.gz' => gz("not a tar\n"),
             'twice.gz.Z' => "pretend\n", 'table.rst' => "a|b\n", 'forced.bin' => "forced\n",
             'noext' => "no extension\n");

my $srv = private_server(conf => conf('application/x-rs-test'));
$srv->populate(dirs => ['www/data/sub'],
               files => { map { ("www/data/$_" => $FILES{$_}) } keys %FILES });
$srv->start_ok('server starts');
my $B = $srv->base;
my $data = $srv->dir . '/www/data';

# The media type of a Content-Type value (its parameters left out).
sub media_type {
    my ($ct) = @_;
    return undef unless defined $ct;
    $ct =~ s/\s*;.*//s;
    return length $ct ? $ct : undef;
}

my %got; # loc -> [type, encoding] of a real GET (fetched once per phase)
sub get_media {
    my ($loc) = @_;
    $got{$loc} //= do {
        my $r = get($loc);
        $r->is_success ? [ media_type(scalar $r->header('Content-Type')),
                           scalar $r->header('Content-Encoding') ]
                       : [ 'GET ' . $r->code ];
    };
    return @{ $got{$loc} };
}

# Entries whose type or encoding differs from a GET of their loc, as
# "loc: listed type/encoding, GET type/encoding" lines (deletions have
# neither and are skipped).
sub mismatches {
    my @bad;
    for my $e (@_) {
        next if ($e->{change} // '') eq 'deleted';
        my ($t, $enc) = get_media($e->{loc});
        my $s = sub { join '/', map { $_ // '-' } @_ };
        push @bad, "$e->{loc}: listed " . $s->($e->{type}, $e->{encoding}) . ", GET "
                   . $s->($t, $enc)
            if $s->($e->{type}, $e->{encoding}) ne $s->($t, $enc);
    }
    return \@bad;
}

sub by_name { +{ map { (($_->{loc} =~ m{/data/(.+)$})[0] // $_->{loc} => $_) } @_ } }

# ----------------------------------------------------------- Resource List
my $rl = wait_for(sub { my $l = fetch_list('m', $B); @{ $l->{entries} } == keys %FILES ? $l : undef },
                  60);
is($rl && scalar @{ $rl->{entries} }, scalar keys %FILES, 'every file is listed');
my $rn = by_name(@{ $rl ? $rl->{entries} : [] });
is($rn->{'data.txt.gz'}{encoding}, 'gzip', 'data.txt.gz (AddEncoding gzip .gz) is listed with encoding gzip');
is($rn->{'twice.gz.Z'}{encoding}, scalar get("$B/data/twice.gz.Z")->header('Content-Encoding'),
   'twice.gz.Z: both codings, as httpd sends them (' . ($rn->{'twice.gz.Z'}{encoding} // '-') . ')');
is($rn->{'forced.bin'}{type}, 'text/x-forced', 'forced.bin has the ForceType of its <Files> section');
is($rn->{'table.rst'}{type}, 'application/x-rs-test', 'table.rst has the AddType');
ok(!defined $rn->{'plain.txt'}{encoding}, 'plain.txt has no encoding');
is(join('', map { validate($_) // '' } @{ $rl ? $rl->{docs} : [''] }), '',
   'the Resource List validates (the XSD has rs:md encoding)');
is_deeply(mismatches(@{ $rl ? $rl->{entries} : [] }), [],
          'Resource List: type and encoding of every entry equal a GET\'s Content-Type and Content-Encoding');

# ------------------------------------------------------------ Change Lists
# Every file changes after the baseline, new.txt.gz first (the Change
# List it is in closes at ResourceSyncMaxEntries, and the Change Dump
# packages it); data.txt.gz last, alone, so that the change topic's newest
# notification carries it.
put("$data/new.txt.gz", gz("new\n"));
for my $f (grep { $_ ne 'data.txt.gz' } sort keys %FILES) {
    put("$data/$f", $f =~ /\.gz$/ ? gz("changed $f\n") : "changed $f\n");
}
my @others = grep { $_ ne 'data.txt.gz' } (sort keys %FILES), 'new.txt.gz';
my $cl = wait_ok(sub { my $n = by_name(changes_of('m', $B)); (grep { !$n->{$_} } @others) ? undef : $n },
                 60, 'the Change List lists the changes');
is_deeply(mismatches(values %{ $cl || {} }), [],
          'Change List: type and encoding of every entry equal a GET\'s');
is($cl && $cl->{'new.txt.gz'}{encoding}, 'gzip', '... new.txt.gz is created with encoding gzip');

# ---------------------------------------------------------- notification
put("$data/data.txt.gz", gz("compressed text, changed\n"));
my $note = wait_for(sub {
    my $r = get("$B/resourcesync/m/notify/change");
    $r->code == 200 && $r->content =~ m{/data/data\.txt\.gz</loc>} ? $r->content : undef }, 60);
ok($note, 'the change topic serves a notification with data.txt.gz');
my @ne = RSTest::_entries($note // '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>');
is(by_name(@ne)->{'data.txt.gz'}{encoding}, 'gzip', '... listed with encoding gzip');
is_deeply(mismatches(@ne), [], 'notification: type and encoding of every entry equal a GET\'s');
is($note && validate($note), undef, '... and the notification validates');

# ------------------------------------------------------------- Resource Dump
# A dump built after the changes (it lists new.txt.gz).
my @manifest;
wait_for(sub {
    @manifest = ();
    for my $p (dump_packages("$B/resourcesync/m/resourcedump.xml")) {
        my $r = get($p->{manifest});
        return undef unless $r->is_success;
        push @manifest, RSTest::_entries($r->content);
    }
    return by_name(@manifest)->{'new.txt.gz'} ? 1 : undef;
}, 60);
my $mn = by_name(@manifest);
is($mn->{'data.txt.gz'} && $mn->{'data.txt.gz'}{encoding}, 'gzip',
   'Resource Dump manifest: data.txt.gz with encoding gzip');
is_deeply(mismatches(@manifest), [],
          'Resource Dump manifests: type and encoding of every entry equal a GET\'s');

# --------------------------------------------------------------- Change Dump
# The packages of the closed Change Lists, until one holds new.txt.gz.
my @cd;
wait_for(sub {
    @cd = ();
    my $r = get("$B/resourcesync/m/changedump.xml");
    return undef unless $r->code == 200;
    for my $m (map { $_->value } xpc(doc($r->content))->findnodes(
                   '/sm:urlset/sm:url/rs:ln[@rel="contents"]/@href')) {
        my $mr = get($m);
        return undef unless $mr->is_success;
        push @cd, RSTest::_entries($mr->content);
    }
    return by_name(@cd)->{'new.txt.gz'} ? 1 : undef;
}, 60);
my $cn = by_name(@cd);
is($cn->{'new.txt.gz'} && $cn->{'new.txt.gz'}{encoding}, 'gzip',
   'Change Dump manifest: new.txt.gz with encoding gzip');
is_deeply(mismatches(@cd), [], 'Change Dump manifests: type and encoding of every entry equal a GET\'s');

# --------------------------------------------- restart with another AddType
$srv->stop;
$srv->write_conf(conf('application/x-rs-other'));
$srv->start_ok('starts again with another AddType for .rst');
%got = ();
my $l2 = wait_for(sub {
    my $l = fetch_list('m', $B);
    (by_name(@{ $l->{entries} })->{'table.rst'}{type} // '') eq 'application/x-rs-other' ? $l : undef
}, 60);
is($l2 && by_name(@{ $l2->{entries} })->{'table.rst'}{type}, 'application/x-rs-other',
   'table.rst is listed with the new type');
is_deeply(mismatches(@{ $l2 ? $l2->{entries} : [] }), [],
          'Resource List after the restart: every entry equals a GET');
my $upd = wait_for(sub {
    my @u = grep { $_->{loc} =~ m{/table\.rst$} && ($_->{type} // '') eq 'application/x-rs-other' }
            changes_of('m', $B);
    @u ? $u[-1] : undef }, 60);
is($upd && $upd->{change}, 'updated', 'the Change List has table.rst updated with the new type');

$srv->stop;
is_deeply([bad_log_lines($srv->log_text)], [], 'no error or crash in the error log');
