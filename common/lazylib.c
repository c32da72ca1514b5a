/*
 * lazylib.c: load a shared library and its symbols on first use.
 */
#define _GNU_SOURCE
#include "common/lazylib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *soname, const char *what)
{
	fprintf(stderr, "profreg: error while loading shared libraries: %s: %s\n", soname,
		what ? what : "unknown error");
	exit(127);
}

void lazylib_load(lazylib *lib)
{
	void *h;

	if (atomic_load_explicit(&lib->loaded, memory_order_acquire))
		return;
	pthread_mutex_lock(&load_lock);
	if (!atomic_load_explicit(&lib->loaded, memory_order_relaxed)) {
		/* Never closed: the process uses it to the end, as if linked. */
		if (!(h = dlopen(lib->soname, RTLD_NOW | RTLD_GLOBAL)))
			fail(lib->soname, dlerror());
		for (unsigned i = 0; i < lib->n; i++) {
			dlerror();
			if (!(lib->fns[i] = dlsym(h, lib->names[i])))
				fail(lib->soname, dlerror());
		}
		atomic_store_explicit(&lib->loaded, true, memory_order_release);
	}
	pthread_mutex_unlock(&load_lock);
}

bool lazylib_loaded(lazylib *lib)
{
	return atomic_load_explicit(&lib->loaded, memory_order_acquire);
}
