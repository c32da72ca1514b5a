/*
 * lazy_git2.c: the libgit2 functions profreg calls, loaded on first use
 * (common/lazylib.h). Only `post-deploy`, `suspects` and reports that
 * name suspect commits read a repository.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/lazylib.h"

#include <git2.h>
#include <string.h>

#define GIT2_FUNCS(X, V)                                                                           \
	X(const git_signature *, git_commit_author, (const git_commit *c), (c))                    \
	X(const char *, git_commit_message_encoding, (const git_commit *c), (c))                   \
	V(git_commit_free, (git_commit * c), (c))                                                  \
	X(int, git_commit_lookup, (git_commit * *o, git_repository * r, const git_oid *id),        \
	  (o, r, id))                                                                              \
	X(int, git_commit_parent, (git_commit * *o, const git_commit *c, unsigned int n),          \
	  (o, c, n))                                                                               \
	X(unsigned int, git_commit_parentcount, (const git_commit *c), (c))                        \
	X(const char *, git_commit_summary, (git_commit * c), (c))                                 \
	X(int, git_commit_tree, (git_tree * *o, const git_commit *c), (o, c))                      \
	V(git_diff_free, (git_diff * d), (d))                                                      \
	X(const git_diff_delta *, git_diff_get_delta, (const git_diff *d, size_t i), (d, i))       \
	X(size_t, git_diff_num_deltas, (const git_diff *d), (d))                                   \
	X(int, git_diff_options_init, (git_diff_options * o, unsigned int v), (o, v))              \
	X(int, git_diff_tree_to_tree,                                                              \
	  (git_diff * *d, git_repository * r, git_tree * a, git_tree * b,                          \
	   const git_diff_options *o),                                                             \
	  (d, r, a, b, o))                                                                         \
	X(const git_error *, git_error_last, (void), ())                                           \
	X(int, git_graph_descendant_of, (git_repository * r, const git_oid *c, const git_oid *a),  \
	  (r, c, a))                                                                               \
	X(int, git_libgit2_init, (void), ())                                                       \
	X(int, git_libgit2_shutdown, (void), ())                                                   \
	V(git_object_free, (git_object * o), (o))                                                  \
	X(const git_oid *, git_object_id, (const git_object *o), (o))                              \
	X(int, git_object_peel, (git_object * *p, const git_object *o, git_object_t t), (p, o, t)) \
	X(git_object_t, git_object_type, (const git_object *o), (o))                               \
	X(const char *, git_object_type2string, (git_object_t t), (t))                             \
	X(int, git_oid_fromstr, (git_oid * o, const char *s), (o, s))                              \
	X(char *, git_oid_tostr, (char *o, size_t n, const git_oid *id), (o, n, id))               \
	V(git_repository_free, (git_repository * r), (r))                                          \
	X(int, git_repository_is_shallow, (git_repository * r), (r))                               \
	X(int, git_repository_open_ext,                                                            \
	  (git_repository * *o, const char *p, unsigned int f, const char *c), (o, p, f, c))       \
	X(int, git_revparse_single, (git_object * *o, git_repository * r, const char *s),          \
	  (o, r, s))                                                                               \
	V(git_revwalk_free, (git_revwalk * w), (w))                                                \
	X(int, git_revwalk_hide, (git_revwalk * w, const git_oid *id), (w, id))                    \
	X(int, git_revwalk_new, (git_revwalk * *o, git_repository * r), (o, r))                    \
	X(int, git_revwalk_next, (git_oid * o, git_revwalk * w), (o, w))                           \
	X(int, git_revwalk_push, (git_revwalk * w, const git_oid *id), (w, id))                    \
	X(int, git_revwalk_sorting, (git_revwalk * w, unsigned int m), (w, m))                     \
	V(git_tree_free, (git_tree * t), (t))

enum { GIT2_FUNCS(LAZYLIB_INDEX, LAZYLIB_INDEX_V) LAZY_COUNT };
static const char *const names[] = {GIT2_FUNCS(LAZYLIB_NAME, LAZYLIB_NAME_V)};
static void *fns[LAZY_COUNT];
static lazylib git2 = {LAZY_SONAME_GIT2, names, fns, LAZY_COUNT, false};

#define FORWARD(ret, name, params, args) LAZYLIB_FORWARD(git2, ret, name, params, args)
#define FORWARD_V(name, params, args) LAZYLIB_FORWARD_V(git2, name, params, args)
GIT2_FUNCS(FORWARD, FORWARD_V)
