// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A JVM with a known split. alpha and beta run the same chain of dependent
// register operations (work: xorshift and multiply, each step waiting on the
// last, so the JIT can neither fold nor vectorise it), alpha 2N steps to
// beta's N a round. Part of alpha's steps are in mix, a small method C2
// inlines into alpha's loop: a profile that expands inlined frames shows
// alpha;mix, one that does not shows them as alpha. alpha's and beta's steps
// are as many: alpha = 2 x (WORK + MIX) steps, beta = WORK + MIX.
//
// It measures the thread CPU time it spends inside each call
// (ThreadMXBean.getCurrentThreadCpuTime), and at its end prints
//   split alpha_ns=A beta_ns=B
// on stdout (and in OUT_FILE with --out): the split a profiler should find,
// whatever the CPU and however loaded the machine.
//
// With --threads, threads t1 and t2 run one and two instead, the same calls
// of work in bursts of 10 ms; t2 sleeps after each burst as long as it
// took, so it spends about half t1's CPU time. It prints
//   threads t1_ns=A t2_ns=B
// each thread's CPU time from READY_FILE to its end.
//
// It warms up first: rounds until the JIT has compiled nothing new for
// 0.5 s (CompilationMXBean's total time stands still), at least 3000 of
// them (one with no JIT, -Xint). Then it creates READY_FILE, waits for
// GO_FILE if given (--go), and runs for SECONDS, counting from there.
//
// alpha and beta are called from round, which C2 would compile with them
// inlined: to keep each a compiled frame of its own, run it with
//   -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaSplit::alpha
//   -XX:CompileCommand=dontinline,JavaSplit::beta (and ::one, ::two)
// (quiet: else each CompileCommand is echoed on stdout).
//
// Compiled at test time: javac --release 17 -d DIR JavaSplit.java.
// usage: java -cp DIR JavaSplit [--threads] [--go GO_FILE] [--out OUT_FILE] SECONDS READY_FILE
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

class JavaSplit {
	static final int WORK = 24000;
	static final int MIX = 8000;
	static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	static volatile long sink;
	static long alphaNs, betaNs;

	// One step: xorshift then an odd multiply. Each depends on the last.
	static long work(long x, int n) {
		for (int i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			x *= 0x9E3779B97F4A7C15L;
		}
		return x;
	}

	// The same steps as work's, a method small enough for C2 to inline.
	static long mix(long x, int n) {
		for (int i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			x *= 0x9E3779B97F4A7C15L;
		}
		return x;
	}

	static long alpha(long x) {
		for (int i = 0; i < 2; i++)
			x = mix(work(x, WORK), MIX);
		return x;
	}

	static long beta(long x) {
		return work(x, WORK + MIX);
	}

	// One round, timed: alpha, then beta.
	static long round(long x) {
		long t0 = THREADS.getCurrentThreadCpuTime();
		x = alpha(x);
		long t1 = THREADS.getCurrentThreadCpuTime();
		x = beta(x);
		long t2 = THREADS.getCurrentThreadCpuTime();
		alphaNs += t1 - t0;
		betaNs += t2 - t1;
		return x;
	}

	static long one(long x) {
		return work(x, WORK + MIX);
	}

	static long two(long x) {
		return work(x, WORK + MIX);
	}

	// Rounds of f until the JIT has been idle for 0.5 s, at least min of
	// them (and at most 30 s).
	interface Round {
		long run(long x);
	}

	static long warm(Round f, long x, int min) {
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();

		// No JIT (-Xint): nothing to wait for.
		if (jit == null)
			return f.run(x);
		long last = jit.getTotalCompilationTime(), since = System.nanoTime();
		long give_up = since + 30_000_000_000L;

		for (int i = 0;; i++) {
			x = f.run(x);
			long now = System.nanoTime(), t = jit.getTotalCompilationTime();
			if (t != last) {
				last = t;
				since = now;
			} else if (i >= min && now - since > 500_000_000L)
				break;
			if (now > give_up)
				break;
		}
		return x;
	}

	static void ready(String readyFile, String goFile) throws IOException, InterruptedException {
		new File(readyFile).createNewFile();
		if (goFile != null)
			while (!new File(goFile).exists())
				Thread.sleep(10);
	}

	static String split(double seconds, String readyFile, String goFile) throws Exception {
		long x = warm(JavaSplit::round, 1, 3000);

		alphaNs = betaNs = 0;
		ready(readyFile, goFile);
		long end = System.nanoTime() + (long) (seconds * 1e9);
		while (System.nanoTime() < end)
			x = round(x);
		sink = x;
		return "split alpha_ns=" + alphaNs + " beta_ns=" + betaNs;
	}

	// A thread running f until end, its CPU time in spent[slot]: calls of f
	// for 10 ms at a time; with sleepy, after each 10 ms a sleep as long.
	static Thread worker(String name, Round f, boolean sleepy, long[] spent, int slot,
			     CountDownLatch started, long[] end) {
		return new Thread(() -> {
			long x = slot + 1, t0 = THREADS.getCurrentThreadCpuTime();
			started.countDown();
			try {
				started.await();
				while (System.nanoTime() < end[0]) {
					long w0 = System.nanoTime(), w;
					do
						x = f.run(x);
					while ((w = System.nanoTime() - w0) < 10_000_000L);
					if (sleepy)
						LockSupport.parkNanos(w);
				}
			} catch (InterruptedException e) {
				throw new RuntimeException(e);
			}
			spent[slot] = THREADS.getCurrentThreadCpuTime() - t0;
			sink = x;
		}, name);
	}

	static String threads(double seconds, String readyFile, String goFile) throws Exception {
		long x = warm(JavaSplit::one, 1, 3000);
		x = warm(JavaSplit::two, x, 3000);
		sink = x;

		long[] spent = new long[2], end = { Long.MAX_VALUE };
		CountDownLatch started = new CountDownLatch(3);
		Thread t1 = worker("t1", JavaSplit::one, false, spent, 0, started, end);
		Thread t2 = worker("t2", JavaSplit::two, true, spent, 1, started, end);
		ready(readyFile, goFile);
		end[0] = System.nanoTime() + (long) (seconds * 1e9);
		t1.start();
		t2.start();
		started.countDown();
		t1.join();
		t2.join();
		return "threads t1_ns=" + spent[0] + " t2_ns=" + spent[1];
	}

	public static void main(String[] args) throws Exception {
		boolean threads = false;
		String go = null, out = null;
		int i = 0;

		for (; i < args.length && args[i].startsWith("--"); i++) {
			if (args[i].equals("--threads"))
				threads = true;
			else if (args[i].equals("--go"))
				go = args[++i];
			else if (args[i].equals("--out"))
				out = args[++i];
			else
				throw new IllegalArgumentException("unknown option " + args[i]);
		}
		if (args.length - i != 2)
			throw new IllegalArgumentException(
				"usage: JavaSplit [--threads] [--go GO_FILE] [--out OUT_FILE] SECONDS READY_FILE");
		double seconds = Double.parseDouble(args[i]);
		String line = threads ? threads(seconds, args[i + 1], go) : split(seconds, args[i + 1], go);

		System.out.println(line);
		if (out != null)
			try (PrintWriter w = new PrintWriter(out)) {
				w.println(line);
			}
	}
}
