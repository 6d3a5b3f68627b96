// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A busy JVM: alpha and beta run the same chain of dependent multiply-adds
// (work) twice and once a round, compiled by the JIT into anonymous memory.
// After 20,000 rounds of warm-up (past the JIT's last tier's thresholds: with
// -Xbatch, the code that runs from then on is compiled) it creates
// READY_FILE, then runs for SECONDS more. Compiled at test time: javac -d DIR jvm_busy.java.
//
// usage: java -cp DIR JvmBusy SECONDS READY_FILE
import java.io.File;
import java.io.IOException;

class JvmBusy {
	static long work(long n, long x) {
		for (long i = 0; i < n; i++)
			x = x * 31 + 7;
		return x;
	}

	static long alpha(long x) {
		return work(20000, work(20000, x));
	}

	static long beta(long x) {
		return work(20000, x);
	}

	static long run(double seconds, long x) {
		long end = System.nanoTime() + (long) (seconds * 1e9);

		while (System.nanoTime() < end)
			x = beta(alpha(x));
		return x;
	}

	public static void main(String[] args) throws IOException {
		long x = 1;

		for (int i = 0; i < 20000; i++)
			x = beta(alpha(x));

		new File(args[1]).createNewFile();
		System.out.println(run(Double.parseDouble(args[0]), x));
	}
}
