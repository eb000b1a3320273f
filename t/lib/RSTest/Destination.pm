# SPDX-License-Identifier: Apache-2.0
package RSTest::Destination;
# A strict ResourceSync destination over HTTP, for the tests: a baseline
# from a set's Resource List (index and parts), then every change with a
# datetime not before the list's `at`, from the Change List Index and its
# lists, in order.  It checks the order invariants as it goes (datetimes
# strictly increase in list order; (loc, datetime) is unique) and compares
# what it holds with the source directory on disk.
#
#   my $d = RSTest::Destination->new(base => $B, set => 'w', src => "$dir/www/w",
#                                    root => "$B/w/");
#   $d->baseline;                   # or $d->baseline_dump: from the Resource Dump
#   $d->sync;                       # apply what is new
#   my $diff = $d->sync_until_equal(60);   # '' when equal
#   @{ $d->errors }                 # invariant violations seen
#   $d->rebaseline                  # told to take a new baseline: the
#                                   # index begins after what it has seen
use strict;
use warnings;
use Digest::SHA qw(sha256_hex);
use Cwd ();
use File::Find ();
use URI::Escape qw(uri_unescape);
use RSTest qw(get doc xpc fetch_list iso2epoch validate wait_for);

sub new {
    my ($class, %o) = @_;
    return bless { %o, files => {}, errors => [], applied => 0, last => undef }, $class;
}

sub errors  { $_[0]{errors} }
# What the last syncs saw, for diagnostics: one line per list read.
sub history { $_[0]{history} || [] }
sub _note {
    my ($self, $line) = @_;
    my $h = $self->{history} ||= [];
    push @$h, $line;
    shift @$h while @$h > 40;
}
sub applied { $_[0]{applied} }
sub rebaseline { $_[0]{rebaseline} }
sub at      { $_[0]{at} }

sub _rel {
    my ($self, $loc) = @_;
    my $root = $self->{root};
    return undef unless CORE::index($loc, $root) == 0;
    return uri_unescape(substr($loc, length $root));
}

sub _fetch {
    my ($self, $loc) = @_;
    my $rel = $self->_rel($loc);
    unless (defined $rel) {
        push @{ $self->{errors} }, "$loc: outside the set's root";
        return;
    }
    my $r = get($loc);
    if ($r->code == 200) {
        $self->{files}{$rel} = $r->content;
    }
    elsif ($r->code == 404 || $r->code == 403) {
        # Gone (or unreadable) since it was listed: a later change says so.
        delete $self->{files}{$rel};
    }
    else {
        push @{ $self->{errors} }, "$loc: " . $r->status_line;
    }
}

# Take the baseline from the Resource List.
sub baseline {
    my ($self) = @_;
    my $l = fetch_list($self->{set}, $self->{base}, $self->{prefix});
    $self->{at} = iso2epoch($l->{at});
    $self->{files} = {};
    for my $doc (@{ $l->{docs} }) {
        my $err = validate($doc);
        push @{ $self->{errors} }, "Resource List document invalid: $err" if $err;
    }
    $self->_fetch($_->{loc}) for @{ $l->{entries} };
    $self->{last} = undef;
    $self->{rebaseline} = 0;
    return $l;
}

