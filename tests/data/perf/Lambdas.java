import java.lang.reflect.Method;
import java.util.function.IntToLongFunction;

/* A JVM whose hot code runs through a lambda and a reflective call. */
public class Lambdas {
    static long spin(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += (i * 31L) ^ (s >>> 3);
        return s;
    }

    public static void main(String[] args) throws Exception {
        IntToLongFunction viaLambda = n -> spin(n) + 1;
        Method viaReflection = Lambdas.class.getDeclaredMethod("spin", int.class);
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000L, acc = 0;
        while (System.nanoTime() < end) {
            acc += viaLambda.applyAsLong(20000);
            acc += (Long) viaReflection.invoke(null, 20000);
        }
        System.out.println(acc + " " + viaLambda.getClass().getName());
    }
}
