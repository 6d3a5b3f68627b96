<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Bad input for a profiler: PHP frames whose chain is scribbled while they
// run. Each round, `scribble` points its own frame's prev_execute_data
// (through FFI, at executor_globals.current_execute_data) at, in turn, an
// address that maps nothing, a page of random bytes, and the frame itself,
// runs a chain of integer steps (no call: nothing reads the link), and
// restores the link before it returns. A third of its time goes to `clean`,
// which touches nothing. Prints "SCRIBBLE_NS CLEAN_NS", the process's CPU
// time in each, at its end.
// The layout is PHP 8's (x86-64): current_execute_data at 488 in the
// executor globals, prev_execute_data at 48 in a frame.
//
// usage: php php_scribble.php SECONDS [READY_FILE GO_FILE]

if (!isset($argv[1]) || !is_numeric($argv[1])) {
	fwrite(STDERR, "usage: php php_scribble.php SECONDS [READY_FILE GO_FILE]\n");
	exit(2);
}
$ffi = FFI::cdef("
	struct frame { void *opline, *call, *return_value, *func; char this_[16]; struct frame *prev; };
	struct globals { char before[488]; struct frame *current_execute_data; };
	extern struct globals executor_globals;");
$page = FFI::new("char[4096]", false, true);
FFI::memcpy($page, random_bytes(4096), 4096);

function steps($n) {
	$x = 1;
	for ($i = 0; $i < $n; $i++)
		$x = ($x * 31 + 7) & 0xffffff;
	return $x;
}

function cpu_ns() {
	$r = getrusage();	// the process's: it has one thread
	return ($r["ru_utime.tv_sec"] + $r["ru_stime.tv_sec"]) * 1000000000 +
	       ($r["ru_utime.tv_usec"] + $r["ru_stime.tv_usec"]) * 1000;
}

function scribble($ffi, $page, $how) {
	$me = $ffi->executor_globals->current_execute_data;
	$saved = $me->prev;
	if ($how == 0)
		$me->prev = $ffi->cast("struct frame *", 0x7ff0deadbee0);
	else if ($how == 1)
		$me->prev = $ffi->cast("struct frame *", FFI::addr($page[2048]));
	else
		$me->prev = $me;
	$x = 1;
	for ($i = 0; $i < 400000; $i++)
		$x = ($x * 31 + 7) & 0xffffff;
	$me->prev = $saved;
	return $x;
}

function clean() {
	return steps(200000);
}

if (isset($argv[3])) {
	file_put_contents($argv[2], "");
	while (!file_exists($argv[3]))
		usleep(20000);
}
$end = hrtime(true) + (int)($argv[1] * 1e9);
$s = $c = 0;
for ($k = 0; hrtime(true) < $end; $k++) {
	$t = cpu_ns();
	scribble($ffi, $page, $k % 3);
	$u = cpu_ns();
	clean();
	$s += $u - $t;
	$c += cpu_ns() - $u;
}
printf("%d %d\n", $s, $c);
