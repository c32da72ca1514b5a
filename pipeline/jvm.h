/*
 * jvm.h: one name for a JVM method whatever process ran it.
 *
 * The JVM names the classes it generates at run time after where they
 * happened to be loaded, so the same lambda or reflective call has a
 * different name in every process: "Checkout$$Lambda$41/0x00007f5df8000a08
 * .apply" in one JVM is "Checkout$$Lambda$43/0x00007f29ec000a08.apply" in
 * the next. Profilers print those names as they are (perf with the JVM's
 * perf map, async-profiler, JFR converters), so without this each
 * capture would hold its own copy of the function and none of them a
 * baseline.
 */
#ifndef PR_JVM_H
#define PR_JVM_H

#include <stddef.h>

/*
 * Rewrite the function name s[0..n) in place without the parts the JVM
 * makes up per process, and return its new length (never more than n):
 *   - a lambda's class, "$$Lambda$41/0x00007f5df8000a08" (JDK 9-20),
 *     "$$Lambda/0x000071b2d8012345" (JDK 21) or "$$Lambda$41/1523554304"
 *     (JDK 8)                                              -> "$$Lambda"
 *   - a method handle's form, "LambdaForm$MH/0x0000000800c0c000"
 *                                                     -> "LambdaForm$MH"
 *   - any other hidden class's address, "/0x" and 8 or more hex digits
 *   - reflection's accessors, "GeneratedMethodAccessor17" (and the
 *     Constructor and SerializationConstructor ones), and proxies,
 *     "$Proxy12" in "jdk/proxy2/"    -> "GeneratedMethodAccessor", "$Proxy"
 *     in "jdk/proxy/"
 *   - Byte Buddy's random suffixes, "$ByteBuddy$Xy12Ab34" and Hibernate's
 *     "$HibernateProxy$Xy12Ab34"      -> "$ByteBuddy", "$HibernateProxy"
 * Slashes and dots as package separators are both recognised. Names
 * without such parts are left as they are; rewriting a rewritten name
 * changes nothing more.
 */
size_t jvm_stable_name(char *s, size_t n);

#endif
