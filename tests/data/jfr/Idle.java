// Allocates a little and ends before the CPU sampler (every 20 ms with
// the JDK's default settings) finds it running Java code.
public class Idle {
	static volatile Object sink;

	public static void main(String[] args) {
		for (int i = 0; i < 1000; i++)
			sink = new byte[64];
	}
}
