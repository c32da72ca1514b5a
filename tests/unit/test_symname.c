/*
 * test_symname.c: a function keeps one name across processes and builds:
 * the parts the JVM makes up at run time (lambda and hidden class
 * addresses, reflection accessors' and proxies' numbers) and the hashes
 * rustc and ThinLTO put in a build's symbols are dropped, in every
 * format, and nothing else about a name changes.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "pipeline/folded.h"
#include "pipeline/format.h"
#include "pipeline/gunzip.h"
#include "pipeline/symname.h"
#include "pipeline/perf.h"
#include "pipeline/speedscope.h"
#include "tests/support/testdata.h"

/* `text` as `rewrite` leaves it, in a static buffer. */
static const char *rewritten(size_t (*rewrite)(char *, size_t), const char *text)
{
	static char s[512];
	size_t n = strlen(text);

	assert_true(n < sizeof(s));
	memcpy(s, text, n);
	n = rewrite(s, n);
	s[n] = '\0';
	return s;
}

/* The stable form of a name, and of a file. */
static const char *stable(const char *name)
{
	return rewritten(symname_stable, name);
}

static const char *stable_file(const char *path)
{
	return rewritten(symname_stable_file, path);
}

typedef struct rewrite_case {
	const char *in, *out;
} rewrite_case;

/*
 * Each case's `in` takes the form `out`, which a second pass leaves as
 * it is (so a name stored before and one parsed again agree), and each
 * of `same` stays as written.
 */
static void check_rewrites(const char *(*form)(const char *), const rewrite_case *cases,
			   size_t ncases, const char *const *same, size_t nsame)
{
	for (size_t i = 0; i < ncases; i++) {
		if (strcmp(form(cases[i].in), cases[i].out) != 0)
			fail_msg("'%s' became '%s', not '%s'", cases[i].in, form(cases[i].in),
				 cases[i].out);
		assert_string_equal(form(cases[i].out), cases[i].out);
	}
	for (size_t i = 0; i < nsame; i++)
		assert_string_equal(form(same[i]), same[i]);
}

#define NITEMS(a) (sizeof(a) / sizeof(*(a)))

static void test_generated_parts_are_dropped(void **state)
{
	static const rewrite_case cases[] = {
		/* JDK 17's perf map, as perf script prints it (tests/data/perf). */
		{"long Lambdas$$Lambda$1/0x00007f1058000a08.applyAsLong",
		 "long Lambdas$$Lambda.applyAsLong"},
		/* JDK 21 has no number; JDK 8 printed an identity hash. */
		{"com/acme/Checkout$$Lambda/0x000071b2d8012345.apply",
		 "com/acme/Checkout$$Lambda.apply"},
		{"com/acme/Checkout$$Lambda$41/1523554304.apply",
		 "com/acme/Checkout$$Lambda.apply"},
		/* The dotted style and async-profiler's --norm output. */
		{"com.acme.Checkout$$Lambda$41.0x0000000800c03000.apply",
		 "com.acme.Checkout$$Lambda.apply"},
		{"com/acme/Checkout$$Lambda$41.apply", "com/acme/Checkout$$Lambda.apply"},
		{"Validator$$$Lambda$12271/776076516.apply", "Validator$$$Lambda.apply"},
		{"java/lang/invoke/LambdaForm$MH/0x0000000800c0c000.invoke",
		 "java/lang/invoke/LambdaForm$MH.invoke"},
		{"java.lang.invoke.LambdaForm$DMH/1349277854.invokeStatic_L_V",
		 "java.lang.invoke.LambdaForm$DMH.invokeStatic_L_V"},
		{"jdk.internal.reflect.GeneratedMethodAccessor17.invoke",
		 "jdk.internal.reflect.GeneratedMethodAccessor.invoke"},
		{"sun/reflect/GeneratedConstructorAccessor3.newInstance",
		 "sun/reflect/GeneratedConstructorAccessor.newInstance"},
		{"jdk.internal.reflect.GeneratedSerializationConstructorAccessor12.newInstance",
		 "jdk.internal.reflect.GeneratedSerializationConstructorAccessor.newInstance"},
		{"jdk/proxy2/$Proxy45.handle", "jdk/proxy/$Proxy.handle"},
		{"com.sun.proxy.$Proxy12.invoke", "com.sun.proxy.$Proxy.invoke"},
		{"com/acme/Order$HibernateProxy$Ab12Cd34.getTotal",
		 "com/acme/Order$HibernateProxy.getTotal"},
		{"com.acme.Svc$ByteBuddy$xYz98765.call", "com.acme.Svc$ByteBuddy.call"},
		{"com/acme/Gen/0x0000000801234567.run", "com/acme/Gen.run"},
		/* JFR's event handlers, from two real JDK 17 recordings (JFR's
		 * own allocations as a recording starts), and the third in the
		 * form of the JDK's perf map, written by hand. */
		{"jdk/jfr/internal/handlers/EventHandler1385_1796402840569-17334.write",
		 "jdk/jfr/internal/handlers/EventHandler.write"},
		{"jdk/jfr/internal/handlers/EventHandler1386_1796402851754-18188.write",
		 "jdk/jfr/internal/handlers/EventHandler.write"},
		{"void jdk.jfr.internal.handlers.EventHandler1385_1796401219436-30042.write(long)",
		 "void jdk.jfr.internal.handlers.EventHandler.write(long)"},
		/* rustc's legacy hash, demangled (rustc-demangle's plain form) or not. */
		{"alloc::raw_vec::RawVec<T,A>::reserve::do_reserve_and_handle::h9b6f1c0f7a4d2a4e",
		 "alloc::raw_vec::RawVec<T,A>::reserve::do_reserve_and_handle"},
		{"std::rt::lang_start::{{closure}}::h56cab6dcb96c90ce",
		 "std::rt::lang_start::{{closure}}"},
		{"_ZN4burn4spin17hc780836d5ab3d805E", "_ZN4burn4spinE"},
		/* A card number in groups, as people write it. */
		{"pay_4111 1111 1111 1111", "pay_#"},
		{"pay_4111-1111-1111-1111_retry", "pay_#_retry"},
		{"amex 3782-822463-10005 x", "amex # x"},
		{"dots_4111.1111.1111.1111", "dots_#"},
		{"under_4111_1111_1111_1111", "under_#"},
		{"slash_4111/1111/1111/1111", "slash_#"},
		/* Groups that pass no Luhn check, or mix separators, stay. */
		{"pay_4111 1111 1111 1112", "pay_4111 1111 1111 1112"},
		{"pay_4111-1111 1111-1111", "pay_4111-1111 1111-1111"},
		{"v1.2-2024 1234 5678", "v1.2-2024 1234 5678"},
		/* google-pprof --collapsed (gperftools) writes the address after the name. */
		{"compute_fee<0000000000001310>", "compute_fee"},
		{"charge_4111111111111111<0000000000001370>", "charge_#"},
		{"std::vector<int>::push_back<00000000004011a0>", "std::vector<int>::push_back"},
		/* A template's argument is no address. */
		{"Fixed<1234567890123456>", "Fixed<1234567890123456>"},
		/* ThinLTO's promoted locals, alone and after a hash. */
		{"parse_header.llvm.6425391548234110923", "parse_header"},
		{"_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.12345",
		 "_ZN4core3ptr13drop_in_placeE"},
		/* A library's file named by libtool's three numbers is its soname. */
		{"[libstdc++.so.6.0.30]", "[libstdc++.so.6]"},
		{"[libz.so.1.2.13]", "[libz.so.1]"},
		{"[libglib-2.0.so.0.7400.6]", "[libglib-2.0.so.0]"},
		{"[libssl.so.1.0.0]", "[libssl.so.1]"},
		/* JIT code perf could not name: the process's id and the code's number. */
		{"[perf-535.map]", "[perf-N.map]"},
		{"[perf-1.map]", "[perf-N.map]"},
		{"[jitted-535-12.so]", "[jitted-N-N.so]"},
		/* Two in one frame, and a perf-map-agent name. */
		{"Lcom/acme/A$$Lambda$7/0x0000000800c01000;::accept via "
		 "GeneratedMethodAccessor9.invoke",
		 "Lcom/acme/A$$Lambda;::accept via GeneratedMethodAccessor.invoke"},
	};

	(void)state;
	check_rewrites(stable, cases, NITEMS(cases), NULL, 0);
}

