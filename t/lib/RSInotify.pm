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
use strict;
use warnings;
use Fcntl ();
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

1;
