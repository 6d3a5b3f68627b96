<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A short PHP process: short_fn runs the chain for 250 ms of its CPU time,
// then the process ends. Started many times over, it is the storm of
// short-lived processes a profiler must name from their first samples.
//
// usage: php php_short.php
require __DIR__ . '/php_window.php';

function short_fn(): int
{
	$end = cpu_ns() + 250000000;
	$x = 1;
	while (cpu_ns() < $end) {
		for ($i = 0; $i < 10000; $i++) {
			$x = ($x * 31 + 7) & 0xffffff;
		}
	}
	return $x;
}

exit(short_fn() >= 0 ? 0 : 1);