static void test_other_names_stay_as_written(void **state)
{
	/* clang-format off */
	static const char *const same[] = {
		"main.main.func1.2",                     /* Go closures */
		"github.com/acme/pay/v2.(*Server).Handle",
		"gopkg.in/yaml.v3.Unmarshal",
		"0x00007f5df8000a08",                    /* an unresolved address */
		"[unknown]", "StubRoutines (1)", "Interpreter",
		"MyLambdaHandler.run", "com/acme/Foo$$LambdaCache.get",
		/* Android's desugared lambdas are named when compiled. */
		"-$$Lambda$WelcomeActivity$ITX_AP2mc22w8XXp7vc8ub9L4vE.onClick",
		"com/acme/Order$Proxy2.run",             /* a class of the program's own */
		"com/acme/EventHandler12_3-4.run", "jdk/jfr/internal/handlers/EventHandler.write",
		"jdk/jfr/internal/handlers/EventHandler12_34.write",
		"jdk/jfr/internal/handlers/EventHandler12_34-5x.write",
		"com/acme/MyGeneratedMethodAccessor7.run",
		"scala/collection/Iterator$$anon$11.hasNext",
		"com/acme/Foo$bar$1.invoke",
		"foo/0x1f.bar",                          /* too short for an address */
		"com/acme/Svc$ByteBuddy$",
		"::h0123456789abcdef",                   /* nothing left without it */
		"burn::spin::h0123456789abcde", "burn::hello",
		"_ZN3foo17h0123456789abcdefX", "my17h0123456789abcdefE",
		"x.llvm.", ".llvm.5", "foo.llvm.12a",
		/* Sonames, and what is no library file with three numbers. */
		"[libstdc++.so.6]", "[libc.so.6]", "[libssl.so.1.1]", "[libpython3.11.so.1.0]",
		"[libicuuc.so.72.1]", "[ld-linux-x86-64.so.2]", "[libfoo.so]", "[.so.1.2.3]",
		"[libx.so.1.2.3a]", "[libx.so.1..3]", "libstdc++.so.6.0.30", "[libx.so.1.2.3",
		"[libx.so.1.2.3] x",
		/* What is no JIT's file named by numbers. */
		"[perf-.map]", "[perf-12x.map]", "[perf-12.map] x", "perf-12.map", "[perf-12.mapx]",
		"[perf-N.map]", "[myperf-12.map]", "[jitted-12.so]", "[jitted-1-2.sox]",
		"[jitted-1-.so]", "[jitted-N-N.so]",
		"",
	};
	/* clang-format on */

	(void)state;
	check_rewrites(stable, NULL, 0, same, NITEMS(same));
}

/*
 * GCC's clones of a function, which a build makes or not as its inlining
 * decides, are the function; a method called cold in a dotted name is a
 * method of its own.
 */
static void test_gcc_clones_are_their_function(void **state)
{
	static const rewrite_case cases[] = {
		{"parse_header.isra.0", "parse_header"},
		{"parse_header.constprop.3", "parse_header"},
		{"memcpy.part.0", "memcpy"},
		{"parse_header.cold", "parse_header"},
		{"main.cold", "main"}, /* so Go's function cold of package main too */
		{"parse_header.cold.12", "parse_header"}, /* GCC 8 numbered it */
		{"parse_header.constprop.0.isra.0", "parse_header"},
		{"parse_header.part.0.cold", "parse_header"},
		{"finish_task_switch.isra.0_[k]", "finish_task_switch_[k]"},
		{"do_syscall_64.cold_[k]", "do_syscall_64_[k]"},
		{"_ZN3app5parseEPKc.isra.0", "_ZN3app5parseEPKc"},
		{"pkg/Foo.bar.isra.0", "pkg/Foo.bar"},
		{"parse_header.isra.0.llvm.123", "parse_header"},
		{"app::parse(char const*) [clone .isra.0]", "app::parse(char const*)"},
		{"app::parse(char const*) [clone .constprop.0] [clone .cold]",
		 "app::parse(char const*)"},
	};
	static const char *const same[] = {
		"parse_header",
		"com.acme.Cache.cold",
		"com/acme/Cache.cold",
		"example.com/pkg.cold",
		"pkg.Type.part",
		"x.part.",
		"x.part.0a",
		".isra.0",
		".cold",
		"cold",
		"x.lto_priv.0",
		"foo.cold.x",
		"f [clone .lto_priv.0]",
		" [clone .isra.0]",
		"f [clone .isra.x]",
		"f [clone .]",
		"f [clone .cold",
		"do_syscall_64_[k]",
	};

	(void)state;
	check_rewrites(stable, cases, NITEMS(cases), same, NITEMS(same));
}

/*
 * Rust's v0 mangling names a crate with a hash of its build, mangled or
 * demangled: two builds name one function alike. A closure's or a
 * shim's own disambiguator numbers code and stays.
 */
static void test_rust_crate_hashes_are_dropped(void **state)
{
	static const rewrite_case cases[] = {
		{"_RNvNtCs1234abcd_3app6handle7process", "_RNvNtC3app6handle7process"},
		{"_RNvNtCs9876fedc_3app6handle7process", "_RNvNtC3app6handle7process"},
		{"_RNvNtCsaT2bRwHzpbr_3app6handle7process", "_RNvNtC3app6handle7process"},
		{"__RNvCs1234abcd_3app4main", "__RNvC3app4main"},
		/* A generic instance names the crates of its arguments too. */
		{"_RINvCs1234abcd_3app3runNtCsq1w2e3r4t5_5serde5ValueE",
		 "_RINvC3app3runNtC5serde5ValueE"},
		{"_RNCNvCs1234abcd_3app4main0B3_", "_RNCNvC3app4main0B3_"},
		{"_RNvCs1234abcd_3app4main.llvm.42", "_RNvC3app4main"},
		{"app[1234abcd5678ef90]::handle::process", "app::handle::process"},
		{"app[9876fedc]::handle::process", "app::handle::process"},
		{"<app[1234abcd5678ef90]::Foo as core[a1b2c3d4e5f60718]::fmt::Display>::fmt",
		 "<app::Foo as core::fmt::Display>::fmt"},
	};
	static const char *const same[] = {
		"_RNvNtC3app6handle7process",
		"_RNvCs_3app4main",     /* disambiguator 0 */
		"_RNvCs1234_3app4main", /* too short for a hash */
		"_RNvCs1234abcd_",
		"NvCs1234abcd_3app4main", /* not a v0 symbol */
		"Cs1234abcd_3app",
		"app[1234abc]::f",
		"app[1234abcd5678ef901]::f",
		"app[1234abcd]",
		"app[1234abcd].f",
		"[1234abcd]::f",
		"app[1234ABCD]::f",
		"app[1234abcg]::f",
	};

	(void)state;
	check_rewrites(stable, cases, NITEMS(cases), same, NITEMS(same));
}

