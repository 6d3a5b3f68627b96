<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// What test_merge_php.c's stacks were recorded from: each shape of PHP
// stack the merge meets, a phase each for SECONDS of CPU (user time), once
// GO_FILE exists (bpfprof attached). User code over execute_ex (alpha,
// tables: the VM's helpers at the leaf), an internal function over its C
// code (hash), C calling PHP back (array_map with a closure) and C calling
// C back (array_map with strtoupper). Run under opcache's JIT too.
//
// usage: php php_merge.php SECONDS [GO_FILE]
const UNIT = 20000;

function cpu(): float
{
	$r = getrusage();
	return $r['ru_utime.tv_sec'] + $r['ru_utime.tv_usec'] / 1e6;
}

function alpha(): int
{
	$x = 1;
	for ($i = 0; $i < UNIT; $i++) {
		$x = ($x * 31 + 7) & 0xffffff;
	}
	return $x;
}

function digest(string $data): string
{
	return hash('sha256', $data);
}

function mapper(int $n): int
{
	return array_sum(array_map(function (int $v): int {
		$x = $v;
		for ($i = 0; $i < UNIT; $i++) {
			$x = ($x * 31 + 7) & 0xffffff;
		}
		return $x;
	}, range(1, $n)));
}

function upper(array $words): int
{
	return count(array_map('strtoupper', $words));
}

function tables(int $n): int
{
	$t = [];
	for ($i = 0; $i < $n; $i++) {
		$t["k$i"] = [$i, "v$i"];
	}
	$s = 0;
	foreach ($t as $k => $v) {
		$s += $v[0] + strlen($k);
	}
	return $s;
}

$secs = (float)($argv[1] ?? 2);
while (isset($argv[2]) && !file_exists($argv[2])) {
	usleep(10000);
}
$data = str_repeat('0123456789abcdef', 65536);
$words = array_fill(0, 64, str_repeat('abcdefghij', 4096));
foreach (['alpha', 'digest', 'mapper', 'upper', 'tables'] as $phase) {
	$end = cpu() + $secs;
	while (cpu() < $end) {
		switch ($phase) {
		case 'alpha': alpha(); break;
		case 'digest': digest($data); break;
		case 'mapper': mapper(8); break;
		case 'upper': upper($words); break;
		case 'tables': tables(20000); break;
		}
	}
}
