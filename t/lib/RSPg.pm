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

sub psql {
    my ($self, $sql) = @_;
    my @cmd = (bindir() . '/psql', '-X', '-q', '-A', '-t', '-h', '127.0.0.1', '-p', $self->{port},
               '-U', 'rs', '-d', 'rs', '-c', $sql);
    open my $fh, '-|', @cmd or die "psql: $!";
    local $/;
    my $out = <$fh> // '';
    close $fh;
    $out =~ s/\s+\z//;
    return $out;
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