/*
 * Go compiles a generic function once per shape of its type arguments,
 * which perf names and the runtime elides: both are one function.
 */
static void test_go_shapes_are_one_instance(void **state)
{
	static const rewrite_case cases[] = {
		{"main.Sum[go.shape.int_0]", "main.Sum[...]"},
		{"main.Sum[go.shape.int]", "main.Sum[...]"},
		{"main.Apply[go.shape.func(int) int_0]", "main.Apply[...]"},
		{"main.Map[go.shape.[]int_0,go.shape.string_1]", "main.Map[...]"},
		{"main.(*List[go.shape.int_0]).Push", "main.(*List[...]).Push"},
		{"main.Sum[go.shape.int_0].func1", "main.Sum[...].func1"},
	};
	static const char *const same[] = {
		"main.Sum[...]",           "main.(*List[...]).Push", "main.Sum[int]",
		"[go.shape.int]",          "main.Sum[go.shape.int",  "main.Sum[go.shape.[]int",
		"main.Sum [go.shape.int]",
	};

	(void)state;
	check_rewrites(stable, cases, NITEMS(cases), same, NITEMS(same));
}

/*
 * Names pieced together from the rules' own parts, in every order: the
 * result is never longer, and a second pass leaves it as it is (so a
 * name stored before and one parsed again agree).
 */
static void test_rewriting_twice_changes_nothing_more(void **state)
{
	/* clang-format off */
	static const char *const part[] = {
		"$$Lambda", "$", "1", "42", "/", ".", "0x", "00007f1058000a08", "deadbeef",
		"LambdaForm$", "MH", "GeneratedMethodAccessor", "$Proxy", "jdk/proxy", "jdk.proxy",
		"$ByteBuddy$", "$HibernateProxy$", "Ab12", "a", "_", ";", " ", "(", "L", "0X",
		"ABCDEF12", "::h", "0123456789abcdef", ".llvm.", "17h", "E", "_ZN",
		"@v", "1.2.3", ".pnpm/", "python3.11", "go-1.19", "/registry/src/", "idx/",
		"tokio-1.28.0", "@", "-", "0.0.3", "0.17.0-rc.1", "+b", "://", "@4.1.0",
		".pyenv/versions/", "3.11.7", "/ruby/", "gems/", "rails-7.0.4", "bundle/",
		"v20.1.0", "process ", ":\"", "thread (", ")", ": ", "[", "]", " tid=", "tid=",
		"libx", ".so.", "6.0.30", "handlers/", "EventHandler", "handlers.", "?", "#t=",
		":3", "https:", "[perf-", ".map]", "[jitted-", ".so]",
		".isra.", ".constprop.", ".part.", ".cold", "0", "_[k]", " [clone ", "_R", "__R",
		"Cs", "1234abcd", "3app", "u", "[go.shape.", "int_0", "[]", "]::",
		"1234abcd5678ef90",
	};
	/* clang-format on */
	const size_t nparts = sizeof(part) / sizeof(*part);
	uint64_t x = 88172645463325252u;

	(void)state;
	for (int it = 0; it < 400000; it++) {
		char s[256], once[256], twice[256];
		size_t n = 0, a, b;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		for (unsigned i = 0, m = (unsigned)(x % 12); i < m; i++) {
			const char *p;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			p = part[x % nparts];
			memcpy(s + n, p, strlen(p));
			n += strlen(p);
		}
		for (int file = 0; file < 2; file++) {
			size_t (*rewrite)(char *, size_t) = file ? symname_stable_file
								 : symname_stable;

			memcpy(once, s, n);
			a = rewrite(once, n);
			assert_true(a <= n);
			memcpy(twice, once, a);
			b = rewrite(twice, a);
			if (b != a || memcmp(once, twice, a) != 0)
				fail_msg("%s: '%.*s' -> '%.*s' -> '%.*s'", file ? "file" : "name",
					 (int)n, s, (int)a, once, (int)b, twice);
		}
	}
}

