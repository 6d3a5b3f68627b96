<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// PHP functions alpha and beta run the same chain of dependent integer
// operations (each step needs the last: its time is latency, not a loop
// through memory), alpha 2n times and beta n times each round, n random in
// 1..8; each call measures the process's CPU time it takes (the split to
// check is theirs). At its end it prints "ALPHA_NS BETA_NS" on stdout and
// its figures on stderr, so a profile's split between them can be checked.
//
// MODE (an optional first argument; split without one):
//   split     the above;
//   excimer   the same under Excimer (php-excimer's in-process sampler, CPU
//             time, every ms), in the same process: prints "ALPHA_NS BETA_NS
//             EXC_ALPHA EXC_BETA EXC_ALL", the workload's own split, then the
//             Excimer events whose stack holds alpha, beta, and all of them.
//             Excimer records an event where the VM next checks for an interrupt,
//             which on a loaded machine is often late, outside both (up to half
//             of them, seen on 2 busy CPUs): its split of alpha and beta holds
//             better (their share of the two) than their share of all events;
//   native    PHP functions calling C: digest() hash('sha256') over 1 MiB, match_it()
//             preg_match over 256 KiB (backtracking, no match); prints "DIGEST_NS MATCH_NS";
//   callbacks C calling back into PHP: Foo::bar() runs array_map with a closure of
//             its own and preg_replace_callback with one it is given, each running
//             the chain; prints
//             "MAP_NS REPLACE_NS" (the closures' own time: each call measured).
//
// usage: php php_split.php [MODE] SECONDS [READY_FILE GO_FILE]
require __DIR__ . '/php_window.php';

const UNIT = 100000;

function alpha(): int
{
	global $spent_a;
	$t = cpu_ns();
	$x = 1;
	for ($i = 0; $i < UNIT; $i++) {
		$x = ($x * 31 + 7) & 0xffffff;
	}
	$spent_a += cpu_ns() - $t;
	return $x;
}

function beta(): int
{
	global $spent_b;
	$t = cpu_ns();
	$x = 1;
	for ($i = 0; $i < UNIT; $i++) {
		$x = ($x * 31 + 7) & 0xffffff;
	}
	$spent_b += cpu_ns() - $t;
	return $x;
}

// Runs alpha and beta in turn for SECONDS of CPU: [alpha's ns, beta's, rounds, sink, total].
// Each call measures itself, inside its own frame: what the caller does between calls (the
// loop, the call, more of it on a loaded machine, as the caches refill after a switch) is in
// neither, as in a profile.
function run_split(float $seconds): array
{
	global $spent_a, $spent_b;
	$spent_a = $spent_b = $rounds = $sink = 0;
	$start = cpu_ns();
	$end = $start + (int)($seconds * 1e9);
	while (cpu_ns() < $end) {
		$n = mt_rand(1, 8);
		for ($k = 2 * $n; $k > 0; $k--) {
			$sink += alpha();
		}
		for ($k = $n; $k > 0; $k--) {
			$sink += beta();
		}
		$rounds++;
	}
	return [$spent_a, $spent_b, $rounds, $sink, cpu_ns() - $start];
}

// PHP calling C: SHA-256 in PHP's hash extension, PCRE2 in PHP's pcre.
function digest(string $data): string
{
	return hash('sha256', $data);
}

function match_it(string $subject): int
{
	// Runs of digits and dashes never followed by a letter: each run backtracks (no literal
	// the pattern requires, which PCRE2 would look for first and not find).
	return preg_match('/(?:\d+-)+\d+[a-z]/', $subject);
}

function run_native(float $seconds): array
{
	$data = str_repeat('0123456789abcdef', 65536);
	$subject = str_repeat('12345-67890 ', 21845);
	$spent_d = $spent_m = 0;
	$start = cpu_ns();
	$end = $start + (int)($seconds * 1e9);
	while (cpu_ns() < $end) {
		$t0 = cpu_ns();
		digest($data);
		$t1 = cpu_ns();
		match_it($subject);
		$t2 = cpu_ns();
		$spent_d += $t1 - $t0;
		$spent_m += $t2 - $t1;
	}
	return [$spent_d, $spent_m];
}

