# SPDX-License-Identifier: Apache-2.0
# Framework notifications of configuration changes (ResourceSyncNotify on):
# the very first start announces the Capability List and the Source
# Description (both created); a restart with the same configuration
# announces nothing more; a restart with the Resource Dump enabled
# announces the Capability List (updated) in one notification; a restart
# with a second set announces the Source Description (updated) on the
# framework topic of both sets (the new set's Capability List created on
# its own); a restart without it announces its Capability List deleted and
# the Source Description updated on the topic that remains.  Each notification's rs:ln elements are those of Framework
# Notification 1.0.1, section 3: rel="up" to the Source Description when
# it is about the Capability List, none when it is about the Source
# Description alone.  Private server, stopped and started with new
# configurations; the outbox is read with sqlite3.
use strict;
use warnings;
use Apache::Test qw(-withtestmore);
use FindBin;
use lib "$FindBin::Bin/lib";
use RSTest qw(started_server set_conf STATE_CONF get xpc doc validate wait_for cap_url sd_url);
use JSON::PP ();

plan tests => 22;

my $base_conf = STATE_CONF . "LogLevel info resourcesync:debug\nResourceSyncHub on\n";
my $srv = started_server(
    conf => $base_conf . set_conf('a', 'www/a', 'ResourceSyncNotify on'),
    files => { 'www/a/x.txt' => "x\n", 'www/b/y.txt' => "y\n" });
my $B = $srv->base;
my $db = $srv->dir . '/state/state.db';
my ($cap_a, $cap_b, $sd) = (cap_url('a', $B), cap_url('b', $B), sd_url($B));

sub rows {
    my ($sql) = @_;
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    return [] if $out =~ /^\s*$/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}

# The framework notifications of a set that announce the Capability List
# or the Source Description: one string a notification, its entries as
# "capability change loc" (and " ln rel href" for each rs:ln of the
# entry) joined by ", ", then " | ln: " and the <urlset>'s rs:ln as
# "rel href" ("none" without any).
sub config_notes {
    my ($set) = @_;
    my @notes;
    for my $n (@{ rows("SELECT payload FROM notifications WHERE setname = '$set' "
                       . "AND topic = 'framework' AND sealed = 1 ORDER BY id") }) {
        my $x = xpc(doc($n->{payload}));
        my $ln = sub { map { ' ln ' . $_->getAttribute('rel') . ' ' . $_->getAttribute('href') }
                       $x->findnodes('rs:ln', $_[0]) };
        my @e = map { join(' ', $x->findvalue('rs:md/@capability', $_),
                                $x->findvalue('rs:md/@change', $_), $x->findvalue('sm:loc', $_))
                      . join('', $ln->($_)) }
                $x->findnodes('/sm:urlset/sm:url[rs:md/@capability = "capabilitylist" '
                              . 'or rs:md/@capability = "description"]');
        my $up = join(',', map { substr($_, 4) } $ln->(($x->findnodes('/sm:urlset'))[0]));
        push @notes, join(', ', @e) . ' | ln: ' . ($up || 'none') if @e;
    }
    return \@notes;
}

# Inode of a set's framework topic file (0 when missing): every watcher
# start rewrites it (a new file renamed over the old one) after its check
# of the configuration, so a new inode says the check is done.
sub topic_ino { (stat($srv->dir . "/state/notify/$_[0]/framework.xml"))[1] // 0 }

# Stop, rewrite the configuration, start, and wait until the watcher's
# start has rewritten the framework topic of each of @sets.
sub restart {
    my ($conf, $name, @sets) = @_;
    $srv->stop;
    my %ino = map { $_ => topic_ino($_) } @sets;
    $srv->write_conf($base_conf . $conf);
    $srv->start_ok($name);
    return wait_for(sub { !grep { my $i = topic_ino($_); !$i || $i == $ino{$_} } @sets }, 60);
}

# ----------------------------------------------------------- first start
my $first = [ "capabilitylist created $cap_a, description created $sd | ln: up $sd" ];
ok(wait_for(sub { -e $srv->dir . '/state/notify/a/documents.digest' && @{ config_notes('a') } }, 60),
   'first start: framework notification and digests stored');
is_deeply(config_notes('a'), $first,
          'first start: Capability List and Source Description created, once');

# ---------------------------------------------- same configuration again
ok(restart(set_conf('a', 'www/a', 'ResourceSyncNotify on'), 'restart, same configuration', 'a'),
   'same configuration: the watcher rewrote the topic');
is_deeply(config_notes('a'), $first, 'same configuration: nothing new announced');

# ------------------------------------------------ Resource Dump enabled
my $dump = set_conf('a', 'www/a', 'ResourceSyncNotify on', 'ResourceSyncResourceDump 1');
ok(restart($dump, 'restart with the Resource Dump', 'a'),
   'Resource Dump: the watcher rewrote the topic');
is_deeply(config_notes('a'), [ @$first, "capabilitylist updated $cap_a | ln: up $sd" ],
          'Resource Dump: one notification, Capability List updated');

ok(restart($dump, 'restart, same configuration again', 'a'),
   'same configuration again: the watcher rewrote the topic');
is_deeply(config_notes('a'), [ @$first, "capabilitylist updated $cap_a | ln: up $sd" ],
          'same configuration again: nothing new announced');

# ------------------------------------------------------- second set added
ok(restart($dump . set_conf('b', 'www/b', 'ResourceSyncNotify on'), 'restart with a second set',
           'a', 'b'), 'second set: the watcher rewrote both topics');
is_deeply(config_notes('a'),
          [ @$first, "capabilitylist updated $cap_a | ln: up $sd",
            "description updated $sd | ln: none" ],
          'second set: Source Description updated on the first set\'s topic');
is_deeply(config_notes('b'), [ "capabilitylist created $cap_b, description updated $sd | ln: up $sd" ],
          'second set: its first start on its own topic');

# ----------------------------------------------------- second set removed
ok(restart($dump, 'restart without the second set', 'a'),
   'second set removed: the watcher rewrote the topic that remains');
is_deeply(config_notes('a'),
          [ @$first, "capabilitylist updated $cap_a | ln: up $sd",
            "description updated $sd | ln: none",
            "capabilitylist deleted $cap_b, description updated $sd | ln: up $sd" ],
          'second set removed: its Capability List deleted, the Source Description updated');
is(get("$B/resourcesync/b/notify/framework")->code, 404, 'second set removed: its topic is gone');

# Every framework notification validates.
my @invalid = grep { $_ } map { validate($_->{payload}) }
              @{ rows("SELECT payload FROM notifications WHERE topic = 'framework' AND sealed = 1") };
is_deeply(\@invalid, [], 'every framework notification validates');

my @bad = grep { /\[resourcesync:(warn|error|crit|alert|emerg)\]/ } split /\n/, $srv->log_text;
is_deeply(\@bad, [], 'no unexpected warnings or errors');
