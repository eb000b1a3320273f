# SPDX-License-Identifier: Apache-2.0
package RSWebSubPeer;
# WebSub peers for the tests: a test HUB and a test SUBSCRIBER, each a small
# HTTP/1.1 server on 127.0.0.1 (or the loopback address given as addr, and
# the port given as port: e.g. two peers on one port of two addresses) in a
# forked child process (its own session, one further child per
# connection, keep-alive honoured).
#
#   my $hub = RSWebSubPeer->hub;              # accepts fat POSTs and pings
#   my $other = RSWebSubPeer->subscriber(addr => '127.0.0.2', port => $hub->port);
#   $hub->url                                 # http://127.0.0.1:PORT/hub
#   $hub->set(answer => 503);                 # "down": every request gets 503
#   $hub->set(answer => 'drop');              # "down": connection closed unanswered
#   $hub->set(answer => 200);                 # up again (the default)
#
#   my $sub = RSWebSubPeer->subscriber(secret => 'k');
#   $sub->callback('a')                       # http://127.0.0.1:PORT/cb/a
#   $sub->set('verify.a' => 'refuse');        # echo (default) | refuse (404) | wrong | 500
#                                             # | slowecho:MS (echo after MS milliseconds)
#   $sub->set('deliver.a' => 410);            # 200 (default) | any status | slow:MS | drop
#   ('verify' and 'deliver' without a name set the default of every callback.)
#
#   my @r = $peer->wait_requests($n, $secs);  # at least $n recorded (dies after $secs)
#   my @r = $peer->requests;                  # all, in arrival order
#   my @a = $peer->arrivals;                  # "METHOD target" of every request whose
#                                             # head was read, answered or not yet
#   $peer->stop;                              # also on destruction
#
# A request is a hash: seq (arrival order, from 1), method, path, query,
# target (path?query), params (query and form body decoded, last value
# wins), headers (lower-case names), body (raw bytes), status (the answer),
# sig_ok (subscriber POSTs: 1 when X-Hub-Signature is the HMAC of the body
# with the secret, 0 when wrong, undef when absent or no secret).
#
# State is shared with the test process through files in a temporary
# directory: `control` (key=value lines, re-read on every request),
# `seq` (flock'd counter), one file `req-NNNNNN` per request (written to a
# temporary name and renamed, so a reader never sees half of one) and the
# append-only `log` (one line per request: seq, method, target, status).
use strict;
use warnings;
use IO::Socket::INET ();
use IO::Select ();
use File::Temp ();
use Fcntl qw(:flock O_RDWR O_CREAT);
use POSIX qw(setsid _exit);
use Digest::SHA ();
use Time::HiRes qw(sleep time);

sub hub        { my ($class, %o) = @_; $class->_start(role => 'hub', %o) }
sub subscriber { my ($class, %o) = @_; $class->_start(role => 'subscriber', %o) }

sub dir  { $_[0]{dir} }
sub port { $_[0]{port} }
sub addr { $_[0]{addr} }
sub base { "http://$_[0]{addr}:$_[0]{port}" }
sub url  { $_[0]->base . '/hub' }
sub callback { my ($self, $name, $query) = @_;
               $self->base . "/cb/$name" . (defined $query ? "?$query" : '') }

sub _start {
    my ($class, %o) = @_;
    my $self = bless { %o }, $class;
    $self->{tmp} = File::Temp->newdir('rs-websub-peer-XXXXXX', TMPDIR => 1);
    $self->{dir} = "$self->{tmp}";
    $self->set();    # creates an empty control file
    $self->{addr} //= '127.0.0.1';
    my $ls = IO::Socket::INET->new(LocalAddr => $self->{addr}, LocalPort => $self->{port} // 0,
                                   Listen => 128, Proto => 'tcp', ReuseAddr => 1)
        or die "RSWebSubPeer: listen on $self->{addr}: $!";
    $self->{port} = $ls->sockport;
    my $pid = fork;
    die "RSWebSubPeer: fork: $!" unless defined $pid;
    if (!$pid) {
        setsid();
        $SIG{CHLD} = 'IGNORE';
        $SIG{TERM} = sub { _exit(0) };
        eval { $self->_serve($ls) };
        _exit(0);
    }
    close $ls;
    $self->{pid} = $pid;
    $self->{owner} = $$;
    return $self;
}

