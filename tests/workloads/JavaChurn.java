// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A JVM whose code cache churns: classes come, get compiled, are
// deoptimised, recompiled and go, all the time.
//
// Each generation defines Payload anew from its class file's bytes: even
// ones in a class loader of their own, odd ones as a hidden class
// (Lookup.defineHiddenClass, named JavaChurn$Payload/0x...). Its run loops
// over Shape.step: called 3000 times with a Square, the JIT compiles it with
// Square's step inlined behind a type check; then 3000 times with a Circle,
// the check fails, the compiled code is deoptimised and run recompiled.
// Then the generation is dropped; every 16 generations System.gc() unloads
// the dropped classes, and their compiled code leaves the code cache. A
// generation takes some 20 to 50 ms.
//
// After 32 generations (two of those collections) it creates READY_FILE,
// waits for GO_FILE if given (--go), runs for SECONDS, and prints
//   churn generations=N loaded=L unloaded=U
// on stdout: the generations run and the classes loaded and unloaded since
// READY_FILE (ClassLoadingMXBean).
//
// Compiled at test time: javac --release 17 -d DIR JavaChurn.java.
// usage: java -cp DIR JavaChurn [--go GO_FILE] SECONDS READY_FILE
import java.io.File;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;

class JavaChurn {
	public interface Shape {
		long step(long x);
	}

	public interface Task {
		long run(long x, Shape s);
	}

	static final class Square implements Shape {
		public long step(long x) {
			x ^= x << 13;
			x ^= x >>> 7;
			return x * 0x9E3779B97F4A7C15L;
		}
	}

	static final class Circle implements Shape {
		public long step(long x) {
			x ^= x << 17;
			x ^= x >>> 9;
			return x * 0xBF58476D1CE4E5B9L;
		}
	}

	// Defined anew each generation, from its class file's bytes.
	public static class Payload implements Task {
		public Payload() {
		}

		public long run(long x, Shape s) {
			for (int i = 0; i < 1000; i++)
				x = s.step(x);
			return x;
		}
	}

	// A loader of one class, Payload's bytes; the rest from its parent.
	static final class OneClass extends ClassLoader {
		OneClass() {
			super(JavaChurn.class.getClassLoader());
		}

		Class<?> define(byte[] b) {
			return defineClass("JavaChurn$Payload", b, 0, b.length);
		}
	}

	static final Shape SQUARE = new Square(), CIRCLE = new Circle();
	static volatile long sink;

	static long generation(byte[] bytes, int g, long x) throws Exception {
		Class<?> c = g % 2 == 0 ? new OneClass().define(bytes)
			: MethodHandles.lookup().defineHiddenClass(bytes, true).lookupClass();
		Task t = (Task) c.getDeclaredConstructor().newInstance();

		for (int i = 0; i < 3000; i++)
			x = t.run(x, SQUARE);
		for (int i = 0; i < 3000; i++)
			x = t.run(x, CIRCLE);
		if (g % 16 == 15)
			System.gc();
		return x;
	}

	public static void main(String[] args) throws Exception {
		String go = null;
		int i = 0;

		if (args.length > 1 && args[0].equals("--go")) {
			go = args[1];
			i = 2;
		}
		if (args.length - i != 2)
			throw new IllegalArgumentException("usage: JavaChurn [--go GO_FILE] SECONDS READY_FILE");
		double seconds = Double.parseDouble(args[i]);
		byte[] bytes;
		try (InputStream in = JavaChurn.class.getResourceAsStream("JavaChurn$Payload.class")) {
			bytes = in.readAllBytes();
		}

		long x = 1;
		int g = 0;
		for (; g < 32; g++)
			x = generation(bytes, g, x);
		new File(args[i + 1]).createNewFile();
		if (go != null)
			while (!new File(go).exists())
				Thread.sleep(10);

		ClassLoadingMXBean classes = ManagementFactory.getClassLoadingMXBean();
		long loaded = classes.getTotalLoadedClassCount(), unloaded = classes.getUnloadedClassCount();
		long end = System.nanoTime() + (long) (seconds * 1e9);
		int g0 = g;
		for (; System.nanoTime() < end; g++)
			x = generation(bytes, g, x);
		sink = x;
		System.out.println("churn generations=" + (g - g0)
				   + " loaded=" + (classes.getTotalLoadedClassCount() - loaded)
				   + " unloaded=" + (classes.getUnloadedClassCount() - unloaded));
	}
}
