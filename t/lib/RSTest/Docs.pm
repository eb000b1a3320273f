# SPDX-License-Identifier: Apache-2.0
package RSTest::Docs;
# Helpers for the document and resource tests: where each set of the test
# configuration lives (t/conf/extra.conf.in, t/run-tests), the files of a
# tree on disk, and the small parsers the tests share.
use strict;
use warnings;
use Exporter 'import';
use File::Find ();
use URI::Escape ();
use RSTest qw(base vhost_base t_dir tree);

our @EXPORT_OK = qw(sets_of_vhost set_info tree_files loc_relpath is_w3c_utc media_type
                    has_raw_unsafe part_urls);

# Sets of each virtual host, in configuration order.
my @MAIN_SETS  = qw(main small mut rules dots aliased);
my @VHOST_SETS = qw(vset);

# sets_of_vhost('main'|'vhost') -> list of set names
sub sets_of_vhost { $_[0] eq 'vhost' ? @VHOST_SETS : @MAIN_SETS }

# set_info(name) -> { name, base (server URL), prefix, url_base (URL of the
# set's root, ends in "/"), dir (root on disk) }
sub set_info {
    my ($name) = @_;
    my %i = (name => $name, base => base(), prefix => '/resourcesync');
    if ($name eq 'vset') {
        $i{base}     = vhost_base();
        $i{prefix}   = '/rs';
        $i{url_base} = vhost_base() . '/vdata/';
        $i{dir}      = tree('vhost/vdata');
    }
    elsif ($name eq 'aliased') {
        $i{url_base} = base() . '/aliased/';
        $i{dir}      = t_dir() . '/aliased';
    }
    else {
        $i{url_base} = base() . "/generated/$name/";
        $i{dir}      = tree($name);
    }
    return \%i;
}

# tree_files(dir) -> relative paths (bytes, "/"-separated) of the regular
# files below dir; symbolic links are not followed.
sub tree_files {
    my ($dir) = @_;
    my @f;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return unless -f $File::Find::name && !-l $File::Find::name;
        (my $rel = $File::Find::name) =~ s{^\Q$dir\E/}{};
        push @f, $rel;
    } }, $dir);
    return @f;
}

# loc_relpath(loc, url_base) -> the percent-decoded path (bytes) below
# url_base, or undef when loc is not below url_base.
sub loc_relpath {
    my ($loc, $url_base) = @_;
    return undef unless index($loc, $url_base) == 0;
    my $rest = substr($loc, length $url_base);
    return undef if $rest =~ /[^\x00-\x7f]/;
    return URI::Escape::uri_unescape($rest);
}

# True when a loc has characters that must be percent-encoded in a path:
# space, '#', '?', '"', '<', '>', '\', '^', '`', '{', '|', '}', a '%' not
# followed by two hex digits, controls or any non-ASCII character.
sub has_raw_unsafe {
    my ($loc) = @_;
    (my $path = $loc) =~ s{^[a-z][a-z0-9+.-]*://[^/]*}{}i;
    return 1 if $path =~ /[\x00-\x20\x7f-\x{10ffff}#?"<>\\^`{|}]/;
    return 1 if $path =~ /%(?![0-9A-Fa-f]{2})/;
    return 0;
}

# W3C datetime in UTC with a Z designator, optional fraction.
sub is_w3c_utc {
    defined $_[0] && $_[0] =~ /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;
}

# Media type of a Content-Type value, without parameters, lower case.
sub media_type {
    my ($ct) = @_;
    return undef unless defined $ct;
    $ct =~ s/;.*//s;
    $ct =~ s/^\s+|\s+$//g;
    return lc $ct;
}

# part_urls(xpc of a sitemapindex) -> the <loc> of every <sitemap>
sub part_urls {
    my ($x) = @_;
    return map { $_->textContent } $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc');
}

1;
