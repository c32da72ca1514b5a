package acme;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.LongUnaryOperator;

/*
 * Spins in two classes the JVM makes at run time, both in package acme:
 * a lambda's class (acme.Hidden$$Lambda$N) and a hidden class defined
 * from the bytes of acme/Spin.class (Lookup.defineHiddenClass).
 */
public class Hidden {
	static volatile long sink;

	public static void main(String[] args) throws Throwable {
		long end = System.currentTimeMillis() + Long.parseLong(args[0]);
		byte[] bytes;
		try (var in = Hidden.class.getResourceAsStream("Spin.class")) {
			bytes = in.readAllBytes();
		}
		Class<?> spin = MethodHandles.lookup().defineHiddenClass(bytes, true).lookupClass();
		MethodHandle run = MethodHandles.lookup().findStatic(spin, "run",
			MethodType.methodType(long.class, int.class));
		LongUnaryOperator lambda = x -> {
			long s = 0;
			for (long i = 0; i < x; i++)
				s += i * i ^ s;
			return s;
		};
		while (System.currentTimeMillis() < end) {
			sink += lambda.applyAsLong(200000);
			sink += (long) run.invokeExact(200000);
		}
	}
}