static void test_packaging_versions_leave_a_path(void **state)
{
	static const rewrite_case cases[] = {
		/* Go: -trimpath and the module cache (tests/data/pprof/go-dep-*). */
		{"example.com/dep@v1.0.0/dep.go", "example.com/dep/dep.go"},
		{"/root/go/pkg/mod/google.golang.org/grpc@v1.56.0/server.go",
		 "/root/go/pkg/mod/google.golang.org/grpc/server.go"},
		{"github.com/acme/pay/v2@v2.1.1-0.20230101120000-abcdef123456/x.go",
		 "github.com/acme/pay/v2/x.go"},
		{"github.com/acme/old@v1.2.3+incompatible/x.go", "github.com/acme/old/x.go"},
		/* pnpm's store, plain and scoped packages. */
		{"/app/node_modules/.pnpm/express@4.18.2_supports-color@8.1.1/node_modules/e/a.js",
		 "/app/node_modules/.pnpm/express@4.18.2/node_modules/e/a.js"},
		{"file:///app/node_modules/.pnpm/@babel+core@7.22.0_react@18.2.0/node_modules/a.js",
		 "file:///app/node_modules/.pnpm/@babel+core@7.22.0/node_modules/a.js"},
		{"/a/.pnpm/react-dom@18.3.0-canary-2a_react@18.2.0/node_modules/r.js",
		 "/a/.pnpm/react-dom@18.3.0-canary-2a/node_modules/r.js"},
		/* Cargo's registry. */
		{"/root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokio-1.28.0/src/a.rs",
		 "/root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokio-1/src/a.rs"},
		{"/root/.cargo/registry/src/github.com-1ecc6299db9ec823/tokio-util-0.7.8/src/c.rs",
		 "/root/.cargo/registry/src/github.com-1ecc6299db9ec823/tokio-util-0.7/src/c.rs"},
		{"/c/registry/src/idx/ring-0.17.0-rc.1/src/x.rs",
		 "/c/registry/src/idx/ring-0.17/src/x.rs"},
		{"/c/registry/src/idx/utf-8-0.7.6/src/x.rs",
		 "/c/registry/src/idx/utf-8-0.7/src/x.rs"},
		{"/c/registry/src/idx/x-0.0.3+build.1/src/x.rs",
		 "/c/registry/src/idx/x-0.0.3/src/x.rs"},
		{"/h/registry/src/app/.cargo/registry/src/idx/tokio-1.28.0/src/a.rs",
		 "/h/registry/src/app/.cargo/registry/src/idx/tokio-1/src/a.rs"},
		/* Interpreters' and toolchains' own folders. */
		{"/app/.venv/lib/python3.11/site-packages/requests/api.py",
		 "/app/.venv/lib/python3/site-packages/requests/api.py"},
		{"/usr/lib/python3.12/json/decoder.py", "/usr/lib/python3/json/decoder.py"},
		{"/usr/lib/go-1.19/src/runtime/proc.go", "/usr/lib/go/src/runtime/proc.go"},
		{"/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py",
		 "/root/.pyenv/versions/3/lib/python3/json/decoder.py"},
		{"/home/u/.rbenv/versions/3.2.2/lib/ruby/3.2.0/set.rb",
		 "/home/u/.rbenv/versions/3/lib/ruby/3/set.rb"},
		{"/root/.nvm/versions/node/v20.20.2/lib/node_modules/pm2/lib/God.js",
		 "/root/.nvm/versions/node/v20/lib/node_modules/pm2/lib/God.js"},
		/* V8's WebAssembly scripts (tests/data/v8/wasm-*.cpuprofile). */
		{"wasm://wasm/calc-2987b346", "wasm://wasm/calc"},
		{"wasm://wasm/my-mod.wasm-E2E9260A", "wasm://wasm/my-mod.wasm"},
		/* Ruby's gems, one version of each in a process (rbspy's files). */
		{"/usr/local/bundle/gems/activerecord-7.0.4/lib/active_record/base.rb",
		 "/usr/local/bundle/gems/activerecord/lib/active_record/base.rb"},
		{"/usr/local/lib/ruby/gems/3.2.0/gems/nokogiri-1.14.2-x86_64-linux/lib/n.rb",
		 "/usr/local/lib/ruby/gems/3/gems/nokogiri/lib/n.rb"},
		{"/app/vendor/bundle/ruby/3.2.0/gems/activerecord-import-1.4.1/lib/a.rb",
		 "/app/vendor/bundle/ruby/3/gems/activerecord-import/lib/a.rb"},
	};
	static const char *const same[] = {
		"example.com/app/main.go", "runtime/proc.go", "app.py", "",
		"/srv/api/versions/1.0/views.py",            /* an app's own versions */
		"/srv/app/gems/foo-1.2.3/x.rb",              /* not a Ruby library's */
		"/usr/local/bundle/gems/rails/x.rb", "/root/.pyenv/versions/system/x.py",
		"/root/.pyenv/versions/3.11-dev/x.py", "/root/.pyenv/versions/3/x.py",
		"/usr/local/bundle/gems/foo-2fa/x.rb",
		"/app/node_modules/@babel/core/lib/index.js", /* a scope, not a version */
		"/home/u/foo@bar/x.py", "/srv/user@v/x.go", "/srv/@v1/x.go",
		"/srv/python3/x.py", "/srv/python3.x/y.py", "/srv/python3./y.py",
		"/opt/go-1.x/a.go", "/opt/go-1./a.go",
		"/src/tokio-1.28.0/x.rs",                    /* not in a registry */
		"/c/registry/src/tokio-1.28.0/x.rs",         /* the index, not a crate */
		"/c/registry/src/idx/tokio/src/x.rs",
		"/c/registry/src/idx/tokio-1.28/src/x.rs", /* not a crate's version */
		"/c/registry/src/idx/-1.2.3/src/x.rs",
		"/a/.pnpm/github.com+u+r@0123abc/node_modules/r.js",
		"wasm://wasm/2987b346", "wasm://wasm/-2987b346", "wasm://wasm/a-2987b34",
		"wasm://wasm/a-2987b34g", "wasm://wasm/a-1234abcd-2987b346",
		"wasm://wasm/a/b-2987b346", "https://cdn.example/wasm/a-2987b346",
		/* A URL's module is whatever version it names (Deno, CDNs). */
		"https://deno.land/x/oak@v12.6.1/router.ts",
	};

	(void)state;
	check_rewrites(stable_file, cases, NITEMS(cases), same, NITEMS(same));
}

/*
 * A program holds two versions of one dependency where its package
 * manager allows it, and their functions have the same names: pnpm
 * installs any two versions side by side (Express 4 itself loads ms 2.0.0
 * through debug and ms 2.1.3 through send), Cargo links one version per
 * semver-compatible range (hashbrown 0.12 and 0.14, whose names are alike
 * once their hashes go), and Deno loads every URL it is given. Each keeps
 * its own file.
 */
static void test_two_versions_in_one_program_keep_two_files(void **state)
{
	static const char *const pairs[][2] = {
		{"/app/node_modules/.pnpm/ms@2.0.0/node_modules/ms/index.js",
		 "/app/node_modules/.pnpm/ms@2.1.3/node_modules/ms/index.js"},
		{"file:///app/node_modules/.pnpm/debug@2.6.9/node_modules/debug/src/node.js",
		 "file:///app/node_modules/.pnpm/debug@4.3.4_supports-color@8.1.1/node_modules/"
		 "debug/src/node.js"},
		{"/r/.cargo/registry/src/index.crates.io-6f17d22bba15001f/hashbrown-0.12.3/a.rs",
		 "/r/.cargo/registry/src/index.crates.io-6f17d22bba15001f/hashbrown-0.14.3/a.rs"},
		{"/r/.cargo/registry/src/index.crates.io-6f17d22bba15001f/bitflags-1.3.2/lib.rs",
		 "/r/.cargo/registry/src/index.crates.io-6f17d22bba15001f/bitflags-2.4.1/lib.rs"},
		{"/r/.cargo/registry/src/idx/x-0.0.3/src/lib.rs",
		 "/r/.cargo/registry/src/idx/x-0.0.4/src/lib.rs"},
		{"https://deno.land/x/oak@v11.1.0/router.ts",
		 "https://deno.land/x/oak@v12.6.1/router.ts"},
	};
	/* Within one compatible range Cargo has one version: upgrades keep the file. */
	static const char *const upgrades[][2] = {
		{"/r/.cargo/registry/src/idx/tokio-1.28.0/src/lib.rs",
		 "/r/.cargo/registry/src/idx/tokio-1.35.1/src/lib.rs"},
		{"/r/.cargo/registry/src/idx/hashbrown-0.14.0/src/a.rs",
		 "/r/.cargo/registry/src/idx/hashbrown-0.14.3/src/a.rs"},
		{"/app/node_modules/.pnpm/react-dom@18.2.0_react@18.2.0/node_modules/r.js",
		 "/app/node_modules/.pnpm/react-dom@18.2.0_react@18.3.1/node_modules/r.js"},
	};
	char a[512];

	(void)state;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(*pairs); i++) {
		snprintf(a, sizeof(a), "%s", stable_file(pairs[i][0]));
		if (strcmp(a, stable_file(pairs[i][1])) == 0)
			fail_msg("'%s' and '%s' both became '%s'", pairs[i][0], pairs[i][1], a);
	}
	for (size_t i = 0; i < sizeof(upgrades) / sizeof(*upgrades); i++) {
		snprintf(a, sizeof(a), "%s", stable_file(upgrades[i][0]));
		assert_string_equal(a, stable_file(upgrades[i][1]));
	}
}

