// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A short-lived JVM: spin runs a latency-bound chain of register operations
// for SECONDS of its thread's CPU time, then the JVM exits. Started many
// times in a row, the JVMs' start-up is most of what a profiler sees of them.
//
// Compiled at test time: javac --release 17 -d DIR JavaShort.java.
// usage: java -cp DIR JavaShort SECONDS
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

class JavaShort {
	static volatile long sink;

	static long spin(double seconds) {
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long end = threads.getCurrentThreadCpuTime() + (long) (seconds * 1e9), x = 1;

		while (threads.getCurrentThreadCpuTime() < end)
			for (int i = 0; i < 10000; i++) {
				x ^= x << 13;
				x ^= x >>> 7;
				x ^= x << 17;
			}
		return x;
	}

	public static void main(String[] args) {
		sink = spin(Double.parseDouble(args[0]));
	}
}
