#!/usr/bin/perl
# The database-free reference of tests/bench/e2e.sh: from a fleetgen
# folder's folded files to a list of regressions, the plain way. For each
# capture, the self samples of each function (the last frame of a stack)
# and its share of the capture; for each service and function with a share
# of at least 0.1% somewhere, a one-sided Welch t test (normal tail) of
# the new release's shares against the earlier captures'; then
# Benjamini-Hochberg at q 0.05 over every test of the run. Prints the
# number of tests and of findings.
# Usage: e2e_ref.pl FLEET_DIR RELEASE
use strict;
use warnings;
use JSON::PP;
use POSIX qw(erfc);

my ($dir, $release) = @ARGV;
die "usage: e2e_ref.pl FLEET_DIR RELEASE\n" unless defined $release;
my %svc; # service -> { base => [ {fn => share} ], cur => [ ... ] }
open(my $man, '<', "$dir/manifest.jsonl") or die "cannot read '$dir/manifest.jsonl': $!\n";
while (my $line = <$man>) {
	my $m = decode_json($line);
	my (%self, $total);
	open(my $f, '<', "$dir/$m->{path}") or die "cannot read '$m->{path}': $!\n";
	while (my $l = <$f>) {
		my $sp = rindex($l, ' ');
		my $n = substr($l, $sp + 1) + 0;
		my $semi = rindex($l, ';', $sp);
		$self{substr($l, $semi + 1, $sp - $semi - 1)} += $n;
		$total += $n;
	}
	close($f);
	next unless $total;
	$_ /= $total for values %self;
	push @{$svc{$m->{service}}{$m->{release} eq $release ? 'cur' : 'base'}}, \%self;
}
close($man);

sub mean_var {
	my ($xs) = @_;
	my ($s, $ss) = (0, 0);
	$s += $_ for @$xs;
	my $m = $s / @$xs;
	$ss += ($_ - $m)**2 for @$xs;
	return ($m, @$xs > 1 ? $ss / (@$xs - 1) : 0);
}

my @p;
for my $name (sort keys %svc) {
	my ($base, $cur) = @{$svc{$name}}{qw(base cur)};
	next unless $base && $cur && @$base >= 2 && @$cur >= 2;
	my %fns;
	for my $c (@$base, @$cur) {
		$fns{$_} = 1 for grep { $c->{$_} >= 0.001 } keys %$c;
	}
	for my $fn (keys %fns) {
		my @b = map { $_->{$fn} // 0 } @$base;
		my @c = map { $_->{$fn} // 0 } @$cur;
		my ($mb, $vb) = mean_var(\@b);
		my ($mc, $vc) = mean_var(\@c);
		my $se = sqrt($vb / @b + $vc / @c);
		push @p, $se > 0 ? 0.5 * erfc(($mc - $mb) / $se / sqrt(2)) : ($mc > $mb ? 0 : 1);
	}
}
my @sorted = sort { $a <=> $b } @p;
my $found = 0;
for my $i (reverse 0 .. $#sorted) {
	if ($sorted[$i] <= 0.05 * ($i + 1) / @sorted) {
		$found = $i + 1;
		last;
	}
}
print "tests: ", scalar(@p), "\n";
print "findings: $found\n";