/*
 * Two real Go programs built against two versions of one module (a file
 * GOPROXY, go build -trimpath, runtime/pprof): the module's function
 * keeps one name and one file, so its baseline survives the upgrade.
 */
static void test_a_go_dependency_upgrade_keeps_its_functions(void **state)
{
	static const char *const files[] = {"pprof/go-dep-v1.0.0.pb.gz",
					    "pprof/go-dep-v1.1.0.pb.gz"};
	static const char *const raw[] = {"example.com/dep@v1.0.0/dep.go",
					  "example.com/dep@v1.1.0/dep.go"};

	(void)state;
	for (int f = 0; f < 2; f++) {
		pr_error err = PR_ERROR_INIT;
		buf gz = BUF_INIT, pb = BUF_INIT;
		profile *p = NULL;
		bool found = false;

		testdata_read(&gz, files[f]);
		assert_int_equal(gunzip_bounded(&pb, (const uint8_t *)gz.ptr, gz.len, 1 << 20,
						files[f], &err), 0);
		assert_non_null(memmem(pb.ptr, pb.len, raw[f], strlen(raw[f])));
		assert_int_equal(format_parse(&p, (const uint8_t *)gz.ptr, gz.len,
					      PROFILE_FMT_AUTO, files[f], NULL, &err), 0);
		for (size_t i = 0; i < p->nfuncs; i++) {
			if (strstr(p->funcs[i].file, "@v"))
				fail_msg("%s: '%s' kept its version", files[f], p->funcs[i].file);
			if (strcmp(p->funcs[i].name, "example.com/dep.Checksum") == 0) {
				assert_string_equal(p->funcs[i].file, "example.com/dep/dep.go");
				found = true;
			}
		}
		assert_true(found);
		profile_free(p);
		buf_release(&gz);
		buf_release(&pb);
	}
}

static const profile_summary_row *row_of(const profile *p, const profile_summary *sm,
					 const char *name)
{
	for (size_t i = 0; i < sm->nrows; i++)
		if (strcmp(p->funcs[sm->rows[i].func].name, name) == 0)
			return &sm->rows[i];
	return NULL;
}

static void test_one_lambda_across_lines_of_collapsed_stacks(void **state)
{
	static const char text[] =
		"main;com/acme/Pay$$Lambda$12/0x00007f1058000a08.apply;com/acme/Pay.charge 3\n"
		"main;com/acme/Pay$$Lambda$14/0x00007f2110000a08.apply 4\n"
		"main;com/acme/Pay$$Lambda$14/0x00007f2110000a08.apply_[j] 1\n";
	pr_error err = PR_ERROR_INIT;
	profile_summary sm;
	profile *p = NULL;
	const profile_summary_row *r;

	(void)state;
	assert_int_equal(folded_parse(&p, (const uint8_t *)text, strlen(text), "pay.folded", NULL,
				      &err), 0);
	assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
	assert_non_null(r = row_of(p, &sm, "com/acme/Pay$$Lambda.apply"));
	assert_int_equal(r->self, 5);
	assert_int_equal(r->total, 8);
	assert_int_equal(p->nfuncs, 3);
	profile_summary_release(&sm);
	profile_free(p);
}

static void test_process_and_thread_frames_lose_their_ids(void **state)
{
	static const rewrite_case cases[] = {
		/* py-spy --subprocesses and --threads (its stack_trace.rs, main.rs). */
		{"process 4130:\"gunicorn: worker [pay]\"", "process"},
		{"process 4130:\"python worker.py --db postgres://pay:hunter2@db/pay\"",
		 "process"},
		{"process 77:\"python worker.py --key=\"a b\"", "process"},
		{"thread (4131)", "thread"},
		{"thread (0x7F3A2B1C4700)", "thread"},
		{"thread (4131): MainThread", "thread: MainThread"},
		{"thread (4131): Thread-5 (worker)", "thread: Thread-5 (worker)"},
		/* async-profiler --threads (its frameName.cpp). */
		{"[pool-2-thread-1 tid=31337]", "[pool-2-thread-1]"},
		{"[C2 CompilerThread0 tid=12]", "[C2 CompilerThread0]"},
		{"[tid=31337]", "[tid]"},
		{"[main [1] tid=7]", "[main [1]]"},
		{"[Foo$$Lambda$3/0x00007f1058000a08 tid=5]", "[Foo$$Lambda]"},
		/* pprof-nodejs's anonymous functions (its profile-serializer.ts). */
		{"(anonymous:L#14:C#26)", "(anonymous)"},
		{"(anonymous:L#8)", "(anonymous)"},
	};
	static const char *const same[] = {
		"process", "processRequest", "process 12", "process x:\"y\"",
		"thread", "thread (main)", "thread (12) x", "thread ()", "threadpool (1)",
		"[tid=]", "[worker tid=x]", "[ tid=1]", "[worker tid=1] x", "worker tid=1]",
		"[k] tid=1", "[unknown]",
		"(anonymous)", "(anonymous:L#)", "(anonymous:L#3:C#)", "(anonymous:L#3:C#4",
		"(anonymous:L#3:C#4) x", "(anonymous:L#x)", "f (anonymous:L#3)",
	};

	(void)state;
	check_rewrites(stable, cases, NITEMS(cases), same, NITEMS(same));
}

