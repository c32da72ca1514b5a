/*
 * test_symname.c: a function keeps one name across processes and builds:
 * the parts the JVM makes up at run time (lambda and hidden class
 * addresses, reflection accessors' and proxies' numbers) and the hashes
 * rustc and ThinLTO put in a build's symbols are dropped, in every
 * format, and nothing else about a name changes.
 */
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
#include "pipeline/symname.h"
#include "pipeline/perf.h"
#include "tests/support/testdata.h"

/* The stable form of `name`, in a static buffer. */
static const char *stable(const char *name)
{
	static char s[512];
	size_t n = strlen(name);

	assert_true(n < sizeof(s));
	memcpy(s, name, n);
	n = symname_stable(s, n);
	s[n] = '\0';
	return s;
}

static void test_generated_parts_are_dropped(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
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
		/* rustc's legacy hash, demangled (rustc-demangle's plain form) or not. */
		{"alloc::raw_vec::RawVec<T,A>::reserve::do_reserve_and_handle::h9b6f1c0f7a4d2a4e",
		 "alloc::raw_vec::RawVec<T,A>::reserve::do_reserve_and_handle"},
		{"std::rt::lang_start::{{closure}}::h56cab6dcb96c90ce",
		 "std::rt::lang_start::{{closure}}"},
		{"_ZN4burn4spin17hc780836d5ab3d805E", "_ZN4burn4spinE"},
		/* ThinLTO's promoted locals, alone and after a hash. */
		{"parse_header.llvm.6425391548234110923", "parse_header"},
		{"_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.12345",
		 "_ZN4core3ptr13drop_in_placeE"},
		/* Two in one frame, and a perf-map-agent name. */
		{"Lcom/acme/A$$Lambda$7/0x0000000800c01000;::accept via "
		 "GeneratedMethodAccessor9.invoke",
		 "Lcom/acme/A$$Lambda;::accept via GeneratedMethodAccessor.invoke"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		if (strcmp(stable(cases[i].in), cases[i].out) != 0)
			fail_msg("'%s' became '%s', not '%s'", cases[i].in, stable(cases[i].in),
				 cases[i].out);
		/* Rewriting a rewritten name changes nothing more. */
		assert_string_equal(stable(cases[i].out), cases[i].out);
	}
}

static void test_other_names_stay_as_written(void **state)
{
	static const char *const same[] = {
		"main.main.func1.2",                     /* Go closures */
		"github.com/acme/pay/v2.(*Server).Handle",
		"gopkg.in/yaml.v3.Unmarshal",
		"memcpy.part.0", "finish_task_switch.isra.0_[k]",
		"0x00007f5df8000a08",                    /* an unresolved address */
		"[unknown]", "StubRoutines (1)", "Interpreter",
		"MyLambdaHandler.run", "com/acme/Foo$$LambdaCache.get",
		/* Android's desugared lambdas are named when compiled. */
		"-$$Lambda$WelcomeActivity$ITX_AP2mc22w8XXp7vc8ub9L4vE.onClick",
		"com/acme/Order$Proxy2.run",             /* a class of the program's own */
		"com/acme/MyGeneratedMethodAccessor7.run",
		"scala/collection/Iterator$$anon$11.hasNext",
		"com/acme/Foo$bar$1.invoke",
		"foo/0x1f.bar",                          /* too short for an address */
		"com/acme/Svc$ByteBuddy$",
		"::h0123456789abcdef",                   /* nothing left without it */
		"burn::spin::h0123456789abcde", "burn::hello",
		"_ZN3foo17h0123456789abcdefX", "my17h0123456789abcdefE",
		"x.llvm.", ".llvm.5", "foo.llvm.12a",
		"",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(*same); i++)
		assert_string_equal(stable(same[i]), same[i]);
}

/*
 * Names pieced together from the rules' own parts, in every order: the
 * result is never longer, and a second pass leaves it as it is (so a
 * name stored before and one parsed again agree).
 */
static void test_rewriting_twice_changes_nothing_more(void **state)
{
	static const char *const part[] = {
		"$$Lambda", "$", "1", "42", "/", ".", "0x", "00007f1058000a08", "deadbeef",
		"LambdaForm$", "MH", "GeneratedMethodAccessor", "$Proxy", "jdk/proxy", "jdk.proxy",
		"$ByteBuddy$", "$HibernateProxy$", "Ab12", "a", "_", ";", " ", "(", "L", "0X",
		"ABCDEF12", "::h", "0123456789abcdef", ".llvm.", "17h", "E", "_ZN",
	};
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
		memcpy(once, s, n);
		a = symname_stable(once, n);
		assert_true(a <= n);
		memcpy(twice, once, a);
		b = symname_stable(twice, a);
		if (b != a || memcmp(once, twice, a) != 0)
			fail_msg("'%.*s' -> '%.*s' -> '%.*s'", (int)n, s, (int)a, once, (int)b,
				 twice);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_parts_are_dropped),
		cmocka_unit_test(test_other_names_stay_as_written),
		cmocka_unit_test(test_rewriting_twice_changes_nothing_more),
		cmocka_unit_test(test_one_lambda_across_lines_of_collapsed_stacks),
		cmocka_unit_test(test_two_real_jvms_give_their_lambda_one_name),
		cmocka_unit_test(test_two_rust_builds_give_their_function_one_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
