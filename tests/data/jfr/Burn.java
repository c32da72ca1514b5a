// Burn.java: a Java program with known CPU shares, recorded by gen.sh for
// the tests of profreg's JFR parser (see tests/data/README.md).
//
// Each round spins 3 units in Burn.hot for every unit in Burn.warm, runs a
// lambda that spins one more unit, and allocates byte arrays in
// Burn.allocate, some of which it keeps so they are not optimised away.
import java.util.function.LongUnaryOperator;

public final class Burn {
	static volatile long sink;
	static final byte[][] kept = new byte[64][];

	static long hot(long n) {
		long x = 1;
		for (long i = 0; i < n; i++)
			x = x * 6364136223846793005L + i;
		return x;
	}

	static long warm(long n) {
		long x = 7;
		for (long i = 0; i < n; i++)
			x = x * 2862933555777941757L + i;
		return x;
	}

	static long allocate(int n) {
		long sum = 0;
		for (int i = 0; i < n; i++) {
			byte[] b = new byte[256 + (i & 1023)];
			kept[i & 63] = b;
			sum += b.length;
		}
		return sum;
	}

	public static void main(String[] args) {
		long millis = Long.parseLong(args[0]);
		long unit = 2_000_000;
		LongUnaryOperator lambda = n -> {
			long x = 3;
			for (long i = 0; i < n; i++)
				x = x * 3935559000370003845L + i;
			return x;
		};
		long end = System.currentTimeMillis() + millis;
		while (System.currentTimeMillis() < end) {
			sink += hot(3 * unit);
			sink += warm(unit);
			sink += lambda.applyAsLong(unit);
			sink += allocate(2000);
		}
	}
}
