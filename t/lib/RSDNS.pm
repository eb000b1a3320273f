# SPDX-License-Identifier: Apache-2.0
package RSDNS;
# A small DNS responder for the tests (UDP, Perl core only), to re-point
# names between lookups as a rebinding attacker does.  It runs in a forked
# child on ADDR:53 (root only) and answers names of one zone:
#
#   my $dns = RSDNS->start(addr => '127.0.83.53', zone => 'rebind.test',
#                          allowed => '127.0.0.1', forbidden => '127.0.0.66');
#   "a<N>-<anything>.rebind.test"   A: the first N queries of that name get
#                                   `allowed`, every later one `forbidden`
#                                   (TTL 0: nothing may cache it)
#   AAAA (and any other type) of a name of the zone: no records (NOERROR)
#   anything else: NXDOMAIN
#   $dns->queries                   every query so far: "TYPE name" (A, AAAA,
#                                   or the number), in arrival order
#   $dns->resolv_conf               the text of a resolv.conf naming it
#   $dns->stop                      (also on destruction)
#
# Queries are logged to a file in a temporary directory, one line each,
# appended before the answer is sent.
use strict;
use warnings;
use IO::Socket::INET ();
use File::Temp ();
use POSIX qw(_exit);
use Socket qw(inet_aton);

sub start {
    my ($class, %o) = @_;
    my $self = bless { %o }, $class;
    $self->{tmp} = File::Temp->newdir('rs-dns-XXXXXX', TMPDIR => 1);
    $self->{log} = "$self->{tmp}/queries";
    open my $fh, '>', $self->{log} or die "$self->{log}: $!";
    close $fh;
    my $s = IO::Socket::INET->new(LocalAddr => $o{addr}, LocalPort => 53, Proto => 'udp',
                                  ReuseAddr => 1)
        or die "RSDNS: bind $o{addr}:53: $!";
    my $pid = fork;
    die "RSDNS: fork: $!" unless defined $pid;
    if (!$pid) {
        $SIG{TERM} = sub { _exit(0) };
        eval { $self->_serve($s) };
        _exit(0);
    }
    close $s;
    $self->{pid} = $pid;
    $self->{owner} = $$;
    return $self;
}

sub resolv_conf { "nameserver $_[0]{addr}\noptions attempts:1 timeout:2\n" }

sub queries {
    my ($self) = @_;
    open my $fh, '<', $self->{log} or return ();
    return map { chomp; $_ } <$fh>;
}

sub stop {
    my ($self) = @_;
    return unless $self->{pid} && $self->{owner} == $$;
    kill 'TERM', $self->{pid};
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

sub DESTROY { $_[0]->stop }

# The question's name (lower case) and the offset after its labels.
sub _name {
    my ($pkt, $off) = @_;
    my @labels;
    while (1) {
        my $len = ord substr($pkt, $off, 1);
        return (undef, $off) if $len >= 64 || $off + 1 + $len > length $pkt;
        $off++;
        last if !$len;
        push @labels, lc substr($pkt, $off, $len);
        $off += $len;
    }
    return (join('.', @labels), $off);
}

sub _serve {
    my ($self, $s) = @_;
    my %seen;
    my $zone = lc $self->{zone};
    while (1) {
        my $peer = $s->recv(my $pkt, 4096) // next;
        next if length $pkt < 12;
        my ($id, $flags, $qd) = unpack 'n n n', $pkt;
        next if $qd != 1 || ($flags & 0x8000);
        my ($name, $off) = _name($pkt, 12);
        next unless defined $name && $off + 4 <= length $pkt;
        my ($qtype, $qclass) = unpack 'n n', substr($pkt, $off, 4);
        my $question = substr($pkt, 12, $off + 4 - 12);
        my $type = $qtype == 1 ? 'A' : $qtype == 28 ? 'AAAA' : $qtype;
        open my $log, '>>', $self->{log} or die $!;
        print $log "$type $name\n";
        close $log;
        my ($rcode, $answer) = (3, '');
        if ($name eq $zone || $name =~ /\.\Q$zone\E$/) {
            $rcode = 0;
            if ($qtype == 1 && $name =~ /^a(\d+)-/) {
                my $n = ++$seen{$name};
                my $ip = $n <= $1 ? $self->{allowed} : $self->{forbidden};
                $answer = pack('n n n N n', 0xc00c, 1, 1, 0, 4) . inet_aton($ip);
            }
        }
        my $head = pack 'n n n n n n', $id, 0x8400 | ($flags & 0x0100) | 0x0080 | $rcode, 1,
                                        $answer ? 1 : 0, 0, 0;
        $s->send($head . $question . $answer, 0, $peer);
    }
}

1;