/* austin 1.x roots every stack at its thread, "Thread" and an address. */
static void test_austin_thread_frames_lose_their_address(void **state)
{
	static const rewrite_case cases[] = {
		{"Thread 55f2b010a310", "Thread"},
		{"Thread 7f3a2b1c4700", "Thread"},
	};
	static const char *const same[] = {
		"Thread", "Thread ", "Thread main", "Thread 12 x", "Thread face",
	};

	(void)state;
	check_rewrites(stable, cases, NITEMS(cases), same, NITEMS(same));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every function's name and file of p, sorted, one a line, into out. */
static void names_of(buf *out, const profile *p)
{
	char **v = calloc(p->nfuncs, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < p->nfuncs; i++) {
		const char *f = p->funcs[i].file ? p->funcs[i].file : "";

		v[i] = malloc(strlen(p->funcs[i].name) + strlen(f) + 2);
		assert_non_null(v[i]);
		sprintf(v[i], "%s|%s", p->funcs[i].name, f);
	}
	qsort(v, p->nfuncs, sizeof(*v), cmp_str);
	buf_reset(out);
	for (size_t i = 0; i < p->nfuncs; i++) {
		assert_int_equal(buf_printf(out, "%s\n", v[i]), 0);
		free(v[i]);
	}
	free(v);
}

/*
 * Two real wall profiles of one script from @datadog/pprof, the second
 * with three lines more above its anonymous functions: pprof-nodejs
 * named them "(anonymous:L#8:C#2)" and "(anonymous:L#14:C#26)" in the
 * first and ":L#11" and ":L#17" in the second. Both captures name the
 * same functions, and the file's anonymous functions are one, as in a
 * V8 .cpuprofile. Its self and total wall time, from `go tool pprof -raw`:
 * 8 + 624 and + 212 ms in v1, 4 + 12 + 684 and + 196 ms in v2.
 */
static void test_a_moved_anonymous_node_function_keeps_its_name(void **state)
{
	static const char *const files[2] = {"pprof/nodejs-anon-v1.pb.gz",
					     "pprof/nodejs-anon-v2.pb.gz"};
	static const int64_t self_ms[2] = {632, 700}, total_ms[2] = {844, 896};
	buf names[2] = {BUF_INIT, BUF_INIT};

	(void)state;
	for (int f = 0; f < 2; f++) {
		pr_error err = PR_ERROR_INIT;
		buf gz = BUF_INIT;
		profile *p = NULL;
		profile_summary sm;
		bool found = false;

		testdata_read(&gz, files[f]);
		assert_int_equal(format_parse(&p, (const uint8_t *)gz.ptr, gz.len,
					      PROFILE_FMT_AUTO, files[f], NULL, &err), 0);
		assert_string_equal(profile_pick_primary(p, NULL), "wall");
		assert_int_equal(profile_summarize(&sm, p, p->primary, &err), 0);
		for (size_t i = 0; i < sm.nrows; i++) {
			const profile_func *fn = &p->funcs[sm.rows[i].func];

			if (strcmp(fn->name, "(anonymous)") || strcmp(fn->file, "/tmp/app/app.js"))
				continue;
			assert_int_equal(sm.rows[i].self, self_ms[f] * 1000000);
			assert_int_equal(sm.rows[i].total, total_ms[f] * 1000000);
			found = true;
		}
		assert_true(found);
		names_of(&names[f], p);
		profile_summary_release(&sm);
		profile_free(p);
		buf_release(&gz);
	}
	assert_string_equal(names[0].ptr, names[1].ptr);
	buf_release(&names[0]);
	buf_release(&names[1]);
}

/*
 * Two real .cpuprofiles (node v20.20.2) of one WebAssembly module built
 * twice: V8 named its script by the hash of its bytes, calc-2987b346 and
 * calc-e2e9260a. Its function spin is one function of one file in both,
 * with the 46 and 112 samples the files give its node.
 */
static void test_a_rebuilt_wasm_module_keeps_its_functions(void **state)
{
	static const char *const files[2] = {"v8/wasm-v1.cpuprofile", "v8/wasm-v2.cpuprofile"};
	static const char *const raw[2] = {"wasm://wasm/calc-2987b346",
					   "wasm://wasm/calc-e2e9260a"};
	static const int64_t self[2] = {46, 112};

	(void)state;
	for (int f = 0; f < 2; f++) {
		pr_error err = PR_ERROR_INIT;
		buf text = BUF_INIT;
		profile *p = NULL;
		profile_summary sm;
		const profile_summary_row *r;

		testdata_read(&text, files[f]);
		assert_non_null(memmem(text.ptr, text.len, raw[f], strlen(raw[f])));
		assert_int_equal(format_parse(&p, (const uint8_t *)text.ptr, text.len,
					      PROFILE_FMT_AUTO, files[f], NULL, &err), 0);
		assert_string_equal(p->value_types[0].type, "samples");
		assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
		assert_non_null(r = row_of(p, &sm, "spin"));
		assert_string_equal(p->funcs[r->func].file, "wasm://wasm/calc");
		assert_int_equal(r->self, self[f]);
		profile_summary_release(&sm);
		profile_free(p);
		buf_release(&text);
	}
}

/*
 * Two processes of one program under py-spy (--subprocesses --threads)
 * and async-profiler (--threads): their captures name the same functions,
 * and the command line's secret reaches no function's name, in folded
 * stacks or in py-spy's speedscope file.
 */
static void test_two_processes_name_the_same_functions_and_no_secret(void **state)
{
	static const char *const folded[2] = {
		"process 4121:\"gunicorn: master [pay]\";"
		"process 4130:\"python worker.py --key=sk_live_Ab12\";thread (4130): MainThread;"
		"<module> (worker.py:3);charge (pay/charge.py:41) 7\n"
		"[pool-2-thread-1 tid=4133];java/lang/Thread.run;com/acme/Pay.charge 5\n",
		"process 977:\"gunicorn: master [pay]\";"
		"process 981:\"python worker.py --key=sk_live_Zz99\";thread (981): MainThread;"
		"<module> (worker.py:3);charge (pay/charge.py:44) 9\n"
		"[pool-2-thread-1 tid=990];java/lang/Thread.run;com/acme/Pay.charge 2\n",
	};
	static const char scope[] =
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		"\"profiles\":[{\"type\":\"sampled\",\"name\":\"py-spy\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":2,\"samples\":[[0,1,2,3],[0,1,2]],"
		"\"weights\":[1,1]}],\"shared\":{\"frames\":["
		"{\"name\":\"process 4130:\\\"python worker.py --key=sk_live_Ab12\\\"\","
		"\"file\":\"\",\"line\":0},"
		"{\"name\":\"thread (4130): MainThread\",\"file\":\"\",\"line\":0},"
		"{\"name\":\"<module>\",\"file\":\"worker.py\",\"line\":3},"
		"{\"name\":\"charge\",\"file\":\"pay/charge.py\",\"line\":41}]},"
		"\"activeProfileIndex\":null,\"exporter\":\"py-spy@0.3.14\","
		"\"name\":\"py-spy profile\"}";
	pr_error err = PR_ERROR_INIT;
	buf names[3] = {BUF_INIT, BUF_INIT, BUF_INIT};
	profile *p = NULL;

	(void)state;
	for (int i = 0; i < 3; i++) {
		const char *text = i < 2 ? folded[i] : scope;
		int rc = i < 2 ? folded_parse(&p, (const uint8_t *)text, strlen(text), "py.folded",
					      NULL, &err)
			       : speedscope_parse(&p, (const uint8_t *)text, strlen(text),
						  "py.speedscope.json", NULL, &err);

		if (rc < 0)
			fail_msg("%s", err.msg);
		names_of(&names[i], p);
		assert_null(memmem(names[i].ptr, names[i].len, "sk_live", 7));
		assert_null(memmem(names[i].ptr, names[i].len, "--key", 5));
		profile_free(p);
		p = NULL;
	}
	assert_string_equal(names[0].ptr, names[1].ptr);
	assert_non_null(strstr(names[0].ptr, "process|\n"));
	assert_non_null(strstr(names[0].ptr, "thread: MainThread|\n"));
	assert_non_null(strstr(names[0].ptr, "[pool-2-thread-1]|\n"));
	assert_non_null(strstr(names[2].ptr, "process|\n"));
	assert_non_null(strstr(names[2].ptr, "thread: MainThread|\n"));
	for (int i = 0; i < 3; i++)
		buf_release(&names[i]);
}

/*
 * Events of the perf script text whose frames name `what`: *self where
 * it is the leaf, *total where it is anywhere.
 */
static void count_events(const buf *text, const char *what, int64_t *self, int64_t *total)
{
	*self = *total = 0;
	for (const char *ev = text->ptr; ev && *ev;) {
		const char *end = strstr(ev, "\n\n"), *leaf = strchr(ev, '\n');
		const char *hit = strstr(ev, what);

		if (hit && (!end || hit < end)) {
			++*total;
			*self += leaf && hit < strchr(leaf + 1, '\n');
		}
		ev = end ? end + 2 : NULL;
	}
}

/*
 * Two real prints of one program whose frames write `raw` and then 16
 * characters the process or the build made up, different in the two:
 * both name the function `stable`, with every event through it counted
 * from the text, none keeps `raw`, and both name `other` too.
 */
static void two_prints_one_name(const char *const files[2], const char *raw, const char *stable,
				const char *other)
{
	char made_up[2][24];

	for (int f = 0; f < 2; f++) {
		pr_error err = PR_ERROR_INIT;
		buf text = BUF_INIT;
		profile_summary sm;
		profile *p = NULL;
		const profile_summary_row *r;
		const char *at;
		int64_t self, total;

		testdata_read(&text, files[f]);
		assert_non_null(at = strstr(text.ptr, raw));
		snprintf(made_up[f], sizeof(made_up[f]), "%.16s", at + strlen(raw));
		count_events(&text, raw, &self, &total);
		assert_true(total > 0);
		assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len, files[f], NULL,
					    &err), 0);
		assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
		assert_non_null(r = row_of(p, &sm, stable));
		assert_int_equal(r->self, self);
		assert_int_equal(r->total, total);
		assert_non_null(row_of(p, &sm, other));
		for (size_t i = 0; i < p->nfuncs; i++)
			if (strstr(p->funcs[i].name, raw))
				fail_msg("%s: '%s' kept what was made up", files[f],
					 p->funcs[i].name);
		profile_summary_release(&sm);
		profile_free(p);
		buf_release(&text);
	}
	assert_string_not_equal(made_up[0], made_up[1]);
}

