# SPDX-License-Identifier: Apache-2.0
package RSInotify;
# What happens to a directory, seen with inotify from a test (Perl core
# only: the system calls through syscall.ph).
#
#   my $w = RSInotify->watch($dir, RSInotify::IN_ACCESS);
#   ... (the server works)
#   my @masks = $w->events;     # the masks of the events so far (non-blocking)
#
# A listing of a directory (readdir) is an IN_ACCESS event of the
# directory (with IN_ISDIR); opening it (e.g. to fsync it) is IN_OPEN.
#
#   my $l = RSInotify->listers($dir);   # undef without fanotify (not root)
#   ...
#   my @pids = $l->pids;        # the processes that listed $dir so far
#
# fanotify (FAN_ACCESS on the directory itself) says which process read
# the directory, so a test can tell its server's processes from anything
# else on the machine that walks the file system.
use strict;
use warnings;
use Fcntl ();
use POSIX ();
require 'syscall.ph';

use constant { IN_ACCESS => 0x1, IN_OPEN => 0x20, IN_NONBLOCK => 0x800, IN_ISDIR => 0x40000000 };

sub watch {
    my ($class, $dir, $mask) = @_;
    my $fd = syscall(&SYS_inotify_init1, IN_NONBLOCK);
    die "inotify_init1: $!" if $fd < 0;
    my $path = "$dir";      # a string the call can point to
    die "inotify_add_watch $dir: $!" if syscall(&SYS_inotify_add_watch, $fd, $path, $mask) < 0;
    open my $fh, '<&=', $fd or die "fd $fd: $!";
    return bless { fh => $fh }, $class;
}

sub events {
    my ($self) = @_;
    my @masks;
    while (defined(my $n = sysread $self->{fh}, my $buf, 65536)) {
        last if !$n;
        for (my $o = 0; $o < $n;) {
            my ($wd, $mask, $cookie, $len) = unpack 'i I I I', substr($buf, $o, 16);
            push @masks, $mask;
            $o += 16 + $len;
        }
    }
    return @masks;
}

# fanotify: FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK; a mark on the
# directory itself for FAN_ACCESS | FAN_ONDIR.
sub listers {
    my ($class, $dir) = @_;
    my $fd = syscall(&SYS_fanotify_init, 0x1 | 0x2, 0);
    return undef if $fd < 0;
    my $path = "$dir";
    if (syscall(&SYS_fanotify_mark, $fd, 0x1, 0x40000001, -100, $path) < 0) {
        POSIX::close($fd);
        return undef;
    }
    open my $fh, '<&=', $fd or die "fd $fd: $!";
    return bless { fh => $fh }, $class . '::Listers';
}

package RSInotify::Listers;
use POSIX ();

# struct fanotify_event_metadata: event_len, vers, reserved,
# metadata_len, mask, fd (of the object, closed here), pid.
sub pids {
    my ($self) = @_;
    my @pids;
    while (defined(my $n = sysread $self->{fh}, my $buf, 65536)) {
        last if !$n;
        for (my $o = 0; $o + 24 <= $n;) {
            my ($len, undef, undef, undef, undef, $efd, $pid) = unpack 'L C C S Q l l', substr($buf, $o, 24);
            POSIX::close($efd) if $efd >= 0;
            push @pids, $pid;
            $o += $len || 24;
        }
    }
    return @pids;
}

1;
