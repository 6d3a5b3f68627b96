// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
//
// A JIT workload: two named functions share the CPU 2:1, as compiled by
// V8, which lists its code in /tmp/perf-PID.map when run with
// --perf-basic-prof:
//   (anonymous) -> hotFunctionA -> burn    two thirds
//   (anonymous) -> hotFunctionB -> burn    one third
// As in split.c, each round runs the same loop 2n and n units, n random
// in 1..8, so the rounds have no period of their own to alias with sampling.
//
// usage: node --perf-basic-prof --no-turbo-inlining jit.js [SECONDS]   (default 10)
'use strict';

const UNIT = 5000;

// Both burn CPU in the same function: the same machine code, whichever
// tier V8 has compiled it to by then, so a unit costs the same under
// either. (Run with --no-turbo-inlining, or TurboFan folds them all into
// the loop below, and their frames with them.)
function burn(units) {
	let s = 0;
	for (let i = 1; i <= units * UNIT; i++)
		s += Math.sqrt(i) / i;
	return s;
}

function hotFunctionA(units) {
	return burn(units);
}

function hotFunctionB(units) {
	return burn(units);
}

const seconds = Number(process.argv[2] || 10);
const end = Date.now() + seconds * 1000;
let x = 88172645, sink = 0;

while (Date.now() < end) {
	for (let i = 0; i < 50; i++) {
		// xorshift32: random n in 1..8
		x ^= x << 13;
		x ^= x >>> 17;
		x ^= x << 5;
		const n = 1 + ((x >>> 0) % 8);
		sink += hotFunctionA(2 * n);
		sink += hotFunctionB(n);
	}
}
if (sink === 0)
	console.log(sink);
