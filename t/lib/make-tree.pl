#!/usr/bin/perl
# SPDX-License-Identifier: Apache-2.0
# make-tree.pl T_DIR: the fresh test trees (see t/conf/extra.conf.in).
use strict;
use warnings;
use File::Path qw(make_path);

my $t = shift or die "usage: make-tree.pl T_DIR\n";
my $g = "$t/htdocs/generated";

sub put {
    my ($path, $content) = @_;
    (my $dir = $path) =~ s{/[^/]+$}{};
    make_path($dir);
    open my $fh, '>', $path or die "$path: $!";
    binmode $fh;
    print $fh $content;
    close $fh;
}

# main: odd names
put("$g/main/README.txt", "main set\n");
put("$g/main/index.html", "<html><head><title>t</title></head><body>x</body></html>\n");
put("$g/main/docs/data.json", qq({"k": "v"}\n));
put("$g/main/docs/deep/er/file.txt", "deep\n");
put("$g/main/odd/with space.txt", "space\n");
put("$g/main/odd/100% sure.txt", "percent\n");
put("$g/main/odd/a#b?c&d.txt", "reserved\n");
put("$g/main/odd/q\"uo'te<>.txt", "quotes\n");
put("$g/main/odd/plus+semi;colon:at\@eq=.txt", "subdelims\n");
put("$g/main/odd/\x{c3}\x{bc}n\x{c3}\x{af}c\x{c3}\x{b6}d\x{c3}\x{a9}-\x{e6}\x{96}\x{87}.txt", "unicode\n");
put("$g/main/odd/caf\x{e9}-latin1.txt", "not utf-8\n");
put("$g/main/odd/no-extension", "no type\n");
put("$g/main/empty.txt", "");
put("$g/main/bin/random.bin", join('', map { chr(int(rand(256))) } 1 .. 70000));

# small: 10 files, parts of at most 4
put(sprintf("$g/small/f%02d.txt", $_), "small $_\n") for 1 .. 10;

# mut: 12 files
put(sprintf("$g/mut/m%02d.txt", $_), "mut $_\n") for 1 .. 12;

# rules
put("$g/rules/ok.txt", "listed\n");
put("$g/rules/sub/ok2.txt", "listed\n");
put("$g/rules/scratch.tmp", "excluded by *.tmp\n");
put("$g/rules/cache/c.txt", "excluded by cache\n");
put("$g/rules/sub/cache/c.txt", "excluded by cache at depth\n");
put("$g/rules/drafts/d.txt", "excluded by /drafts/*\n");
put("$g/rules/sub/drafts/d.txt", "listed: /drafts/* is anchored\n");
put("$g/rules/.hidden", "dotfile\n");
put("$g/rules/.htaccess", "# never listed\n");
put("$g/rules/.dotdir/x.txt", "inside a dot directory\n");
put("$g/rules/denied/d.txt", "Require all denied\n");
put("$g/rules/private/p.txt", "basic auth\n");
put("$g/rules/secret.txt", "<Files> denied\n");
put("$g/rules/unreadable.txt", "mode 000\n");
chmod 0000, "$g/rules/unreadable.txt";
put("$t/outside-target.txt", "outside the set\n");
symlink("$t/outside-target.txt", "$g/rules/link-out.txt");
symlink("ok.txt", "$g/rules/link-in.txt");
symlink("sub", "$g/rules/link-dir");

# dots
put("$g/dots/visible.txt", "v\n");
put("$g/dots/.dotfile", "d\n");
put("$g/dots/.htpasswd", "never\n");

# aliased (outside DocumentRoot)
put("$t/aliased/a1.txt", "aliased 1\n");
put("$t/aliased/dir/a2.txt", "aliased 2\n");

# vhost
put("$g/vhost/vdata/v1.txt", "vhost 1\n");
put("$g/vhost/vdata/v2.txt", "vhost 2\n");
put("$g/vhost/outside.txt", "not in a set\n");

# htpasswd for rules/private (user "u", password "p")
put("$t/conf/htpasswd", "u:\$apr1\$x3nOsbRk\$TAoFmmXpacG5kUKv2k6AU.\n");
