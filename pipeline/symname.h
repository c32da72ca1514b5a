/*
 * symname.h: one name for a function whatever process or build ran it.
 *
 * Some runtimes and toolchains put into a function's name what the
 * process or the build made up. The JVM names the classes it generates
 * after where they happened to be loaded, so the same lambda is
 * "Checkout$$Lambda$41/0x00007f5df8000a08.apply" in one JVM and
 * "Checkout$$Lambda$43/0x00007f29ec000a08.apply" in the next; rustc ends
 * a symbol with a hash of the crate's build ("::h8f3a1b2c4d5e6f70"), and
 * LLVM's ThinLTO a promoted local with one (".llvm.6425391548234110923"),
 * both new in each release's binary. Profilers print those names as they
 * are (perf with the JVM's perf map, async-profiler, pprof-rs, perf on a
 * Rust binary), so without this each capture or release would hold its
 * own copy of the function and none of them a baseline.
 */
#ifndef PR_SYMNAME_H
#define PR_SYMNAME_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Rewrite the function name s[0..n) in place without the parts a process
 * or a build makes up, and return its new length (never more than n):
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
 *   - JFR's event handler classes (as JDK 17 names them), "jdk/jfr/internal/
 *     handlers/EventHandler1385_1796401219436-30042"    -> "EventHandler"
 *   - Byte Buddy's random suffixes, "$ByteBuddy$Xy12Ab34" and Hibernate's
 *     "$HibernateProxy$Xy12Ab34"      -> "$ByteBuddy", "$HibernateProxy"
 *   - a Rust legacy symbol's hash at the end, "::h" and 16 hex digits
 *   - a ThinLTO suffix at the end, ".llvm." and digits
 *   - GCC's clone suffixes, ".isra.0", ".constprop.1", ".part.2", ".cold"
 *     (see without_clone), also in the demangler's " [clone .isra.0]"
 *     and before a kernel frame's "_[k]"         -> "parse_header"
 *   - a crate's build hash, in Rust's v0 mangling "Cs1234abcd_3app"
 *     -> "C3app", demangled "app[1234abcd5678ef90]::" -> "app::"
 *   - the shapes of a Go generic's instance, "main.Sum[go.shape.int_0]"
 *                                                    -> "main.Sum[...]"
 *   - the ids in profilers' frames for a process or a thread, and a
 *     process's command line, which may hold a secret: py-spy's
 *     "process 4121:\"python app.py --token=...\"" -> "process",
 *     "thread (4122): MainThread" -> "thread: MainThread", and
 *     async-profiler's "[worker-3 tid=4123]" -> "[worker-3]"
 *   - pprof-nodejs's anonymous function at a line and column,
 *     "(anonymous:L#14:C#26)"                              -> "(anonymous)"
 *   - a shared library's frame without a symbol, named after its file
 *     with libtool's three version numbers, "[libstdc++.so.6.0.30]"
 *                                                  -> "[libstdc++.so.6]"
 *     (two numbers, "[libssl.so.1.1]", may be the soname and stay)
 *   - JIT code perf could not name, after the file of the process it
 *     took it from, "[perf-535.map]" and "[jitted-535-12.so]"
 *                                      -> "[perf-N.map]", "[jitted-N-N.so]"
 *   - last, each card number (13 to 19 digits passing Luhn's check, not
 *     part of a hex number; a thread's name is a root frame), e-mail
 *     address, IBAN and AWS key id (redact_names)                    -> "#"
 * Slashes and dots as package separators are both recognised. Names
 * without such parts are left as they are; rewriting a rewritten name
 * changes nothing more.
 */
size_t symname_stable(char *s, size_t n);

/*
 * symname_stable for a name no C or C++ compiler made (Java's from JFR,
 * JavaScript's from V8, a function in a .go, .java, .kt or .js file):
 * a bare ".cold" at its end is its own ("main.cold", "Work.cold"), not
 * GCC's cold part; every other rule is the same.
 */
size_t symname_stable_managed(char *s, size_t n);

/*
 * Whether a function in file f[0..n) was made by no C or C++ compiler
 * (a .go, .java, .kt, .js, .mjs or .cjs file): its name is for
 * symname_stable_managed. f may be NULL when n is 0.
 */
bool symname_managed_file(const char *f, size_t n);

/*
 * The same for the file a function is in, s[0..n): a path's versions
 * that packaging put there go, so that a dependency upgraded, or an
 * interpreter or toolchain moved to its next release, keeps its
 * functions' baselines; but only where one program cannot hold two of
 * them, as two versions' functions have the same names:
 *   - Go's module versions, "google.golang.org/grpc@v1.56.0/server.go"
 *     (as -trimpath writes it, or under the module cache; a module's
 *     next major version is another path) -> "google.golang.org/grpc/server.go"
 *   - Cargo's registry, which links one version of each semver-compatible
 *     range, ".../registry/src/index.crates.io-6f17d22bba15001f
 *     /tokio-1.28.0/src/..."        -> ".../tokio-1/src/..."
 *     ("hashbrown-0.14.3" -> "hashbrown-0.14")
 *   - pnpm's store keeps a package's version, as it installs any two side
 *     by side, but not its peers': ".pnpm/react-dom@18.2.0_react@18.2.0/"
 *                                   -> ".pnpm/react-dom@18.2.0/"
 *   - Python's and Debian's Go's own folders, "lib/python3.11/" and
 *     "/usr/lib/go-1.19/"            -> "lib/python3/", "/usr/lib/go/"
 *   - an interpreter's install, pyenv's and rbenv's "versions/3.11.7/",
 *     nvm's "versions/node/v20.1.0/", Ruby's "lib/ruby/3.2.0/" and
 *     "ruby/gems/3.2.0/"             -> "versions/3/", "node/v20/", ...
 *   - Ruby's gems, of which Bundler activates one version in a process,
 *     "bundle/gems/rails-7.0.4/" or ".../ruby/.../gems/rails-7.0.4/"
 *                                   -> "gems/rails/"
 *   - V8's WebAssembly modules are named by a hash of their bytes,
 *     "wasm://wasm/calc-b21736a2"    -> "wasm://wasm/calc" (one without a
 *     name, "wasm://wasm/b21736a2", is only its hash and stays)
 * A main module's own paths, URLs' versions (Deno loads every one it is
 * given) and anything else are left as they are; rewriting a rewritten
 * path changes nothing more.
 */
size_t symname_stable_file(char *s, size_t n);

#endif
