/*
 * lazy_bpf.c: the libbpf functions profreg calls, loaded on first use
 * (common/lazylib.h). Only incident snapshots list BPF programs.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <string.h>

#define BPF_FUNCS(X, V) \
	X(int, bpf_obj_get_info_by_fd, (int fd, void *info, __u32 *len), (fd, info, len)) \
	X(int, bpf_prog_get_fd_by_id, (__u32 id), (id)) \
	X(int, bpf_prog_get_next_id, (__u32 start, __u32 *next), (start, next)) \
	X(const char *, libbpf_bpf_prog_type_str, (enum bpf_prog_type t), (t))

enum { BPF_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {BPF_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib bpf = {LAZY_SONAME_BPF, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(bpf, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(bpf, name, params, args)
BPF_FUNCS(FORWARD, FORWARD_V)
