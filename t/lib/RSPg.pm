# SPDX-License-Identifier: Apache-2.0
package RSPg;
# A private PostgreSQL cluster for one test file (t/pgcluster): started in
# a temporary directory by start(), stopped and removed at END.  Without the
# server's programs (Debian's postgresql) or APR-util's pgsql driver the
# test file is skipped with the reason (skip_unless_available).
#
#   my $pg = RSPg::start();    # or undef, with the reason in $RSPg::why
#   $pg->dsn                   # host=127.0.0.1 port=N dbname=rs user=rs
#   $pg->psql($sql)            # the rows, "|"-separated, as the rs role
#   $pg->stop; $pg->restart    # the server down and up again, same port
#   $pg->socket_dsn($name)     # through the Unix socket, application_name $name
#   $pg->cut_socket($name); $pg->uncut_socket   # cut those clients off, and back
use strict;
use warnings;
use File::Temp ();
use File::Path qw(remove_tree);
use FindBin;

our $why;
my @clusters;

sub pgcluster { "$FindBin::Bin/pgcluster" }

sub bindir {
    my $dir = `pg_config --bindir 2>/dev/null`;
    chomp $dir;
    return $dir if $dir && -x "$dir/initdb";
    ($dir) = sort { $b cmp $a } glob('/usr/lib/postgresql/*/bin');
    return $dir && -x "$dir/initdb" ? $dir : undef;
}

# Why the tests cannot run here (undef: they can).
sub unavailable {
    return 'no PostgreSQL server programs (make deps)' unless bindir();
    return "APR-util's pgsql driver is not installed (libaprutil1-dbd-pgsql)"
        unless glob('/usr/lib/*/apr-util-1/apr_dbd_pgsql*.so');
    return undef;
}

# A cluster, or undef with $why set; with RS_TEST_PG_REQUIRED (t/run-tests
# sets it) a cluster that cannot start is the test's failure, not a skip.
sub start {
    if (($why = unavailable())) {
        die "RSPg: $why\n" if $ENV{RS_TEST_PG_REQUIRED};
        return undef;
    }
    my $dir = File::Temp::tempdir('rs-pg-XXXXXX', TMPDIR => 1, CLEANUP => 0);
    my $dsn = `sh ${\ pgcluster()} start $dir 2>&1`;
    if ($? != 0) {
        $why = "t/pgcluster start failed: $dsn";
        die "RSPg: $why\n" if $ENV{RS_TEST_PG_REQUIRED};
        return undef;
    }
    chomp $dsn;
    my ($port) = $dsn =~ /port=(\d+)/;
    my $self = bless { dir => $dir, dsn => $dsn, port => $port }, __PACKAGE__;
    push @clusters, $self;
    return $self;
}

sub dsn  { $_[0]{dsn} }
sub port { $_[0]{port} }

# The user the cluster runs as (as t/pgcluster picks it).
sub _user {
    return scalar getpwuid($>) if $> != 0;
    return getpwnam('postgres') ? 'postgres' : 'nobody';
}

sub _as_user { $> == 0 ? ('runuser', '-u', _user(), '--') : () }

sub psql { $_[0]->_psql('rs', $_[1]) }

sub _psql {
    my ($self, $user, $sql) = @_;
    my @cmd = (bindir() . '/psql', '-X', '-q', '-A', '-t', '-h', '127.0.0.1', '-p', $self->{port},
               '-U', $user, '-d', 'rs', '-c', $sql);
    open my $fh, '-|', @cmd or die "psql: $!";
    local $/;
    my $out = <$fh> // '';
    close $fh;
    $out =~ s/\s+\z//;
    return $out;
}

# As PostgreSQL's superuser (trust on 127.0.0.1): the rows, "|"-separated.
sub psql_su { $_[0]->_psql('postgres', $_[1]) }

# The DSN through the cluster's Unix socket instead of TCP, with
# application_name $name: a node that uses it can be cut from the
# database alone (cut_socket) while the others, on TCP, go on.
sub socket_dsn {
    my ($self, $name) = @_;
    return "host=$self->{dir} port=$self->{port} dbname=rs user=rs application_name=$name";
}

sub _hba { "$_[0]{dir}/data/pg_hba.conf" }

# Cut every client of the Unix socket from the database: new connections
# refused (pg_hba.conf), the sessions of application $name ended.
sub cut_socket {
    my ($self, $name) = @_;
    open my $in, '<', $self->_hba or die "pg_hba.conf: $!";
    my $hba = do { local $/; <$in> };
    close $in;
    open my $out, '>', $self->_hba or die "pg_hba.conf: $!";
    print $out "local all all reject\n$hba";
    close $out;
    $self->psql_su('SELECT pg_reload_conf()');
    $self->psql_su("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                   . " WHERE application_name = '$name'");
}

# Let the Unix socket's clients in again.
sub uncut_socket {
    my ($self) = @_;
    open my $in, '<', $self->_hba or die "pg_hba.conf: $!";
    my $hba = do { local $/; <$in> };
    close $in;
    $hba =~ s/\Alocal all all reject\n//;
    open my $out, '>', $self->_hba or die "pg_hba.conf: $!";
    print $out $hba;
    close $out;
    $self->psql_su('SELECT pg_reload_conf()');
}

sub stop {
    my ($self) = @_;
    system(_as_user(), bindir() . '/pg_ctl', '-D', "$self->{dir}/data", '-m', 'fast', '-w',
           'stop') == 0 or die "pg_ctl stop failed";
}

sub restart {
    my ($self) = @_;
    my $d = $self->{dir};
    system(_as_user(), bindir() . '/pg_ctl', '-D', "$d/data", '-l', "$d/server.log", '-w',
           '-t', '60', '-o',
           "-p $self->{port} -k $d -c listen_addresses=127.0.0.1 -c fsync=off "
           . '-c max_connections=200', 'start') == 0 or die "pg_ctl start failed";
}

END {
    local $?;
    for my $c (@clusters) {
        system('sh', pgcluster(), 'stop', $c->{dir});
        remove_tree($c->{dir});
    }
}

1;
