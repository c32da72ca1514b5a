/*
 * gitinfo.h: what a deploy's git repository says about the deploy, read
 * with libgit2: the commit a ref names, the commits between two deploys
 * with the files each changed, and which of those commits touched a file
 * that a profile names.
 *
 * A repository path is the repository's top folder, its .git folder or a
 * bare repository. Parent folders are never searched, so a folder that is
 * not a repository is never mistaken for a repository around it.
 *
 * Errors from libgit2 are passed through after the context, e.g.
 *   cannot resolve 'v9.9' in '/srv/svc': revspec 'v9.9' not found
 * A caller-supplied ref is quoted sanitised and cut to 64 bytes.
 * libgit2 is initialised on first use, once per process, and shut down at
 * exit; every function here may be called from several threads at once.
 */
#ifndef PR_GITINFO_H
#define PR_GITINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Length of a hex SHA-1 commit id, without its NUL. */
#define GITINFO_SHA_HEX 40

/*
 * Resolve `ref` to the 40-hex SHA (lower case) of a commit, written into
 * `out` (NUL-terminated; empty on failure). `ref` may be a full SHA, an
 * unambiguous SHA prefix of at least 4 hex digits, a local branch, a
 * remote-tracking branch ("origin/main"), a tag, an annotated tag, HEAD,
 * or anything git_revparse_single accepts ("HEAD~2", "v1.0^{}"); whatever
 * it names is peeled to a commit.
 *
 * With `repo_path` NULL there is nothing to resolve against: a 40-hex
 * `ref` is accepted as is (lower-cased) and anything else is PR_EUSAGE.
 *
 * Returns 0; PR_EUSAGE for a NULL or empty argument or a non-SHA without a
 * repository; PR_EIO when the repository cannot be opened; PR_EDATA when
 * the ref does not resolve, is ambiguous, or names something that is not
 * a commit (a tree, a blob). The message names the ref and the repository.
 */
int gitinfo_resolve(char out[GITINFO_SHA_HEX + 1], const char *repo_path,
		    const char *ref, pr_error *err);

/* Characters of an author's name and of a subject kept; longer ones end in "...". */
#define GITINFO_AUTHOR_MAX 100
#define GITINFO_SUBJECT_MAX 200

/*
 * One commit of a range. Every pointer is owned by the array it sits in
 * and freed by gitinfo_commits_free.
 */
typedef struct gitinfo_commit {
	char sha[GITINFO_SHA_HEX + 1]; /* lower-case hex */
	char *author;     /* the author's name (no e-mail), never NULL */
	int64_t time_us;  /* author time, microseconds since the epoch */
	char *subject;    /* first paragraph of the message on one line */
	char **files;     /* paths changed against the parent (the empty
			     tree for a root commit; for a merge, only those
			     that differ from every parent): sorted, unique,
			     both sides of a rename */
	size_t nfiles;
} gitinfo_commit;

/* What a range walk saw besides the commits it returns. */
typedef struct gitinfo_range_info {
	size_t total;   /* commits in the range, those past max_commits too */
	bool rewritten; /* `from` is not an ancestor of `to`: history was
			   rewritten (a force push) or another branch deployed */
} gitinfo_range_info;

/*
 * The commits reachable from `to_sha` and not from `from_sha` (every
 * ancestor of `to_sha` when `from_sha` is NULL), newest first: children
 * before their parents, otherwise by commit time. Both are full 40-hex
 * SHAs (as gitinfo_resolve gives). At most `max_commits` (> 0) are
 * returned; `info` (may be NULL) says how many the range holds, so a
 * caller can say it was cut, which is not an error. Text is UTF-8
 * (converted from the commit's encoding) and cut to the limits above.
 *
 * On success *out is an array of *n commits (NULL when the range is
 * empty, e.g. from == to) that the caller frees with gitinfo_commits_free.
 * On failure *out is NULL and *n is 0.
 *
 * Returns 0; PR_EUSAGE for bad arguments; PR_EIO when the repository
 * cannot be opened or read; PR_EDATA when `from` or `to` is not a commit
 * of the repository (a history rewritten since the last deploy, a shallow
 * clone, which the message says); PR_ENOMEM.
 */
int gitinfo_range(gitinfo_commit **out, size_t *n, gitinfo_range_info *info, const char *repo_path,
		  const char *from_sha, const char *to_sha, size_t max_commits, pr_error *err);

/* Free an array from gitinfo_range (NULL is fine). */
void gitinfo_commits_free(gitinfo_commit *c, size_t n);

/*
 * Whether a file name taken from a profile and a path in the repository
 * name the same file. Profiles carry absolute build paths
 * ("/home/ci/src/github.com/acme/svc/pkg/ledger.go"), module paths
 * ("github.com/acme/svc/pkg/ledger.go") or bare names, while the
 * repository has "pkg/ledger.go". The rule: the two match when they are
 * equal or when the shorter is a suffix of the longer that starts right
 * after a '/' in the longer. So "pkg/ledger.go" matches both of the
 * above, and "ledger.go" matches it too (a bare name matches that name in
 * any folder), but "mypkg/ledger.go" and "pkg/ledger.go" do not match.
 * '\' counts as '/' (profiles made on Windows). Empty or NULL: no match.
 */
bool gitinfo_path_match(const char *profile_file, const char *repo_file);

/*
 * The indices into `c` of the commits that changed a file matching
 * `file` (gitinfo_path_match), in the order of `c` (newest first for a
 * gitinfo_range array). On success *out_idx is an array of *n indices
 * that the caller frees with free(), or NULL when no commit touched the
 * file (*n is 0).
 *
 * Returns 0; PR_EUSAGE for a NULL argument or an empty `file`; PR_ENOMEM.
 */
int gitinfo_suspects(size_t **out_idx, size_t *n, const gitinfo_commit *c,
		     size_t nc, const char *file);

#endif
