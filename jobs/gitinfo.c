/*
 * gitinfo.c: refs, commit ranges and suspect commits from a git
 * repository, on libgit2 (see gitinfo.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/gitinfo.h"
#include "common/redact.h"

#include <git2.h>
#include <iconv.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/utf8.h"

/* A quoted piece of caller text: 64 bytes, "..." and the NUL. */
#define QUOTE_MAX 68
/* libgit2's own message, sanitised, before it joins ours. */
#define GITMSG_MAX 320

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_shutdown(void)
{
	git_libgit2_shutdown();
}

static void lib_init_once(void)
{
	if (git_libgit2_init() > 0)
		atexit(lib_shutdown);
}

static void lib_init(void)
{
	pthread_once(&lib_once, lib_init_once);
}

/*
 * Copy `s` into `out` (n > 4) with control bytes as '?', cut to n - 4
 * bytes, and never inside a character.
 */
static void sanitise(char *out, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i < n - 4; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s[i]) {
		while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
			i--; /* s[i] continues a character: cut before it starts */
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

/*
 * Record libgit2's last error after `what`: "<what>: <libgit2 message>".
 * libgit2 repeats the caller's ref in its message; that copy is replaced
 * by the short sanitised `quoted` one too.
 */
static int git_fail_ref(pr_error *err, int code, const char *what,
			const char *ref, const char *quoted)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message ? e->message : "unknown error";
	const char *at = ref && *ref ? strstr(m, ref) : NULL;
	char raw[GITMSG_MAX], msg[GITMSG_MAX];

	if (at)
		snprintf(raw, sizeof(raw), "%.*s%s%s", (int)(at - m), m, quoted,
			 at + strlen(ref));
	else
		snprintf(raw, sizeof(raw), "%s", m);
	sanitise(msg, sizeof(msg), raw);
	/* Ours have no full stop; some of libgit2's do. */
	for (size_t n = strlen(msg); n > 0 && (msg[n - 1] == '.' ||
					       msg[n - 1] == ' '); n--)
		msg[n - 1] = '\0';
	return pr_error_set(err, code, "%s: %s", what, msg);
}

static int git_fail(pr_error *err, int code, const char *what)
{
	return git_fail_ref(err, code, what, NULL, NULL);
}

static bool is_sha_hex(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return i == GITINFO_SHA_HEX;
}

/* Open exactly `path`: never a repository in a folder above it. */
static int open_repo(git_repository **out, const char *path)
{
	lib_init();
	return git_repository_open_ext(out, path,
				       GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
}

/*
 * Why a repository did not open. libgit2 refuses one owned by another
 * user as git does, with a message ("config value 'safe.directory' was
 * not found", GIT_ENOTFOUND in 1.5, GIT_EOWNER later) that names neither
 * the owner nor the remedy; a folder below the top one is not a
 * repository (parents are never searched).
 */
static int open_fail(pr_error *err, int g, const char *what, const char *path)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message ? e->message : "";

	if (g == GIT_EOWNER || strstr(m, "safe.directory"))
		return pr_error_set(err, PR_EIO,
				    "%s: the repository is owned by another user; let the user "
				    "profreg runs as read it with `git config --global --add "
				    "safe.directory %s`",
				    what, path);
	if (g == GIT_ENOTFOUND)
		return pr_error_set(err, PR_EIO,
				    "%s: not a repository (give its top folder, its .git folder or "
				    "a bare repository: folders above are never searched)",
				    what);
	return git_fail(err, PR_EIO, what);
}

static int resolve_without_repo(char *out, const char *ref, const char *q,
				pr_error *err)
{
	size_t i;

	if (!is_sha_hex(ref))
		return pr_error_set(err, PR_EUSAGE,
				    "cannot resolve '%s' without a repository "
				    "(give --repo or a 40-hex SHA)", q);
	for (i = 0; i < GITINFO_SHA_HEX; i++)
		out[i] = ref[i] >= 'A' && ref[i] <= 'F' ? ref[i] - 'A' + 'a'
							: ref[i];
	out[i] = '\0';
	return 0;
}

