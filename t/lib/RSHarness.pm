# SPDX-License-Identifier: Apache-2.0
# The harness of t/run-tests (HARNESS_SUBCLASS): TAP::Harness that, when a
# test file fails, prints that file's comments (the diagnostics of its
# failed checks) after its result line, so that a failure explains itself
# in the output, also when files run in parallel.  Passing files stay one
# line each.  The same comments go to logs/failed-comments.txt, which
# t/run-tests prints at the very end.
package RSHarness;
use strict;
use warnings;
use parent 'TAP::Harness';

my %comments;    # parser => [comment lines]

sub make_parser {
    my ($self, @args) = @_;
    my ($parser, $session) = $self->SUPER::make_parser(@args);
    my $buf = $comments{$parser} = [];
    $parser->callback(comment => sub { push @$buf, $_[0]->as_string });
    return ($parser, $session);
}

sub finish_parser {
    my ($self, $parser, $session) = @_;
    my @r = $self->SUPER::finish_parser($parser, $session);
    my $buf = delete $comments{$parser} || [];
    if ($parser->has_problems && @$buf) {
        my $text = join '', map { "$_\n" } @$buf;
        print "---- comments of the failed file:\n$text----\n";
        # again at the end of t/run-tests's output
        if (open my $o, '>>', ($ENV{RS_FAILED_COMMENTS} // 'failed-comments.txt')) {
            print $o "== ", $session->name, "\n", $text;
        }
    }
    return wantarray ? @r : $r[0];
}

1;
