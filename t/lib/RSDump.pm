# SPDX-License-Identifier: Apache-2.0
package RSDump;
# Helpers for the tests of the Resource Dump: they read the dump the way a
# destination does, taking every package and manifest URL from the dump
# document (<loc> and rs:ln rel="contents"), following a Resource Dump
# Index when the root is a <sitemapindex>, never building a URL.
use strict;
use warnings;
use Exporter 'import';
use RSTest qw(get doc xpc wait_for);

our @EXPORT_OK = qw(dump_packages save zip_names zip_member zip_members zip_flags py_zip_ok
                    unzip_ok bad_log_lines);

# dump_packages($dump_url, $timeout) -> list of { loc, manifest, length,
# hash, type } in document order, [] while the dump answers 503 until
# $timeout (seconds, 60 unless given); dies on any other status.
sub dump_packages {
    my ($url, $timeout) = @_;
    my $r = wait_for(sub { my $r = get($url); $r->code == 503 ? undef : $r }, $timeout || 60)
        or return ();
    die "$url: " . $r->status_line unless $r->code == 200;
    my $x = xpc(doc($r->content));
    if ($x->findnodes('/sm:sitemapindex')) {
        return map { dump_packages($_->textContent, $timeout) }
               $x->findnodes('/sm:sitemapindex/sm:sitemap/sm:loc');
    }
    return map { +{ loc => $x->findvalue('sm:loc', $_),
                    manifest => $x->findvalue('rs:ln[@rel="contents"]/@href', $_),
                    length => $x->findvalue('rs:md/@length', $_),
                    hash => $x->findvalue('rs:md/@hash', $_),
                    type => $x->findvalue('rs:md/@type', $_) } }
           $x->findnodes('/sm:urlset/sm:url');
}

# save($path, $bytes): write bytes to a file.
sub save {
    my ($path, $bytes) = @_;
    open my $fh, '>:raw', $path or die "$path: $!";
    print $fh $bytes;
    close $fh or die "$path: $!";
}

sub _py {
    my ($code, @args) = @_;
    open my $p, '-|', 'python3', '-c', $code, @args or die "python3: $!";
    binmode $p;
    local $/;
    my $out = <$p>;
    close $p;
    return $out // '';
}

# zip_names($zip) -> member names in order, as raw bytes (the name as
# stored in the archive, UTF-8 or not).
sub zip_names {
    my ($zip) = @_;
    my $out = _py('import sys,zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    n = i.filename.encode("utf-8", "surrogateescape") if i.flag_bits & 0x800 else i.filename.encode("cp437")
    sys.stdout.buffer.write(n.hex().encode() + b"\n")', $zip);
    return map { pack 'H*', $_ } split /\n/, $out;
}

# zip_flags($zip) -> { raw name => general purpose flag bits }
sub zip_flags {
    my ($zip) = @_;
    my $out = _py('import sys,zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    n = i.filename.encode("utf-8", "surrogateescape") if i.flag_bits & 0x800 else i.filename.encode("cp437")
    sys.stdout.buffer.write(n.hex().encode() + b" %d\n" % i.flag_bits)', $zip);
    return { map { my ($h, $f) = split / /; (pack('H*', $h) => $f) } split /\n/, $out };
}

# zip_member($zip, $raw_name) -> the member's bytes ('' when absent)
sub zip_member {
    my ($zip, $name) = @_;
    return _py('import sys,zipfile
want = bytes.fromhex(sys.argv[2])
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    n = i.filename.encode("utf-8", "surrogateescape") if i.flag_bits & 0x800 else i.filename.encode("cp437")
    if n == want:
        sys.stdout.buffer.write(z.read(i))', $zip, unpack('H*', $name));
}

# zip_members($zip) -> { raw name => bytes } of every member, read at once
sub zip_members {
    my ($zip) = @_;
    my $out = _py('import sys,zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    n = i.filename.encode("utf-8", "surrogateescape") if i.flag_bits & 0x800 else i.filename.encode("cp437")
    sys.stdout.buffer.write(n.hex().encode() + b" " + z.read(i).hex().encode() + b"\n")', $zip);
    return { map { my ($n, $c) = split / /, $_, 2; (pack('H*', $n) => pack('H*', $c // '')) }
             split /\n/, $out };
}

# py_zip_ok($zip), unzip_ok($zip): the archive tests clean.
sub py_zip_ok { system("python3 -m zipfile -t '$_[0]' >/dev/null 2>&1") == 0 }
sub unzip_ok  { system("unzip -tqq '$_[0]' >/dev/null 2>&1") == 0 }

# bad_log_lines($text) -> lines of an error log that show an error or a
# crash of any module (not only ours): [error] and worse, segfaults, exits
# on a signal.
sub bad_log_lines {
    my ($text) = @_;
    return grep { /:(error|crit|alert|emerg)\]|Segmentation fault|exit signal|AH00052/ }
           split /\n/, $text;
}

1;