# Take the baseline from the Resource Dump instead (section 11): its
# rs:md at, and every package's members as the package's own manifest.xml
# lists them (<loc> from the member named by rs:md path), the package and
# part URLs taken from the documents.  Returns { at, entries => [ manifest
# entries: loc, lastmod, length, hash, type ] }, or undef while the dump
# answers 503 (60 s) or a document or package cannot be read.
sub baseline_dump {
    my ($self) = @_;
    require RSDump;
    require File::Temp;
    require Encode;
    my $url = "$self->{base}" . ($self->{prefix} // '/resourcesync') . "/$self->{set}/resourcedump.xml";
    my $r = wait_for(sub { my $r = get($url); $r->code == 503 ? undef : $r }, 60);
    return undef unless $r && $r->code == 200;
    my $err = validate($r->content);
    push @{ $self->{errors} }, "Resource Dump invalid: $err" if $err;
    my $x = xpc(doc($r->content));
    my $at = $x->findvalue('/*/rs:md/@at');
    my @docs = ($x);
    for my $part (map { $_->textContent } $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc')) {
        my $pr = get($part);
        return undef unless $pr->code == 200;
        push @docs, xpc(doc($pr->content));
    }
    my $tmp = File::Temp::tempdir(CLEANUP => 1);
    my (%files, @entries);
    for my $dx (@docs) {
        for my $pkg (map { $_->textContent } $dx->findnodes('/sm:urlset/sm:url/sm:loc')) {
            my $pr = get($pkg);
            return undef unless $pr->code == 200;
            RSDump::save("$tmp/p.zip", $pr->content);
            my $m = RSDump::zip_members("$tmp/p.zip");
            my $mx = xpc(doc($m->{'manifest.xml'} // '<none/>'));
            push @{ $self->{errors} }, "$pkg: no manifest.xml" unless $m->{'manifest.xml'};
            for my $u ($mx->findnodes('/sm:urlset/sm:url')) {
                my %e = (loc => $mx->findvalue('sm:loc', $u),
                         lastmod => $mx->findvalue('sm:lastmod', $u));
                $e{$_} = $mx->findvalue("rs:md/\@$_", $u) for qw(length hash type path);
                my $rel = $self->_rel($e{loc});
                # (member names are raw bytes: the path's UTF-8)
                my $path = Encode::encode('UTF-8', $e{path});
                my $member = $path =~ m{^/(.*)}s ? $m->{$1} : undef;
                if (!defined $rel || !defined $member) {
                    push @{ $self->{errors} }, "$pkg: no member for $e{loc} ($e{path})";
                    next;
                }
                $files{$rel} = $member;
                push @entries, \%e;
            }
        }
    }
    $self->{files} = \%files;
    $self->{at} = iso2epoch($at);
    $self->{last} = undef;
    $self->{rebaseline} = 0;
    return { at => $at, entries => \@entries };
}

# The Change List Index: (from, [ { loc, from, until } ... ]) or undef.
sub index {
    my ($self) = @_;
    my $url = "$self->{base}" . ($self->{prefix} // '/resourcesync') . "/$self->{set}/changelist.xml";
    my $r = get($url);
    return undef unless $r->code == 200;
    my $err = validate($r->content);
    push @{ $self->{errors} }, "Change List Index invalid: $err" if $err;
    my $x = xpc(doc($r->content));
    return [ map { { loc => $x->findvalue('sm:loc', $_), from => $x->findvalue('rs:md/@from', $_),
                     until => $x->findvalue('rs:md/@until', $_) } }
             $x->findnodes('/sm:sitemapindex/sm:sitemap') ];
}

# Every change entry of every list, in list order (checking the order
# invariants); undef if a document could not be read.
sub changes {
    my ($self) = @_;
    my $lists = $self->index or return undef;
    my (@all, %pair, $prev);
    # Changes after the point this destination reached must be covered:
    # an index that begins later (a new history of the source, or
    # retention) means changes were missed, and only a new baseline helps.
    my $reached = defined $self->{last} && $self->{last} > ($self->{at} // 0)
                  ? $self->{last} : $self->{at};
    if (@$lists && defined $reached && iso2epoch($lists->[0]{from}) > $reached) {
        $self->{rebaseline} = 1;
        $self->_note("index begins at $lists->[0]{from}, after $reached: new baseline needed");
        return undef;
    }
    for my $l (@$lists) {
        next if $l->{until} && defined $self->{at} && iso2epoch($l->{until}) < $self->{at};
        my $r = get($l->{loc});
        unless ($r->code == 200) {
            $self->_note("$l->{loc}: " . $r->status_line);
            return undef;
        }
        my $err = validate($r->content);
        push @{ $self->{errors} }, "$l->{loc} invalid: $err" if $err;
        my $x = xpc(doc($r->content));
        for my $u ($x->findnodes('/sm:urlset/sm:url')) {
            my %e = (loc => $x->findvalue('sm:loc', $u), lastmod => $x->findvalue('sm:lastmod', $u));
            $e{$_} = $x->findvalue("rs:md/\@$_", $u) for qw(change datetime length hash type);
            $e{t} = iso2epoch($e{datetime});
            if (defined $prev && $e{t} <= $prev) {
                push @{ $self->{errors} }, "datetime $e{datetime} of $e{loc} not after the previous one";
            }
            if ($pair{"$e{loc} $e{datetime}"}++) {
                push @{ $self->{errors} }, "($e{loc}, $e{datetime}) twice";
            }
            if ($e{t} < iso2epoch($l->{from}) || ($l->{until} && $e{t} >= iso2epoch($l->{until}))) {
                push @{ $self->{errors} }, "$e{loc} at $e{datetime} outside its list's from..until";
            }
            $prev = $e{t};
            push @all, \%e;
        }
        my @u = $x->findnodes('/sm:urlset/sm:url');
        $self->_note(sprintf("%s (from %s%s): %d entries, %s .. %s, ETag %s", $l->{loc}, $l->{from},
                             $l->{until} ? " until $l->{until}" : '', scalar(@u),
                             @u ? $x->findvalue('rs:md/@datetime', $u[0]) : '-',
                             @u ? $x->findvalue('rs:md/@datetime', $u[-1]) : '-',
                             $r->header('ETag') // '-'));
    }
    return \@all;
}

# Apply the changes not applied yet.  Returns how many were applied, or
# undef if the lists could not be read.
sub sync {
    my ($self) = @_;
    my $all = $self->changes or return undef;
    my $n = 0;
    for my $e (@$all) {
        next if $e->{t} < $self->{at};
        next if defined $self->{last} && $e->{t} <= $self->{last};
        if ($e->{change} eq 'deleted') {
            my $rel = $self->_rel($e->{loc});
            delete $self->{files}{$rel} if defined $rel;
        }
        else {
            $self->_fetch($e->{loc});
        }
        $self->{last} = $e->{t};
        $n++;
    }
    $self->{applied} += $n;
    $self->_note("applied $n; last " . ($self->{last} // '-'));
    return $n;
}

# Files below the source directory: relpath -> sha-256 (dotfiles left out,
# as the set does by default; symlinks to files inside it included).
sub source_tree {
    my ($self) = @_;
    my %t;
    my $src = $self->{src};
    File::Find::find({ no_chdir => 1, wanted => sub {
        my $name = (split m{/}, $File::Find::name)[-1];
        if ($name =~ /^\./ && $File::Find::name ne $src) {
            $File::Find::prune = 1;
            return;
        }
        return unless -f $File::Find::name;
        if (-l $File::Find::name) {
            # listed when it resolves to a file inside the set's root
            my $real = Cwd::realpath($File::Find::name) // '';
            return unless CORE::index($real, Cwd::realpath($src) . '/') == 0;
        }
        open my $fh, '<', $File::Find::name or return;   # vanished meanwhile
        binmode $fh;
        local $/;
        my $c = <$fh>;
        $t{ substr($File::Find::name, length($src) + 1) } = sha256_hex($c // '');
    } }, $src);
    return \%t;
}

# '' if the destination holds exactly the source tree, else a short diff.
sub compare {
    my ($self) = @_;
    my $src = $self->source_tree;
    my @d;
    for my $k (sort keys %$src) {
        if (!exists $self->{files}{$k}) { push @d, "missing $k" }
        elsif (sha256_hex($self->{files}{$k}) ne $src->{$k}) { push @d, "differs $k" }
    }
    push @d, map { "extra $_" } grep { !exists $src->{$_} } sort keys %{ $self->{files} };
    return @d ? join(', ', @d > 10 ? (@d[0 .. 9], '... ' . scalar(@d) . ' in all') : @d) : '';
}

# Sync and compare until equal or the deadline (seconds); '' when equal.
sub sync_until_equal {
    my ($self, $timeout) = @_;
    my $diff = 'not compared';
    wait_for(sub {
        $self->sync;
        $diff = $self->compare;
        return $diff eq '';
    }, $timeout || 60);
    return $diff;
}

1;