/* A ref that names a tree or a blob (perhaps through a tag). */
static int not_a_commit(pr_error *err, const char *what, const git_object *obj)
{
	git_object *target = NULL;
	git_object_t type = git_object_type(obj);

	if (type == GIT_OBJECT_TAG &&
	    git_object_peel(&target, obj, GIT_OBJECT_ANY) == 0)
		type = git_object_type(target);
	git_object_free(target);
	return pr_error_set(err, PR_EDATA, "%s: it names a %s, not a commit",
			    what, git_object_type2string(type));
}

int gitinfo_resolve(char out[GITINFO_SHA_HEX + 1], const char *repo_path,
		    const char *ref, pr_error *err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL, *commit = NULL;
	char q[QUOTE_MAX], what[PR_ERROR_MSG_MAX];
	int rc = 0;

	if (!out || !ref || !*ref || (repo_path && !*repo_path))
		return pr_error_set(err, PR_EUSAGE,
				    "cannot resolve a ref: no ref or no repository given");
	out[0] = '\0';
	sanitise(q, sizeof(q), ref);
	if (!repo_path)
		return resolve_without_repo(out, ref, q, err);
	snprintf(what, sizeof(what), "cannot resolve '%s' in '%s'", q, repo_path);
	if ((rc = open_repo(&repo, repo_path)) < 0) {
		rc = open_fail(err, rc, what, repo_path);
		goto out;
	}
	if (git_revparse_single(&obj, repo, ref) < 0) {
		rc = git_fail_ref(err, PR_EDATA, what, ref, q);
		goto out;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		rc = not_a_commit(err, what, obj);
		goto out;
	}
	git_oid_tostr(out, GITINFO_SHA_HEX + 1, git_object_id(commit));
out:
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_file(gitinfo_commit *c, const char *path)
{
	if (!path)
		return 0;
	if (c->nfiles > 0 && strcmp(c->files[c->nfiles - 1], path) == 0)
		return 0;
	if (!(c->files[c->nfiles] = strdup(path)))
		return PR_ENOMEM;
	c->nfiles++;
	return 0;
}

/* Sort and drop the duplicates a file list may hold after a rename. */
static void sort_unique(gitinfo_commit *c)
{
	size_t i, j = 0;

	qsort(c->files, c->nfiles, sizeof(*c->files), cmp_str);
	for (i = 0; i < c->nfiles; i++) {
		if (j > 0 && strcmp(c->files[j - 1], c->files[i]) == 0)
			free(c->files[i]);
		else
			c->files[j++] = c->files[i];
	}
	c->nfiles = j;
}

static int files_from_diff(gitinfo_commit *c, const git_diff *diff)
{
	size_t i, nd = git_diff_num_deltas(diff);
	int rc = 0;

	if (nd == 0)
		return 0;
	if (nd > SIZE_MAX / (2 * sizeof(*c->files)) ||
	    !(c->files = calloc(2 * nd, sizeof(*c->files))))
		return PR_ENOMEM;
	for (i = 0; i < nd && rc == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		rc = add_file(c, d->new_file.path);
		if (rc == 0 && d->old_file.path &&
		    (!d->new_file.path || strcmp(d->old_file.path, d->new_file.path)))
			rc = add_file(c, d->old_file.path);
	}
	sort_unique(c);
	return rc;
}

/* The files of the diff from `parent`'s tree (NULL: the empty tree) to `tree`, into `c`. */
static int files_against(gitinfo_commit *c, git_repository *repo, const git_commit *parent,
			 git_tree *tree, pr_error *err, const char *what)
{
	git_tree *parent_tree = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	int rc = 0;

	/* Only the paths are wanted: never read the blobs. */
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_SKIP_BINARY_CHECK;
	if ((parent && git_commit_tree(&parent_tree, parent) < 0) ||
	    git_diff_tree_to_tree(&diff, repo, parent_tree, tree, &opts) < 0) {
		rc = git_fail(err, PR_EIO, what);
		goto out;
	}
	if ((rc = files_from_diff(c, diff)) < 0)
		pr_error_set(err, rc, "%s: out of memory", what);
out:
	git_diff_free(diff);
	git_tree_free(parent_tree);
	return rc;
}

/* Keep in `c` only the files `other` holds too (both sorted, unique). */
static void keep_common(gitinfo_commit *c, const gitinfo_commit *other)
{
	size_t i, j = 0;

	for (i = 0; i < c->nfiles; i++) {
		if (bsearch(&c->files[i], other->files, other->nfiles, sizeof(*other->files),
			    cmp_str))
			c->files[j++] = c->files[i];
		else
			free(c->files[i]);
	}
	c->nfiles = j;
}

/*
 * The files `commit` changed: against its parent (the empty tree for a
 * root commit). A merge changed only what differs from every parent (a
 * conflict resolved, an edit made in the merge), as `git log -- FILE`
 * sees it: against its first parent alone, a merge "changed" every file
 * of the branch it brought in, whose own commits are in the range, and
 * became a suspect, shared, of every regression on that branch.
 */
static int commit_files(gitinfo_commit *c, git_repository *repo, const git_commit *commit,
			pr_error *err, const char *what)
{
	unsigned int np = git_commit_parentcount(commit);
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	int rc = 0;

	if (git_commit_tree(&tree, commit) < 0 ||
	    (np > 0 && git_commit_parent(&parent, commit, 0) < 0)) {
		rc = git_fail(err, PR_EIO, what);
		goto out;
	}
	if ((rc = files_against(c, repo, parent, tree, err, what)) < 0)
		goto out;
	for (unsigned int k = 1; k < np && c->nfiles > 0; k++) {
		gitinfo_commit other;

		memset(&other, 0, sizeof(other));
		git_commit_free(parent);
		parent = NULL;
		if (git_commit_parent(&parent, commit, k) < 0) {
			rc = git_fail(err, PR_EIO, what);
			goto out;
		}
		rc = files_against(&other, repo, parent, tree, err, what);
		if (rc == 0)
			keep_common(c, &other);
		for (size_t i = 0; i < other.nfiles; i++)
			free(other.files[i]);
		free(other.files);
		if (rc < 0)
			goto out;
	}
out:
	git_tree_free(tree);
	git_commit_free(parent);
	return rc;
}

/* Seconds to microseconds, clamped: a commit may carry any date at all. */
static int64_t time_us(git_time_t t)
{
	if (t > INT64_MAX / 1000000)
		return INT64_MAX;
	if (t < INT64_MIN / 1000000)
		return INT64_MIN;
	return (int64_t)t * 1000000;
}

/*
 * Text of a commit as valid UTF-8, at most `max` characters (0: no
 * limit) and "..." when cut. A commit made with i18n.commitEncoding
 * (ISO-8859-1 in older repositories) says so in its header and is
 * converted; bytes that are still not UTF-8 become U+FFFD. A subject
 * must never be dropped from the suspects, nor fill a CI summary (one
 * 5 MB paragraph is a "subject" too). NULL only when out of memory.
 */
static char *commit_text(const char *s, const char *encoding, size_t max)
{
	char *conv = NULL, *out;
	size_t n = strlen(s), len = 0, chars = 0;

	if (encoding && *encoding && strcasecmp(encoding, "UTF-8") != 0 &&
	    strcasecmp(encoding, "UTF8") != 0) {
		iconv_t cd = iconv_open("UTF-8", encoding);
		if (cd != (iconv_t)-1) {
			size_t cap = n * 4 + 1, left = n, room = cap - 1;
			char *in = (char *)s, *at;
			if ((conv = malloc(cap))) {
				at = conv;
				if (iconv(cd, &in, &left, &at, &room) == (size_t)-1) {
					free(conv);
					conv = NULL; /* not that encoding after all: bytes below */
				} else {
					*at = '\0';
					s = conv;
					n = (size_t)(at - conv);
				}
			}
			iconv_close(cd);
		}
	}
	/* Every byte at most 3 (U+FFFD), and "...". */
	if (!(out = malloc(n * 3 + 4)))
		goto done;
	for (size_t i = 0; i < n; chars++) {
		size_t k = utf8_seq_len((const unsigned char *)s + i, n - i);
		if (max && chars == max) {
			memcpy(out + len, "...", 3);
			len += 3;
			break;
		}
		if (k == 0) {
			memcpy(out + len, "\xef\xbf\xbd", 3);
			len += 3;
			i++;
		} else {
			memcpy(out + len, s + i, k);
			len += k;
			i += k;
		}
	}
	out[len] = '\0';
done:
	free(conv);
	return out;
}

static int commit_load(gitinfo_commit *c, git_repository *repo,
		       const git_oid *id, pr_error *err, const char *what)
{
	git_commit *commit = NULL;
	const git_signature *author;
	const char *subject, *encoding;
	int rc = 0;

	git_oid_tostr(c->sha, sizeof(c->sha), id);
	if (git_commit_lookup(&commit, repo, id) < 0) {
		rc = git_fail(err, PR_EIO, what);
		goto out;
	}
	author = git_commit_author(commit);
	subject = git_commit_summary(commit);
	encoding = git_commit_message_encoding(commit);
	c->time_us = time_us(author->when.time);
	c->author = commit_text(author->name ? author->name : "", encoding, GITINFO_AUTHOR_MAX);
	c->subject = commit_text(subject ? subject : "", encoding, GITINFO_SUBJECT_MAX);
	/*
	 * A subject reaches CI summaries, reports and pages, and one that
	 * says which card or customer a fix was for ("fix refund for card
	 * 4111 ...") would put it there: card numbers, e-mail addresses and
	 * secrets' values go.
	 */
	if (c->subject) {
		char *clean = redact_message(c->subject);
		free(c->subject);
		c->subject = clean;
	}
	if (!c->author || !c->subject) {
		rc = pr_error_set(err, PR_ENOMEM, "%s: out of memory", what);
		goto out;
	}
	rc = commit_files(c, repo, commit, err, what);
out:
	git_commit_free(commit);
	return rc;
}

/* Whether `a` is `b` or one of its ancestors (false when it cannot be told). */
static bool ancestor_of(git_repository *repo, const char *a, const char *b)
{
	git_oid ia, ib;

	if (strcmp(a, b) == 0)
		return true;
	return git_oid_fromstr(&ia, a) == 0 && git_oid_fromstr(&ib, b) == 0 &&
	       git_graph_descendant_of(repo, &ib, &ia) == 1;
}

static int walk_start(git_revwalk **out, git_repository *repo,
		      const char *from_sha, const char *to_sha)
{
	git_oid to, from;

	if (git_revwalk_new(out, repo) < 0 ||
	    git_revwalk_sorting(*out, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME) < 0 ||
	    git_oid_fromstr(&to, to_sha) < 0 || git_revwalk_push(*out, &to) < 0)
		return -1;
	if (from_sha && (git_oid_fromstr(&from, from_sha) < 0 ||
			 git_revwalk_hide(*out, &from) < 0))
		return -1;
	return 0;
}

/*
 * Walk until done, loading the first `max` commits and counting the rest
 * into *total: 0, or a PR_E* code with err set.
 */
static int walk_collect(gitinfo_commit **out, size_t *n, size_t *total, git_revwalk *walk,
			git_repository *repo, size_t max, pr_error *err, const char *what)
{
	gitinfo_commit *c = NULL, *grown;
	size_t cap = 0;
	git_oid id;
	int rc = 0, g = 0;

	*total = 0;
	while ((g = git_revwalk_next(&id, walk)) == 0) {
		(*total)++;
		if (*n == max)
			continue; /* counted only: the walk has every commit at hand */
		if (*n == cap) {
			cap = cap ? (cap > max / 2 ? max : 2 * cap) : (max < 16 ? max : 16);
			if (!(grown = realloc(c, cap * sizeof(*c)))) {
				rc = pr_error_set(err, PR_ENOMEM, "%s: out of memory", what);
				break;
			}
			c = grown;
		}
		memset(&c[*n], 0, sizeof(*c));
		rc = commit_load(&c[*n], repo, &id, err, what);
		(*n)++;
		if (rc < 0)
			break;
	}
	if (rc == 0 && g != GIT_ITEROVER)
		rc = git_fail(err, PR_EIO, what);
	*out = c;
	return rc;
}

/*
 * A walk that failed in a shallow clone failed for want of history (the
 * default checkout of most CI systems): say so, and how to fetch it.
 */
static int shallow_hint(pr_error *err, int rc, git_repository *repo)
{
	char msg[PR_ERROR_MSG_MAX];

	if (!err || rc == PR_ENOMEM || git_repository_is_shallow(repo) != 1)
		return rc;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	pr_error_clear(err);
	return pr_error_set(err, PR_EDATA,
			    "%s (the repository is a shallow clone: fetch its whole history "
			    "with `git fetch --unshallow`, or `fetch-depth: 0` in "
			    "actions/checkout)",
			    msg);
}

int gitinfo_range(gitinfo_commit **out, size_t *n, gitinfo_range_info *info, const char *repo_path,
		  const char *from_sha, const char *to_sha, size_t max_commits, pr_error *err)
{
	git_repository *repo = NULL;
	git_revwalk *walk = NULL;
	gitinfo_commit *c = NULL;
	gitinfo_range_info dummy;
	size_t nc = 0;
	char what[PR_ERROR_MSG_MAX];
	int rc = 0;

	if (out)
		*out = NULL;
	if (n)
		*n = 0;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!out || !n || !repo_path || !*repo_path || !to_sha ||
	    !is_sha_hex(to_sha) || (from_sha && !is_sha_hex(from_sha)) ||
	    max_commits == 0)
		return pr_error_set(err, PR_EUSAGE,
				    "cannot list commits: give a repository, "
				    "40-hex SHAs and a commit limit");
	snprintf(what, sizeof(what), "cannot list commits %s..%s in '%s'",
		 from_sha ? from_sha : "", to_sha, repo_path);
	if ((rc = open_repo(&repo, repo_path)) < 0) {
		rc = open_fail(err, rc, what, repo_path);
		goto out;
	}
	if (walk_start(&walk, repo, from_sha, to_sha) < 0) {
		rc = shallow_hint(err, git_fail(err, PR_EDATA, what), repo);
		goto out;
	}
	if ((rc = walk_collect(&c, &nc, &info->total, walk, repo, max_commits, err, what)) < 0) {
		rc = shallow_hint(err, rc, repo);
		goto out;
	}
	info->rewritten = from_sha && !ancestor_of(repo, from_sha, to_sha);
	*out = c;
	*n = nc;
	c = NULL;
	nc = 0;
out:
	gitinfo_commits_free(c, nc);
	git_revwalk_free(walk);
	git_repository_free(repo);
	return rc;
}