/*
 * Two real JVMs running one program (tests/data/perf/Lambdas.java) put
 * its lambda at two addresses.
 */
static void test_two_real_jvms_give_their_lambda_one_name(void **state)
{
	static const char *const files[] = {"perf/java-lambda-1.perf", "perf/java-lambda-2.perf"};

	(void)state;
	two_prints_one_name(files, "Lambdas$$Lambda$1/0x", "long Lambdas$$Lambda.applyAsLong",
			    "java.lang.Object "
			    "jdk.internal.reflect.GeneratedMethodAccessor.invoke");
}

/*
 * Two builds of one Rust program whose package version differs (cargo
 * passes it in -C metadata) give every symbol a new hash; perf script
 * --no-demangle prints them mangled.
 */
static void test_two_rust_builds_give_their_function_one_name(void **state)
{
	static const char *const files[] = {"perf/rust-v1.perf", "perf/rust-v2.perf"};

	(void)state;
	two_prints_one_name(files, "_ZN4burn4spin17h", "_ZN4burn4spinE", "_ZN4burn4mainE");
}

/*
 * A real print of a program in libstdc++ (tests/data/perf/cpp-libstdcxx.cc):
 * its frames without a symbol there are named after the library's file,
 * libstdc++.so.6.0.30, which the next minor upgrade of GCC's library
 * renames; the function is the soname's, with every event through it
 * counted from the text.
 */
static void test_a_library_frame_is_named_by_its_soname(void **state)
{
	static const char file[] = "perf/cpp-libstdcxx.perf";
	pr_error err = PR_ERROR_INIT;
	buf text = BUF_INIT;
	profile_summary sm;
	profile *p = NULL;
	const profile_summary_row *r;
	int64_t self, total;

	(void)state;
	testdata_read(&text, file);
	count_events(&text, "[unknown] (/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30)", &self,
		     &total);
	assert_true(total > 0);
	assert_int_equal(perf_parse(&p, (const uint8_t *)text.ptr, text.len, file, NULL, &err),
			 0);
	assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
	assert_non_null(r = row_of(p, &sm, "[libstdc++.so.6]"));
	assert_int_equal(r->self, self);
	assert_int_equal(r->total, total);
	for (size_t i = 0; i < p->nfuncs; i++)
		if (strstr(p->funcs[i].name, "6.0.30"))
			fail_msg("'%s' kept the library's minor version", p->funcs[i].name);
	profile_summary_release(&sm);
	profile_free(p);
	buf_release(&text);
}

/*
 * Two node processes whose JIT code perf could not name (no perf map):
 * perf script names the code's file /tmp/perf-PID.map, and
 * stackcollapse-perf.pl folds it to "[perf-PID.map]" with "_[j]" when
 * asked. The code of both is one function, with every event through it.
 */
static void test_jit_code_of_two_processes_is_one_function(void **state)
{
	static const char *const perf[] = {
		"node 111 10.0: 1 cpu-clock:\n"
		"\t7f3a00001000 [unknown] (/tmp/perf-111.map)\n"
		"\t55d000001000 uv_run (/usr/bin/node)\n\n"
		"node 111 10.1: 1 cpu-clock:\n"
		"\t7f3a00002000 [unknown] (/tmp/perf-111.map)\n"
		"\t7f3a00003000 [unknown] (/tmp/perf-111.map)\n"
		"\t55d000001000 uv_run (/usr/bin/node)\n\n",
		"node 222 20.0: 1 cpu-clock:\n"
		"\t7f1b00001000 [unknown] (/tmp/perf-222.map)\n"
		"\t55d000001000 uv_run (/usr/bin/node)\n\n"
		"node 222 20.1: 1 cpu-clock:\n"
		"\t55d000001000 uv_run (/usr/bin/node)\n\n",
	};
	static const char folded[] = "node;uv_run;[perf-333.map]_[j] 3\n"
				     "node;uv_run;[perf-333.map]_[j];[perf-333.map]_[j] 2\n";
	static const int64_t self[] = {2, 1, 5}, total[] = {2, 1, 5};

	(void)state;
	for (int f = 0; f < 3; f++) {
		pr_error err = PR_ERROR_INIT;
		profile_summary sm;
		profile *p = NULL;
		const profile_summary_row *r;
		int rc = f < 2 ? perf_parse(&p, (const uint8_t *)perf[f], strlen(perf[f]),
					    "node.perf", NULL, &err)
			       : folded_parse(&p, (const uint8_t *)folded, strlen(folded),
					      "node.folded", NULL, &err);

		assert_int_equal(rc, 0);
		assert_int_equal(profile_summarize(&sm, p, 0, &err), 0);
		assert_non_null(r = row_of(p, &sm, "[perf-N.map]"));
		assert_int_equal(r->self, self[f]);
		assert_int_equal(r->total, total[f]);
		for (size_t i = 0; i < p->nfuncs; i++)
			if (strstr(p->funcs[i].name, "perf-") &&
			    strcmp(p->funcs[i].name, "[perf-N.map]") != 0)
				fail_msg("'%s' kept the process's id", p->funcs[i].name);
		profile_summary_release(&sm);
		profile_free(p);
	}
}

/*
 * A script's URL loses its query and fragment, and the user and password
 * before its host: card numbers, passwords and signed URLs' tokens reach
 * no stored file name, and a new signature makes no new function.
 * Scheme, host and path stay, and a line and column written after the
 * query. A card number anywhere in a file name is cut to '#'.
 */