sub stop {
    my ($self) = @_;
    return unless $self->{pid} && $self->{owner} == $$;
    kill 'TERM', -$self->{pid};    # the server and its connection children
    kill 'TERM', $self->{pid};
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

sub DESTROY { $_[0]->stop }

# set(key => value, ...): merged into the control file (atomically replaced).
sub set {
    my ($self, %kv) = @_;
    my %c = $self->_control;
    %c = (%c, %kv);
    my $f = "$self->{dir}/control";
    open my $fh, '>', "$f.tmp" or die "$f.tmp: $!";
    print $fh "$_=$c{$_}\n" for sort keys %c;
    close $fh;
    rename "$f.tmp", $f or die "rename $f: $!";
}

sub _control {
    my ($self) = @_;
    my %c;
    open my $fh, '<', "$self->{dir}/control" or return %c;
    while (my $l = <$fh>) {
        chomp $l;
        $c{$1} = $2 if $l =~ /^([^=]+)=(.*)$/;
    }
    return %c;
}

sub requests {
    my ($self) = @_;
    opendir my $dh, $self->{dir} or die "$self->{dir}: $!";
    my @f = sort grep { /^req-\d+$/ } readdir $dh;
    return map { _read_req("$self->{dir}/$_") } @f;
}

sub wait_requests {
    my ($self, $n, $secs) = @_;
    my $deadline = time + ($secs // 30);
    while (1) {
        my @r = $self->requests;
        return @r if @r >= $n;
        die sprintf("RSWebSubPeer: %d of %d requests after %ds\n", scalar @r, $n, $secs // 30)
            if time > $deadline;
        sleep 0.05;
    }
}

sub arrivals {
    my ($self) = @_;
    open my $fh, '<', "$self->{dir}/arrivals" or return ();
    return map { chomp; $_ } <$fh>;
}

sub log_lines {
    my ($self) = @_;
    open my $fh, '<', "$self->{dir}/log" or return ();
    return map { chomp; $_ } <$fh>;
}

# ---- the server side (runs in the forked children) -------------------------

sub _serve {
    my ($self, $ls) = @_;
    while (1) {
        my $c = $ls->accept or next;
        my $pid = fork;
        if (defined $pid && !$pid) {
            close $ls;
            eval { $self->_connection($c) };
            _exit(0);
        }
        close $c;
    }
}

sub _connection {
    my ($self, $c) = @_;
    binmode $c;
    my $buf = '';
    my $sel = IO::Select->new($c);
    while (1) {
        # Read head.
        while ($buf !~ /\r?\n\r?\n/) {
            return unless $sel->can_read(30);
            my $n = sysread $c, $buf, 65536, length $buf;
            return unless $n;
        }
        $buf =~ s/^(.*?)\r?\n\r?\n//s;
        my ($line, @h) = split /\r?\n/, $1;
        my ($method, $target) = split / /, $line;
        if (open my $a, '>>', "$self->{dir}/arrivals") {
            print $a "$method $target\n";
            close $a;
        }
        my %h;
        for (@h) { $h{lc $1} = $2 if /^([^:]+):\s*(.*?)\s*$/ }
        my $len = $h{'content-length'} // 0;
        while (length $buf < $len) {
            return unless $sel->can_read(30);
            my $n = sysread $c, $buf, 65536, length $buf;
            return unless $n;
        }
        my $body = substr $buf, 0, $len, '';
        my ($close, $status, $out, $extra) = $self->_answer($method, $target, \%h, $body);
        return if $close eq 'drop';
        my $resp = "HTTP/1.1 $status X\r\nContent-Length: " . length($out) . "\r\n"
                 . ($extra // '') . "\r\n" . $out;
        syswrite $c, $resp;
        return if lc($h{connection} // '') eq 'close';
    }
}

sub _decode { my $s = shift // ''; $s =~ tr/+/ /; $s =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge; $s }

sub _params {
    my %p;
    for my $s (@_) {
        for (split /&/, $s // '') {
            my ($k, $v) = split /=/, $_, 2;
            $p{_decode($k)} = _decode($v);
        }
    }
    return %p;
}

sub _answer {
    my ($self, $method, $target, $h, $body) = @_;
    my %c = $self->_control;
    my ($path, $query) = split /\?/, $target, 2;
    my %p = _params($query, ($h->{'content-type'} // '') =~ m{^application/x-www-form-urlencoded}
                            ? $body : undef);
    my ($status, $out, $extra, $sig_ok) = (200, '', undef, undef);
    my $how;
    if ($self->{role} eq 'hub') {
        $how = $c{answer} // 200;
    } else {
        my ($name) = $path =~ m{^/cb/([^/]+)};
        $name //= '';
        if ($method eq 'GET') {
            $how = $c{"verify.$name"} // $c{verify} // 'echo';
            ($status, $out) = $how eq 'echo'   ? (200, $p{'hub.challenge'} // '')
                            : $how eq 'refuse' ? (404, 'no')
                            : $how eq 'wrong'  ? (200, 'not-the-challenge')
                            : $how =~ /^slowecho:(\d+)$/
                                ? do { sleep $1 / 1000; (200, $p{'hub.challenge'} // '') }
                            : ($how, '');
            $how = $status;
        } else {
            $how = $c{"deliver.$name"} // $c{deliver} // 200;
            $sig_ok = _sig_ok($self->{secret}, $h->{'x-hub-signature'}, $body);
        }
    }
    if ($how =~ /^slow:(\d+)$/) {
        sleep $1 / 1000;
        $status = 200;
    } elsif ($how ne 'drop') {
        $status = $how;
    }
    $extra = "Retry-After: $c{retry_after}\r\n" if defined $c{retry_after} && $status =~ /^(429|503)$/;
    $self->_record($method, $target, $path, $query, \%p, $h, $body,
                   $how eq 'drop' ? 'drop' : $status, $sig_ok);
    return ($how eq 'drop' ? 'drop' : 'keep', $status, $out, $extra);
}

sub _sig_ok {
    my ($secret, $sig, $body) = @_;
    return undef unless defined $secret && defined $sig;
    my ($algo, $hex) = $sig =~ /^(sha1|sha256|sha384|sha512)=([0-9a-f]+)$/ or return 0;
    my $f = do { no strict 'refs'; \&{"Digest::SHA::hmac_${algo}_hex"} };
    return $f->($body, $secret) eq $hex ? 1 : 0;
}

sub _record {
    my ($self, $method, $target, $path, $query, $p, $h, $body, $status, $sig_ok) = @_;
    my $d = $self->{dir};
    sysopen my $lk, "$d/seq", O_RDWR | O_CREAT or die "$d/seq: $!";
    flock $lk, LOCK_EX;
    my $seq = (<$lk> // 0) + 1;
    seek $lk, 0, 0;
    truncate $lk, 0;
    syswrite $lk, "$seq\n";
    my $name = sprintf "req-%06d", $seq;
    open my $fh, '>:raw', "$d/.$name" or die $!;
    print $fh "seq $seq\nstatus $status\nsig_ok ", $sig_ok // '-', "\n",
              "$method $target\n";
    print $fh "$_: $h->{$_}\n" for sort keys %$h;
    print $fh "\n", $body;
    close $fh;
    rename "$d/.$name", "$d/$name" or die $!;
    open my $log, '>>', "$d/log" or die $!;
    print $log "$seq $method $target $status\n";
    close $log;
    close $lk;    # releases the lock: seq order == file order == log order
}

sub _read_req {
    my ($file) = @_;
    open my $fh, '<:raw', $file or die "$file: $!";
    local $/;
    my $all = <$fh>;
    my ($head, $body) = split /\n\n/, $all, 2;
    my @l = split /\n/, $head;
    my %r = (body => $body // '', headers => {});
    ($r{seq})    = (shift @l) =~ /^seq (\d+)/;
    ($r{status}) = (shift @l) =~ /^status (\S+)/;
    my ($s)      = (shift @l) =~ /^sig_ok (\S+)/;
    $r{sig_ok} = $s eq '-' ? undef : $s;
    @r{qw(method target)} = split / /, shift(@l), 2;
    @r{qw(path query)} = split /\?/, $r{target}, 2;
    for (@l) { $r{headers}{$1} = $2 if /^([^:]+): (.*)$/ }
    my %p = _params($r{query}, ($r{headers}{'content-type'} // '')
                               =~ m{^application/x-www-form-urlencoded} ? $r{body} : undef);
    $r{params} = \%p;
    return \%r;
}

1;
