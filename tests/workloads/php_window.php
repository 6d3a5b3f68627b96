<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// What the PHP workloads here share, as rb_window.rb does the Ruby ones':
// their measured window (arguments SECONDS [READY_FILE GO_FILE], and the
// handshake with the test that runs them: READY_FILE written once loaded,
// then GO_FILE awaited, sleeping, while the profiler loads), and the
// process's CPU clock (getrusage: one thread, so the process's time is the
// thread's).
//   require __DIR__ . '/php_window.php';

// SECONDS, after the handshake when READY_FILE and GO_FILE are given.
function window_open(array $argv, string $usage): float
{
	if (!isset($argv[1]) || !is_numeric($argv[1])) {
		fwrite(STDERR, "usage: $usage SECONDS [READY_FILE GO_FILE]\n");
		exit(2);
	}
	if (isset($argv[3])) {
		file_put_contents($argv[2], '');
		while (!file_exists($argv[3])) {
			usleep(20000);
			clearstatcache();
		}
	}
	return (float)$argv[1];
}

// The process's CPU time (user and system), in ns.
function cpu_ns(): int
{
	$r = getrusage();
	return ($r['ru_utime.tv_sec'] + $r['ru_stime.tv_sec']) * 1000000000
		+ ($r['ru_utime.tv_usec'] + $r['ru_stime.tv_usec']) * 1000;
}

// Whether opcache's JIT compiles this run (php -d opcache.enable_cli=1 -d opcache.jit=...).
function jit_state(): string
{
	if (!function_exists('opcache_get_status')) {
		return 'off (no opcache)';
	}
	$s = opcache_get_status(false);
	if (!$s || empty($s['jit']['on'])) {
		return 'off';
	}
	return 'on (' . ini_get('opcache.jit') . ')';
}