void gitinfo_commits_free(gitinfo_commit *c, size_t n)
{
	size_t i, j;

	if (!c)
		return;
	for (i = 0; i < n; i++) {
		for (j = 0; j < c[i].nfiles; j++)
			free(c[i].files[j]);
		free(c[i].files);
		free(c[i].author);
		free(c[i].subject);
	}
	free(c);
}

static bool same_char(char a, char b)
{
	return a == b || ((a == '/' || a == '\\') && (b == '/' || b == '\\'));
}

bool gitinfo_path_match(const char *profile_file, const char *repo_file)
{
	const char *lng = profile_file, *shrt = repo_file, *tail;
	size_t ll, ls, i;

	if (!lng || !shrt)
		return false;
	ll = strlen(lng);
	ls = strlen(shrt);
	if (ll < ls) {
		const char *t = lng;

		lng = shrt;
		shrt = t;
		ll = ls;
		ls = strlen(shrt);
	}
	if (ls == 0)
		return false;
	tail = lng + (ll - ls);
	for (i = 0; i < ls; i++)
		if (!same_char(tail[i], shrt[i]))
			return false;
	return tail == lng || tail[-1] == '/' || tail[-1] == '\\';
}

static bool commit_touches(const gitinfo_commit *c, const char *file)
{
	size_t i;

	for (i = 0; i < c->nfiles; i++)
		if (gitinfo_path_match(file, c->files[i]))
			return true;
	return false;
}

int gitinfo_suspects(size_t **out_idx, size_t *n, const gitinfo_commit *c,
		     size_t nc, const char *file)
{
	size_t *idx = NULL, i, k = 0;

	if (out_idx)
		*out_idx = NULL;
	if (n)
		*n = 0;
	if (!out_idx || !n || (!c && nc > 0) || !file || !*file)
		return PR_EUSAGE;
	for (i = 0; i < nc; i++) {
		if (!commit_touches(&c[i], file))
			continue;
		if (!idx && !(idx = calloc(nc, sizeof(*idx))))
			return PR_ENOMEM;
		idx[k++] = i;
	}
	*out_idx = idx;
	*n = k;
	return 0;
}