static void test_a_urls_query_and_fragment_are_dropped(void **state)
{
	static const rewrite_case cases[] = {
		{"https://app.example/x.js?card=4111111111111111&password=hunter2",
		 "https://app.example/x.js"},
		{"https://b.s3.amazonaws.com/app.js?X-Amz-Credential=AKIA&X-Amz-Signature=9f3e",
		 "https://b.s3.amazonaws.com/app.js"},
		{"https://app.example/x.js#token=abc", "https://app.example/x.js"},
		{"https://app.example?token=abc", "https://app.example"},
		{"https://app.example/x.js?token=abc:3:9", "https://app.example/x.js:3:9"},
		{"https://app.example/x.js?token=abc:12", "https://app.example/x.js:12"},
		{"webpack:///./src/a.vue?vue&type=script&lang=ts", "webpack:///./src/a.vue"},
		{"https://esm.example/react@18.2.0/index.js?token=x",
		 "https://esm.example/react@18.2.0/index.js"},
		/* A user and password before the host go too. */
		{"https://deploy:hunter2@cdn.example/app.js", "https://cdn.example/app.js"},
		{"https://a@b:hunter2@cdn.example/react@18.2.0/x.js",
		 "https://cdn.example/react@18.2.0/x.js"},
		{"https://deploy:hunter2@cdn.example?x=1:3:9", "https://cdn.example:3:9"},
		/* A card number in a file name is cut, as in a name. */
		{"/srv/orders/4111111111111111/pay.go", "/srv/orders/#/pay.go"},
		{"https://app.example/4111-1111-1111-1111/pay.js", "https://app.example/"},
	};
	static const char *const same[] = {
		"/srv/app/x.js",
		"app/what?.py",
		"node:internal/x?y",
		"a/b://c?d",
		"https://app.example/x.js",
		"https://app.example/x.js:3:9",
		"https://app.example/@scope/pkg/x.js",
		"/srv/app/build-0x0000000000401000/x.go",
		"?x",
		"",
	};
	static const char cpuprofile[] =
		"{\"nodes\": [{\"id\": 1, \"callFrame\": {\"functionName\": \"(root)\", "
		"\"scriptId\": \"0\", \"url\": \"\", \"lineNumber\": -1, "
		"\"columnNumber\": -1}, \"hitCount\": 0, \"children\": [2]}, "
		"{\"id\": 2, \"callFrame\": {\"functionName\": \"pay\", \"scriptId\": \"1\", "
		"\"url\": \"https://app.example/x.js?card=4111111111111111&password=hunter2\", "
		"\"lineNumber\": 3, \"columnNumber\": 9}, \"hitCount\": 2}], "
		"\"startTime\": 0, \"endTime\": 300, \"samples\": [2, 2], "
		"\"timeDeltas\": [100, 100]}";
	static const char folded[] =
		"main;handler (https://app.example/x.js?card=4111111111111111&token=hunter2:3) 5\n";
	const char *const texts[2] = {cpuprofile, folded};

	(void)state;
	check_rewrites(stable_file, cases, NITEMS(cases), same, NITEMS(same));
	for (int t = 0; t < 2; t++) {
		pr_error err = PR_ERROR_INIT;
		profile *p = NULL;
		bool found = false;

		assert_int_equal(format_parse(&p, (const uint8_t *)texts[t], strlen(texts[t]),
					      PROFILE_FMT_AUTO, t ? "a.folded" : "a.cpuprofile",
					      NULL, &err),
				 0);
		for (uint32_t i = 0; i < p->nfuncs; i++) {
			if (strstr(p->funcs[i].name, "4111") || strstr(p->funcs[i].file, "4111") ||
			    strstr(p->funcs[i].file, "hunter2"))
				fail_msg("'%s' in '%s'", p->funcs[i].name, p->funcs[i].file);
			found = found || strcmp(p->funcs[i].file, "https://app.example/x.js") == 0;
		}
		assert_true(found);
		profile_free(p);
	}
}

/*
 * A name is any text a program chose: a thread's name (the root frame of
 * perf and folded stacks, an async-profiler thread frame) holding a card
 * number would reach the index, exports, reports and pages. A card
 * number (13 to 19 digits that pass Luhn's check, not part of a hex
 * number: a word of letters and digits that are all hex) is cut to '#'.
 * Other long numbers are different code and stay apart: zero-padded
 * addresses, a template's constant, numbers that fail the check; the
 * build numbers other rules take off are taken off first.
 */
static void test_a_card_number_in_a_name_is_cut(void **state)
{
	static const rewrite_case cases[] = {
		{"4111111111111111", "#"},
		{"pan4111111111111111;x", "pan#;x"},
		{"[4111111111111111 tid=4123]", "[#]"},
		{"cache_4222222222222_flush", "cache_#_flush"},
		{"parse.llvm.6425391548234110923", "parse"},
		/* A name's letters before or after it are no hex number's. */
		{"processCard4111111111111111", "processCard#"},
		{"Card4111111111111111Charge", "Card#Charge"},
		{"chargeFee378282246310005", "chargeFee#"},
	};
	static const char *const same[] = {"worker-123456789012",
					   "main.func1234",
					   "cache_1234567890123_flush",
					   "0x0000000000401000",
					   "libc.so.6+0x0000000000123456",
					   "_Z3fooILm18446744073709551615EEvv",
					   "f4111111111111111",
					   "deadbeef4111111111111111cafe"};

	(void)state;
	check_rewrites(stable, cases, sizeof(cases) / sizeof(cases[0]), same,
		       sizeof(same) / sizeof(same[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_parts_are_dropped),
		cmocka_unit_test(test_a_card_number_in_a_name_is_cut),
		cmocka_unit_test(test_other_names_stay_as_written),
		cmocka_unit_test(test_gcc_clones_are_their_function),
		cmocka_unit_test(test_rust_crate_hashes_are_dropped),
		cmocka_unit_test(test_go_shapes_are_one_instance),
		cmocka_unit_test(test_rewriting_twice_changes_nothing_more),
		cmocka_unit_test(test_packaging_versions_leave_a_path),
		cmocka_unit_test(test_two_versions_in_one_program_keep_two_files),
		cmocka_unit_test(test_a_go_dependency_upgrade_keeps_its_functions),
		cmocka_unit_test(test_one_lambda_across_lines_of_collapsed_stacks),
		cmocka_unit_test(test_two_real_jvms_give_their_lambda_one_name),
		cmocka_unit_test(test_two_rust_builds_give_their_function_one_name),
		cmocka_unit_test(test_a_library_frame_is_named_by_its_soname),
		cmocka_unit_test(test_jit_code_of_two_processes_is_one_function),
		cmocka_unit_test(test_process_and_thread_frames_lose_their_ids),
		cmocka_unit_test(test_austin_thread_frames_lose_their_address),
		cmocka_unit_test(test_two_processes_name_the_same_functions_and_no_secret),
		cmocka_unit_test(test_a_moved_anonymous_node_function_keeps_its_name),
		cmocka_unit_test(test_a_rebuilt_wasm_module_keeps_its_functions),
		cmocka_unit_test(test_a_urls_query_and_fragment_are_dropped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
