// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A JVM whose time is mostly in native code called through JNI: compress
// deflates 64 KiB buffers of word-like text with java.util.zip.Deflater
// (level 6), so most samples are in zlib's deflate (Debian's JDKs use the
// system's libz.so.1), under Deflater.deflateBytesBytes's JNI stub, under
// compress. The text repeats words from a small vocabulary in a
// pseudo-random order: deflate finds matches (longest_match) without the
// buffer being trivial.
//
// After a warm-up (until the JIT has been idle for 0.5 s) it creates
// READY_FILE, waits for GO_FILE if given (--go), runs for SECONDS, and prints
//   deflate compress_ns=A total_ns=B buffers=N ratio=R
// on stdout: the thread CPU time inside compress, the thread CPU time of
// the whole run, the buffers compressed and in/out bytes.
//
// Compiled at test time: javac --release 17 -d DIR JavaDeflate.java.
// usage: java -cp DIR JavaDeflate [--go GO_FILE] SECONDS READY_FILE
import java.io.File;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.zip.Deflater;

class JavaDeflate {
	static final String[] WORDS = ("the of and to in is was that for on with as by at from his her "
		+ "profiler sample stack frame thread kernel user process program compile method class "
		+ "deflate inflate buffer window match length distance literal huffman tree block")
		.split(" ");

	static byte[] text(int size, long seed) {
		StringBuilder b = new StringBuilder(size + 16);
		long x = seed;

		while (b.length() < size) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			b.append(WORDS[(int) ((x >>> 33) % WORDS.length)]).append((x & 15) == 0 ? ".\n" : " ");
		}
		b.setLength(size);
		return b.toString().getBytes(StandardCharsets.US_ASCII);
	}

	static final Deflater DEFLATER = new Deflater(6);
	static final byte[] OUT = new byte[1 << 20];

	// The compressed size of in.
	static int compress(byte[] in) {
		DEFLATER.reset();
		DEFLATER.setInput(in);
		DEFLATER.finish();
		int n = 0;
		while (!DEFLATER.finished())
			n += DEFLATER.deflate(OUT);
		return n;
	}

	public static void main(String[] args) throws Exception {
		String go = null;
		int i = 0;

		if (args.length > 1 && args[0].equals("--go")) {
			go = args[1];
			i = 2;
		}
		if (args.length - i != 2)
			throw new IllegalArgumentException("usage: JavaDeflate [--go GO_FILE] SECONDS READY_FILE");
		double seconds = Double.parseDouble(args[i]);
		byte[][] bufs = new byte[8][];
		for (int k = 0; k < bufs.length; k++)
			bufs[k] = text(64 << 10, 0x9E3779B97F4A7C15L * (k + 1));

		// Warm: until the JIT has compiled nothing new for 0.5 s, at least
		// 300 buffers (and at most 30 s).
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
		long last = jit.getTotalCompilationTime(), since = System.nanoTime();
		long give_up = since + 30_000_000_000L;
		for (int k = 0;; k++) {
			compress(bufs[k % bufs.length]);
			long now = System.nanoTime(), t = jit.getTotalCompilationTime();
			if (t != last) {
				last = t;
				since = now;
			} else if (k >= 300 && now - since > 500_000_000L)
				break;
			if (now > give_up)
				break;
		}
		new File(args[i + 1]).createNewFile();
		if (go != null)
			while (!new File(go).exists())
				Thread.sleep(10);

		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long start = threads.getCurrentThreadCpuTime(), inside = 0, in = 0, out = 0, n = 0;
		long end = System.nanoTime() + (long) (seconds * 1e9);
		while (System.nanoTime() < end) {
			byte[] b = bufs[(int) (n++ % bufs.length)];
			long t0 = threads.getCurrentThreadCpuTime();
			out += compress(b);
			inside += threads.getCurrentThreadCpuTime() - t0;
			in += b.length;
		}
		long total = threads.getCurrentThreadCpuTime() - start;
		System.out.printf("deflate compress_ns=%d total_ns=%d buffers=%d ratio=%.2f%n",
				  inside, total, n, (double) in / out);
	}
}
