/*
 * lazylib.h: shared libraries loaded on first use.
 *
 * Most commands never touch libcurl, libgit2, libarchive, libbpf or
 * libmicrohttpd, yet linking them made the dynamic loader map and
 * relocate them and their 25 dependencies (ICU, libstdc++, nghttp2,
 * mbedTLS...) on every start: most of the fixed cost of a command. The
 * binary is not linked against them; common/lazy_*.c define the
 * functions profreg calls, with the libraries' own names and prototypes
 * (the headers check them), and each loads its library the first time
 * one of them is called. The rest of the code is unchanged.
 */
#ifndef PR_LAZYLIB_H
#define PR_LAZYLIB_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct lazylib {
	const char *soname;        /* e.g. "libcurl.so.4", from the Makefile */
	const char *const *names;  /* the symbols, in the order of fns */
	void **fns;                /* filled by lazylib_load */
	unsigned n;
	atomic_bool loaded;
} lazylib;

/*
 * Load `lib` and every symbol it lists, once per process (thread-safe).
 * A library or symbol that cannot be found is the failure the dynamic
 * loader would have reported at start: one line on standard error
 * naming it, then exit status 127.
 */
void lazylib_load(lazylib *lib);

/* True once `lib` is loaded (tests). */
bool lazylib_loaded(lazylib *lib);

/*
 * The lists of symbols, one X(ret, name, params, args) a function
 * returning a value and V(name, params, args) one returning nothing, make
 * the table of names, its indexes and the forwarding functions.
 */
#define LAZYLIB_INDEX(ret, name, params, args) LAZY_##name,
#define LAZYLIB_INDEX_V(name, params, args) LAZY_##name,
#define LAZYLIB_NAME(ret, name, params, args) #name,
#define LAZYLIB_NAME_V(name, params, args) #name,
#define LAZYLIB_FORWARD(lib, ret, name, params, args) \
	ret name params \
	{ \
		ret (*fn) params; \
		lazylib_load(&lib); \
		memcpy(&fn, &lib.fns[LAZY_##name], sizeof(fn)); \
		return fn args; \
	}
#define LAZYLIB_FORWARD_V(lib, name, params, args) \
	void name params \
	{ \
		void (*fn) params; \
		lazylib_load(&lib); \
		memcpy(&fn, &lib.fns[LAZY_##name], sizeof(fn)); \
		fn args; \
	}

#endif
