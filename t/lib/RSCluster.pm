# SPDX-License-Identifier: Apache-2.0
package RSCluster;
# Several httpd nodes on one tree and one PostgreSQL store, behind httpd's
# own mod_proxy_balancer, for the tests of a shared store: each node is a
# private server (RSTest::Server) with its own state directory, the same
# set and ResourceSyncBaseURL the balancer's URL; the balancer is a
# private server too, whose only job is ProxyPass to the nodes.
#
#   my $c = RSCluster->new(pg => $pg, nodes => [qw(a b)], set => \@directives,
#                          socket => 'a',       # node a reaches the store
#                                                # through the Unix socket
#                          env => { b => {...} }); # node b's environment
#                                                # (RSTest::Server's env)
#   $c->start_ok('a'); $c->start_lb_ok;
#   $c->node('a')      # its RSTest::Server
#   $c->base           # the balancer's URL (every node's base URL)
#   $c->tree           # the set's directory
#   $c->at('a', $url)  # GET of a base-URL document from node a directly
#   $c->writer         # the node that holds the set's lease ('' if none)
use strict;
use warnings;
use File::Basename ();
use File::Path ();
use File::Temp ();
use RSTest qw(get wait_for STATE_CONF STATUS_CONF);

my $MODS = '/usr/lib/apache2/modules';

sub new {
    my ($class, %o) = @_;
    my $self = bless { pg => $o{pg}, names => $o{nodes}, set => $o{set} || [],
                       setname => $o{setname} || 'r', socket => $o{socket} || '',
                       extra => $o{extra} // '', failover => $o{failover} || 2 }, $class;
    $self->{lb} = RSTest::private_server();
    # One ServerRoot and DocumentRoot for every node (every other path in
    # their configurations is absolute or left out of the configuration's
    # fingerprint, which must be the same on every node, as it is where
    # nodes run one installation on one tree).
    my $root = File::Temp::tempdir('rs-cluster-XXXXXX', DIR => RSTest::t_dir() . '/logs',
                                   CLEANUP => 0);
    for my $n (@{ $o{nodes} }) {
        $self->{nodes}{$n} = RSTest::private_server(server_root => $root, docroot => "$root/www",
                                                    $o{env} && $o{env}{$n} ? (env => $o{env}{$n}) : ());
    }
    $self->{tree} = "$root/www/$self->{setname}";
    File::Path::make_path($self->{tree});
    chmod 0755, $root, "$root/www", $self->{tree};
    $self->write_conf($_) for @{ $o{nodes} };
    $self->{lb}->write_conf($self->lb_conf);
    return $self;
}

sub node   { $_[0]{nodes}{ $_[1] } }
sub names  { @{ $_[0]{names} } }
sub lb     { $_[0]{lb} }
sub base   { $_[0]{lb}->base }
sub tree   { $_[0]{tree} }
sub pg     { $_[0]{pg} }
sub setname { $_[0]{setname} }

# The node's configuration; extra directives of the set in @set (default:
# the cluster's).
sub node_conf {
    my ($self, $name, @set) = @_;
    @set = @{ $self->{set} } unless @set;
    my $dsn = $self->{socket} eq $name ? $self->{pg}->socket_dsn("node-$name")
                                       : $self->{pg}->dsn . " application_name=node-$name";
    return STATE_CONF . qq(ResourceSyncStore pgsql "$dsn"\n)
        . "ResourceSyncNodeName node-$name\nResourceSyncFailover $self->{failover}\n"
        . "ResourceSyncBaseURL ${\ $self->base}\nResourceSyncRescanInterval 3600\n"
        . $self->{extra}
        . qq(<Directory "$self->{tree}">\n    ResourceSyncSet $self->{setname}\n)
        . join('', map { "    $_\n" } @set) . "</Directory>\n" . STATUS_CONF;
}

sub write_conf {
    my ($self, $name, @set) = @_;
    $self->node($name)->write_conf($self->node_conf($name, @set));
}

sub lb_conf {
    my ($self) = @_;
    my $members = join '', map {
        "    BalancerMember \"${\ $self->node($_)->base}\" retry=1 connectiontimeout=2 timeout=30\n"
    } $self->names;
    return <<"CONF";
LoadModule proxy_module $MODS/mod_proxy.so
LoadModule proxy_http_module $MODS/mod_proxy_http.so
LoadModule proxy_balancer_module $MODS/mod_proxy_balancer.so
LoadModule slotmem_shm_module $MODS/mod_slotmem_shm.so
LoadModule lbmethod_byrequests_module $MODS/mod_lbmethod_byrequests.so
<Proxy "balancer://rs">
$members    ProxySet lbmethod=byrequests
</Proxy>
ProxyPass "/" "balancer://rs/"
CONF
}

sub start_ok    { my ($self, $n, $what) = @_; $self->node($n)->start_ok($what // "node $n starts") }
sub start_lb_ok { $_[0]{lb}->start_ok('the balancer starts') }
sub stop        { my ($self, $n) = @_; $self->node($n)->stop }

sub stop_all {
    my ($self) = @_;
    $self->{lb}->stop;
    $self->node($_)->stop for $self->names;
}

# A document given by its URL below the base URL, from node $n directly.
sub at {
    my ($self, $n, $url) = @_;
    my $b = $self->base;
    $url =~ s/^\Q$b\E/$self->node($n)->base/e;
    return get($url);
}

sub status {
    my ($self, $n) = @_;
    my $r = get($self->node($n)->base . '/rs-status?auto');
    return $r->code == 200 ? $r->content : '';
}

sub writer {
    my ($self) = @_;
    my $h = $self->{pg}->psql("SELECT holder FROM leases WHERE setname = '$self->{setname}'"
                              . " AND expires > (extract(epoch FROM clock_timestamp()) * 1e6)::bigint");
    $h =~ s/^node-//;
    return $h;
}

1;
