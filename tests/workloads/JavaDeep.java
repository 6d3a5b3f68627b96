// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A JVM whose samples are deep in Java: deep calls itself DEPTH times,
// then leaf runs a chain of dependent register operations (xorshift and
// multiply, so the JIT can neither fold nor vectorise it) for a while,
// and the recursion unwinds and starts again. Nearly every sample is in
// leaf with DEPTH frames of deep and run and main below it.
//
// It warms up first (rounds until the JIT has compiled nothing new for
// 0.5 s, at least 2000 of them), creates READY_FILE, then runs for
// SECONDS. Run it with
//   -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaDeep::deep
//   -XX:CompileCommand=dontinline,JavaDeep::leaf
// so that each level stays a compiled frame of its own.
//
// Compiled at bench time: javac --release 17 -d DIR JavaDeep.java.
// usage: java -cp DIR JavaDeep SECONDS READY_FILE [DEPTH]
import java.io.File;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

class JavaDeep {
	static final int WORK = 20000;
	static volatile long sink;

	static long leaf(long x) {
		for (int i = 0; i < WORK; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			x *= 0x9E3779B97F4A7C15L;
		}
		return x;
	}

	static long deep(int k, long x) {
		if (k == 0)
			return leaf(x);
		long r = deep(k - 1, x + k);
		return r ^ k;
	}

	static void run(int depth, long rounds) {
		long x = 1;
		for (long r = 0; r < rounds; r++)
			x = deep(depth, x);
		sink = x;
	}

	public static void main(String[] args) throws IOException {
		double seconds = Double.parseDouble(args[0]);
		File ready = new File(args[1]);
		int depth = args.length > 2 ? Integer.parseInt(args[2]) : 40;
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();

		long last = -1, still = System.nanoTime();
		for (int n = 0; n < 2000 || System.nanoTime() - still < 500_000_000L; n++) {
			run(depth, 1);
			long t = jit.getTotalCompilationTime();
			if (t != last) {
				last = t;
				still = System.nanoTime();
			}
		}
		ready.createNewFile();
		long stop = System.nanoTime() + (long)(seconds * 1e9);
		while (System.nanoTime() < stop)
			run(depth, 100);
	}
}
