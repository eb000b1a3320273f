# SPDX-License-Identifier: Apache-2.0
package RSHub;
# Helpers of the built-in hub's tests: requests to a server's hub endpoint
# and the subscription rows of its store.
#
#   hub_post($srv, %form)          POST the form to <prefix>/hub of $srv (a
#                                  server, or a base URL such as a virtual
#                                  host's); HTTP::Response.  Options (not form
#                                  fields): -local => address to send from
#                                  (a loopback address: another client)
#   subscribe_form($topic, $cb)    the form of a subscription, as a list
#   store_rows($srv, $sql)         rows of a query of $srv's store
#                                  (state/state.db) as hashes; [] while the
#                                  store is not there or not created yet
#   sub_rows($srv)                 the subscription rows (kind 'sub', every
#                                  column), ordered by url
#   spool_pending($srv)            "*.req" files in $srv's spool
use strict;
use warnings;
use Exporter 'import';
use HTTP::Request ();
use JSON::PP ();
use LWP::UserAgent ();
use URI::Escape qw(uri_escape);

our @EXPORT_OK = qw(hub_post subscribe_form store_rows sub_rows spool_pending);

my %UA;
sub _ua {
    my ($local) = @_;
    $UA{$local // ''} ||= LWP::UserAgent->new(timeout => 30, max_redirect => 0, keep_alive => 0,
                                              $local ? (local_address => $local) : ());
}

sub hub_post {
    my ($srv, %f) = @_;
    my $local = delete $f{-local};
    my $body = join '&', map { uri_escape($_) . '=' . uri_escape($f{$_}) } sort keys %f;
    return _ua($local)->request(HTTP::Request->new(
        POST => (ref $srv ? $srv->base : $srv) . '/resourcesync/hub',
        ['Content-Type' => 'application/x-www-form-urlencoded'], $body));
}

sub subscribe_form {
    my ($topic, $cb) = @_;
    return ('hub.mode' => 'subscribe', 'hub.callback' => $cb, 'hub.topic' => $topic);
}

sub store_rows {
    my ($srv, $sql) = @_;
    my $db = $srv->dir . '/state/state.db';
    return [] unless -s $db;    # never let sqlite3 (root) create it
    my $out = `sqlite3 -cmd '.timeout 10000' -json '$db' "$sql" 2>&1`;
    # Empty; or the store being created by the watcher at its start.
    return [] if $out =~ /^\s*$/ || $out =~ /no such table|database is locked/;
    return eval { JSON::PP::decode_json($out) } || die "sqlite3: $out";
}

sub sub_rows {
    my ($srv) = @_;
    return store_rows($srv, "SELECT * FROM notify_dests WHERE kind = 'sub' ORDER BY url");
}

sub spool_pending {
    my ($srv) = @_;
    opendir my $dh, $srv->dir . '/state/hub/spool' or return 0;
    return scalar grep { /\.req$/ } readdir $dh;
}

1;
