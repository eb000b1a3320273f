# SPDX-License-Identifier: Apache-2.0
# The status page's formats (HTML, ?auto, ?json, ?text) from one model,
# checked against a known tree; the ResourceSync section of mod_status'
# server-status; the progress line of a full scan, with its estimated
# total (a name count at the first scan, the previous scan's files after
# a restart), the interval shortened through RESOURCESYNC_PROGRESS_MS.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(set_conf STATE_CONF STATUS_CONF get wait_for);
use JSON::PP ();

plan tests => 47;

# 100 directories of 30 files, sizes 1..97 bytes; and one file the
# watcher (running as nobody) cannot read, whose name needs escaping.
my (%files, $bytes);
for my $d (1 .. 100) {
    for my $f (1 .. 30) {
        my $size = ($d * 31 + $f) % 97 + 1;
        $files{sprintf('www/f/d%03d/f%02d.txt', $d, $f)} = 'x' x $size;
        $bytes += $size;
    }
}
my $NFILES = 3000;
my $ODD = q{q"uo\te<b>.txt};
my $srv = RSTest::private_server(
    env  => { RESOURCESYNC_PROGRESS_MS => 1 },
    conf => STATE_CONF . "ResourceSyncNodeName web-1.example:2\n"
          . "LoadModule status_module /usr/lib/apache2/modules/mod_status.so\n"
          . "<Location /server-status>\n    SetHandler server-status\n</Location>\n"
          . set_conf('f', 'www/f') . STATUS_CONF);
$srv->populate(files => \%files);
my $F = $srv->dir . '/www/f';
RSTest::put("$F/$ODD", "secret\n");
chmod 0000, "$F/$ODD";
my $B = $srv->base;
$srv->start_ok;

# ?auto as { global key => value, sets => { name => { key => value } } };
# the keys of a set's lines without their "Set" prefix.
sub auto {
    my $r = get("$B/rs-status?auto");
    return undef unless $r->code == 200;
    my (%h, $set);
    for (split /\n/, $r->content) {
        my ($k, $v) = /^(\w+): (.*)$/ or die "not a Key: value line: $_";
        if ($k eq 'Set') { $set = $v; $h{sets}{$set} = {} }
        elsif ($set && $k =~ /^Set(\w+)$/) { $h{sets}{$set}{$1} = $v }
        else { $set = undef; $h{$k} = $v }
    }
    $h{type} = $r->header('Content-Type');
    return \%h;
}

my $st = wait_for(sub { my $a = auto(); $a && $a->{sets}{f} && $a->{sets}{f}{Generation} >= 1
                        ? $a : undef }, 60);
ok($st, '?auto: the set published its first Resource List') or BAIL_OUT('no snapshot');
is($st->{type}, 'text/plain; charset=utf-8', '?auto: plain text');
my $f = $st->{sets}{f};
is($f->{Files}, $NFILES, '?auto: files listed');
is($f->{Bytes}, $bytes, '?auto: bytes of the listed files');
is($f->{Mode}, 'watching', '?auto: mode');
is($f->{Available}, 'yes', '?auto: available');
is($f->{Watches}, 101, '?auto: a watch per directory');
is($f->{Scanning}, 'no', '?auto: not scanning');
like($f->{SnapshotAge}, qr/^\d+\.\d$/, '?auto: snapshot age in seconds');
is($st->{WatcherPid}, $srv->watcher_pid, '?auto: watcher pid');
is($st->{StoreHealth}, 'ok', '?auto: store health');
is($st->{NodeName}, 'web-1.example:2', '?auto: node name (ResourceSyncNodeName)');
is($st->{Store}, 'sqlite', '?auto: store kind');
is($st->{StoreLocation}, '-', '?auto: no location for the SQLite store');
is($f->{WrittenBy}, 'this node', '?auto: the set is written by this node');
like($st->{StoreBytes}, qr/^[1-9]\d*$/, '?auto: store size');
is($st->{ScanTotal}, $NFILES + 1, '?auto: the first scan expected the names counted');
is($st->{ScanTotalSource}, 'name-count', '?auto: ... and says it counted them');
open my $lim, '<', '/proc/sys/fs/inotify/max_user_watches' or die $!;
chomp(my $limit = <$lim>);
is($st->{InotifyLimit}, $limit, '?auto: inotify limit');
is($st->{InotifyWatches}, 101, '?auto: inotify watches used');
like($st->{LastError}, qr/^set f: cannot read '\Q$ODD\E'/, '?auto: last error, as it is');

# ?json: the same numbers; null where there is nothing; strings escaped.
my $r = get("$B/rs-status?json");
is($r->header('Content-Type'), 'application/json', '?json: application/json');
my $j = eval { JSON::PP->new->decode($r->content) };
ok($j, '?json: valid JSON') or diag($@ . $r->content);
is($j->{sets}{f}{Files}, $NFILES, '?json: files');
is($j->{sets}{f}{Bytes}, $bytes, '?json: bytes');
ok(!defined $j->{sets}{f}{LastChange} && exists $j->{sets}{f}{LastChange},
   '?json: no change yet is null');
is($j->{global}{WatcherPid}, $srv->watcher_pid, '?json: watcher pid');
is($j->{global}{NodeName}, 'web-1.example:2', '?json: node name');
is($j->{global}{Store}, 'sqlite', '?json: store kind');
like($j->{global}{LastError}, qr/^set f: cannot read '\Q$ODD\E'/,
     '?json: the last error decodes to its exact text');

# HTML (default): a page with a table per set, values escaped.
$r = get("$B/rs-status");
is($r->header('Content-Type'), 'text/html; charset=utf-8', 'HTML: text/html');
my $html = $r->content;
like($html, qr{<title>ResourceSync status</title>}, 'HTML: title');
like($html, qr{<h2>Set f</h2>\s*<table}, 'HTML: a table for the set');
like($html, qr{<tr><th align="left">Files</th><td>$NFILES</td></tr>}, 'HTML: files row');
like($html, qr{<tr><th align="left">NodeName</th><td>web-1\.example:2</td></tr>}, 'HTML: node name row');
like($html, qr{<tr><th align="left">Bytes</th><td>$bytes</td></tr>}, 'HTML: bytes row');
like($html, qr{q&quot;uo\\te&lt;b&gt;\.txt}, 'HTML: the last error escaped');
unlike($html, qr{<b>}, 'HTML: nothing of it unescaped');

# ?text: the plain text of before.
my $text = get("$B/rs-status?text")->content;
like($text, qr/^set: f generation=\d+ entries=$NFILES /m, '?text: the plain text');
like($text, qr/^node: web-1\.example:2 store=sqlite$/m, '?text: node name and store');

# mod_status' server-status: the ResourceSync section, both ways.
my $ss = get("$B/server-status?auto")->content;
like($ss, qr/^ResourceSyncSet: f\nResourceSyncSetMode: watching$/m, 'server-status?auto: set lines');
like($ss, qr/^ResourceSyncSetFiles: $NFILES$/m, 'server-status?auto: files');
like(get("$B/server-status")->content, qr{<h2>ResourceSync</h2>.*<h3>Set f</h3>}s,
     'server-status: the HTML section');

# The progress line of the first scan (every millisecond here), at notice, with
# its estimated total; after a restart the estimate is the store's files.
like($srv->log_text, qr/\[resourcesync:notice\] .*set f: scanning: \d+ of about 3001 files \(estimate: name-count\), \d+ files\/s, about \d+ s left/,
     'first scan: a progress line with the counted total');
$srv->stop;
$srv->start_ok('restarted');
ok(wait_for(sub { $srv->log_text =~ /\[resourcesync:notice\] .*set f: scanning: \d+ of about \d+ files \(estimate: previous-scan\), \d+ files\/s, about \d+ s left/ }, 60),
   'after a restart: the previous scan\'s files are the estimate');
