import java.util.*;
import java.util.function.*;

public class Work {
    static volatile long sink;
    static int factor = 1;

    static long hot(int n) {            // ~50%
        long s = 0;
        for (int i = 0; i < n * 5; i++) { s += (i * 2654435761L) ^ (s >>> 7); }
        return s;
    }
    static long warm(int n) {           // ~20%, x2 in "slow"
        long s = 0;
        for (int i = 0; i < n * 2 * factor; i++) { s += (i * 40503L) ^ (s >>> 3); }
        return s;
    }
    static long cold(int n) {           // ~10%
        long s = 0;
        for (int i = 0; i < n; i++) { s += Long.rotateLeft(s + i, 5); }
        return s;
    }
    static List<int[]> alloc(int n) {   // allocation source
        List<int[]> l = new ArrayList<>();
        for (int i = 0; i < n; i++) l.add(new int[64 * factor]);
        return l;
    }
    static <T> T generic(Supplier<T> s) { return s.get(); }

    public static void main(String[] a) throws Exception {
        if (a.length > 0 && a[0].equals("slow")) factor = 2;
        long secs = a.length > 1 ? Long.parseLong(a[1]) : 4;
        long end = System.nanoTime() + secs * 1_000_000_000L;
        while (System.nanoTime() < end) {
            sink += hot(200_000);
            sink += warm(200_000);
            sink += cold(200_000);
            sink += generic(() -> alloc(2000).size());
            IntUnaryOperator f = x -> (int) hot(x);
            sink += f.applyAsInt(50_000);
        }
    }
}