// C calling PHP: internal functions calling closures back, from a method: one
// closure of the method's own (Foo::{closure}), one handed to it ({closure}).
class Foo
{
	public int $map_ns = 0;

	public function bar(int $n, Closure $replace): int
	{
		$m = array_map(function (int $v): int { // closure-map
			$t = cpu_ns();
			$x = $v;
			for ($i = 0; $i < UNIT; $i++) {
				$x = ($x * 31 + 7) & 0xffffff;
			}
			$this->map_ns += cpu_ns() - $t;
			return $x;
		}, range(1, $n));
		$s = preg_replace_callback('/\d+/', $replace, implode(' ', range(1, $n)));
		return array_sum($m) + strlen($s);
	}
}

function run_callbacks(float $seconds): array
{
	$foo = new Foo();
	$replace_ns = 0;
	$replace = function (array $g) use (&$replace_ns): string { // closure-replace
		$t = cpu_ns();
		$x = (int)$g[0];
		for ($i = 0; $i < UNIT; $i++) {
			$x = ($x * 31 + 7) & 0xffffff;
		}
		$replace_ns += cpu_ns() - $t;
		return (string)$x;
	};
	$end = cpu_ns() + (int)($seconds * 1e9);
	while (cpu_ns() < $end) {
		$foo->bar(mt_rand(1, 8), $replace);
	}
	return [$foo->map_ns, $replace_ns];
}

$args = $argv;
$mode = 'split';
if (isset($args[1]) && !is_numeric($args[1])) {
	$mode = $args[1];
	array_splice($args, 1, 1);
}
$seconds = window_open($args, 'php php_split.php [split|excimer|native|callbacks]');
switch ($mode) {
case 'split':
	[$a, $b, $rounds, $sink, $total] = run_split($seconds);
	echo "$a $b\n";
	fprintf(STDERR, "php_split: %d rounds in %.3f s of CPU: alpha %.3f s, beta %.3f s, alpha/beta %.4f, in them %.1f %% (sink %d); JIT %s\n",
		$rounds, $total / 1e9, $a / 1e9, $b / 1e9, $a / $b, 100 * ($a + $b) / $total, $sink, jit_state());
	break;
case 'excimer':
	$prof = new ExcimerProfiler();
	$prof->setEventType(EXCIMER_CPU);
	$prof->setPeriod(0.001);
	$prof->start();
	[$a, $b, $rounds, $sink, $total] = run_split($seconds);
	$prof->stop();
	$log = $prof->getLog();
	$events = $log->getEventCount();
	$agg = $log->aggregateByFunction();
	printf("%d %d %d %d %d\n", $a, $b, $agg['alpha']['inclusive'] ?? 0, $agg['beta']['inclusive'] ?? 0, $events);
	fprintf(STDERR, "php_split: excimer: %d samples; %d rounds in %.3f s of CPU; JIT %s\n",
		$events, $rounds, $total / 1e9, jit_state());
	break;
case 'native':
	[$d, $m] = run_native($seconds);
	echo "$d $m\n";
	fprintf(STDERR, "php_split: native: digest %.3f s, match_it %.3f s; pcre.jit %s; JIT %s\n",
		$d / 1e9, $m / 1e9, ini_get('pcre.jit'), jit_state());
	break;
case 'callbacks':
	[$mp, $rp] = run_callbacks($seconds);
	echo "$mp $rp\n";
	fprintf(STDERR, "php_split: callbacks: array_map's closure %.3f s, preg_replace_callback's %.3f s; JIT %s\n",
		$mp / 1e9, $rp / 1e9, jit_state());
	break;
default:
	fwrite(STDERR, "php_split: no mode '$mode' (split, excimer, native, callbacks)\n");
	exit(2);
}
