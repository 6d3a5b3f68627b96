// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
//
// A JIT workload: two named functions share the CPU 2:1, as compiled by
// V8, which lists its code in /tmp/perf-PID.map when run with
// --perf-basic-prof:
//   (anonymous) -> hotFunctionA -> burn    two thirds
//   (anonymous) -> hotFunctionB -> burn    one third
// As in split.c, each round runs 2n and n units, n random in 1..8, so the
// rounds have no period of their own to alias with sampling. A unit is a
// chain of dependent floating-point multiply-adds (as work.h's chain for
// the C workloads): its time is the operations' latency, on any x86-64 CPU.
// With WL_MEASURE=1 it prints the wall time spent in each function
// ("measured: NAME NS" on stderr; on an idle machine, their CPU time).
//
// usage: node --perf-basic-prof --no-turbo-inlining jit.js [SECONDS]   (default 10)
'use strict';

const UNIT = 10000;

// Both burn CPU in the same function: the same machine code, whichever
// tier V8 has compiled it to by then, so a unit costs the same under
// either. (Run with --no-turbo-inlining, or TurboFan folds them all into
// the loop below, and their frames with them.)
function burn(units) {
	let s = 1;
	for (let i = 0; i < units * UNIT; i++)
		s = s * 0.9999999 + 1e-7;
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
const measure = !!process.env.WL_MEASURE && process.env.WL_MEASURE !== '0';
const measured = { hotFunctionA: 0n, hotFunctionB: 0n };
let x = 88172645, sink = 0;

function metered(name, fn, units) {
	const t0 = process.hrtime.bigint();
	const r = fn(units);
	measured[name] += process.hrtime.bigint() - t0;
	return r;
}

while (Date.now() < end) {
	for (let i = 0; i < 50; i++) {
		// xorshift32: random n in 1..8
		x ^= x << 13;
		x ^= x >>> 17;
		x ^= x << 5;
		const n = 1 + ((x >>> 0) % 8);
		if (measure) {	// a frame of its own: only when measuring
			sink += metered('hotFunctionA', hotFunctionA, 2 * n);
			sink += metered('hotFunctionB', hotFunctionB, n);
		} else {
			sink += hotFunctionA(2 * n);
			sink += hotFunctionB(n);
		}
	}
}
if (measure)
	for (const [name, ns] of Object.entries(measured))
		process.stderr.write(`measured: ${name} ${ns}\n`);
if (sink === 0)
	console.log(sink);
