package acme;

/* Loaded as a hidden class by Hidden. */
public class Spin {
	public static long run(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += (long) i * i % 7 ^ s;
		return s;
	}
}
