/*
 * test_gitinfo.c: ref resolution, commit ranges and suspect commits
 * against a real repository that the tests build with libgit2 itself
 * (never the git command line), with fixed signatures and times so that
 * every SHA is the same on every run.
 *
 * The history (times are 1700000000 + the offset, main is HEAD):
 *
 *   c1 +0   Alice  "Add ledger"        README.md, pkg/ledger.go (root)
 *   c2 +100 Bob    "Ledger rounding for card 4111 1111 1111 1111 (ann@example.com)"
 *                                      pkg/ledger.go, cmd/svc/main.go
 *   c3 +200 Carol  "Add handler"       pkg/api/handler.go   (feature, on c2)
 *   c4 +300 Alice  "Docs: mention..."  README.md            (main, on c2)
 *   m  +400 Bob    "Merge feature"     nothing of its own   (c4 + c3)
 *   c5 +500 Alice  "Ledger fast path"  pkg/ledger.go, cmd/svc/main.go gone
 *
 * Refs: v1.0 (lightweight) -> c2, v2.0 (annotated) -> c4, tree-tag
 * (annotated, on c1's tree), refs/remotes/origin/main -> c4, feature -> c3.
 * Two loose blobs share a 4-hex prefix, for the ambiguous short SHA.
 */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "common/utf8.h"
#include "jobs/gitinfo.h"
#include "jobs/suspects.h"
#include <jansson.h>

#define T0 1700000000
#define SHA_LEN (GITINFO_SHA_HEX + 1)

typedef struct fixture {
	char dir[4096];   /* private temporary folder */
	char repo[4200];  /* the repository's top folder, inside `dir` */
	char empty[4200]; /* a folder that is not a repository */
	char c1[SHA_LEN], c2[SHA_LEN], c3[SHA_LEN], c4[SHA_LEN];
	char m[SHA_LEN], c5[SHA_LEN];
	char tag2[SHA_LEN];   /* the annotated tag object v2.0 */
	char prefix[5];       /* shared by two blobs */
} fixture;

typedef struct file_spec {
	const char *path;
	const char *text;
} file_spec;

static void check_git(int rc, const char *what)
{
	if (rc < 0) {
		const git_error *e = git_error_last();

		fail_msg("%s: %s", what, e ? e->message : "unknown error");
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A tree holding exactly `files`, built in an in-memory index. */
static void make_tree(git_oid *out, git_repository *repo,
		      const file_spec *files, size_t n)
{
	git_index *index = NULL;
	size_t i;

	check_git(git_index_new(&index), "index");
	for (i = 0; i < n; i++) {
		git_index_entry e;

		memset(&e, 0, sizeof(e));
		e.mode = GIT_FILEMODE_BLOB;
		e.path = files[i].path;
		check_git(git_blob_create_from_buffer(&e.id, repo, files[i].text,
						      strlen(files[i].text)),
			  "blob");
		check_git(git_index_add(index, &e), "index add");
	}
	check_git(git_index_write_tree_to(out, index, repo), "write tree");
	git_index_free(index);
}

static void make_commit(char out[SHA_LEN], git_repository *repo,
			const char *ref, const char *who, int offset,
			const char *msg, const file_spec *files, size_t nfiles,
			const char *p1, const char *p2)
{
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *parents[2] = {NULL, NULL};
	const git_commit *cp[2];
	git_oid tree_id, id, pid;
	char email[64];
	size_t np = 0;

	snprintf(email, sizeof(email), "%s@example.com", who);
	check_git(git_signature_new(&sig, who, email, T0 + offset, 0), "sig");
	make_tree(&tree_id, repo, files, nfiles);
	check_git(git_tree_lookup(&tree, repo, &tree_id), "tree");
	for (const char *p = p1; p && np < 2; p = np == 1 ? p2 : NULL) {
		check_git(git_oid_fromstr(&pid, p), "parent id");
		check_git(git_commit_lookup(&parents[np], repo, &pid), "parent");
		cp[np] = parents[np];
		np++;
	}
	check_git(git_commit_create(&id, repo, ref, sig, sig, NULL, msg, tree,
				    np, cp),
		  "commit");
	git_oid_tostr(out, SHA_LEN, &id);
	git_commit_free(parents[0]);
	git_commit_free(parents[1]);
	git_tree_free(tree);
	git_signature_free(sig);
}

/* Write two blobs whose ids share their first 4 hex digits. */
static void make_ambiguous_blobs(fixture *f, git_repository *repo)
{
	static int seen[65536];
	char text[32], hex[SHA_LEN];
	git_oid id;

	memset(seen, 0, sizeof(seen));
	for (int i = 1; i < 100000; i++) {
		unsigned long p;

		snprintf(text, sizeof(text), "blob %d\n", i);
		check_git(git_odb_hash(&id, text, strlen(text), GIT_OBJECT_BLOB),
			  "hash");
		git_oid_tostr(hex, sizeof(hex), &id);
		p = strtoul((char[5]){hex[0], hex[1], hex[2], hex[3], 0}, NULL, 16);
		if (seen[p]) {
			char other[32];

			snprintf(other, sizeof(other), "blob %d\n", seen[p]);
			check_git(git_blob_create_from_buffer(&id, repo, other,
							      strlen(other)), "blob");
			check_git(git_blob_create_from_buffer(&id, repo, text,
							      strlen(text)), "blob");
			memcpy(f->prefix, hex, 4);
			f->prefix[4] = '\0';
			return;
		}
		seen[p] = i;
	}
	fail_msg("no two blobs share a 4-hex prefix");
}

static void make_tags(fixture *f, git_repository *repo)
{
	git_object *c2 = NULL, *c4 = NULL, *tree = NULL;
	git_signature *sig = NULL;
	git_oid id;

	check_git(git_revparse_single(&c2, repo, f->c2), "c2");
	check_git(git_revparse_single(&c4, repo, f->c4), "c4");
	check_git(git_revparse_single(&tree, repo, "main~4^{tree}"), "c1 tree");
	check_git(git_signature_new(&sig, "Rel", "rel@example.com", T0 + 600, 0),
		  "sig");
	check_git(git_tag_create_lightweight(&id, repo, "v1.0", c2, 0), "v1.0");
	check_git(git_tag_create(&id, repo, "v2.0", c4, sig, "Release 2.0\n", 0),
		  "v2.0");
	git_oid_tostr(f->tag2, SHA_LEN, &id);
	check_git(git_tag_create(&id, repo, "tree-tag", tree, sig, "A tree\n", 0),
		  "tree-tag");
	check_git(git_oid_fromstr(&id, f->c4), "c4 id");
	{
		git_reference *r = NULL;

		check_git(git_reference_create(&r, repo, "refs/remotes/origin/main",
					       &id, 0, "test"), "origin/main");
		git_reference_free(r);
	}
	git_signature_free(sig);
	git_object_free(tree);
	git_object_free(c4);
	git_object_free(c2);
}

static void make_history(fixture *f, git_repository *repo)
{
	const file_spec t1[] = {{"README.md", "hello\n"},
				{"pkg/ledger.go", "package ledger\n"}};
	const file_spec t2[] = {{"README.md", "hello\n"},
				{"pkg/ledger.go", "package ledger\n// v2\n"},
				{"cmd/svc/main.go", "package main\n"}};
	const file_spec t3[] = {{"README.md", "hello\n"},
				{"pkg/ledger.go", "package ledger\n// v2\n"},
				{"cmd/svc/main.go", "package main\n"},
				{"pkg/api/handler.go", "package api\n"}};
	const file_spec t4[] = {{"README.md", "hello\nworld\n"},
				{"pkg/ledger.go", "package ledger\n// v2\n"},
				{"cmd/svc/main.go", "package main\n"}};
	const file_spec tm[] = {{"README.md", "hello\nworld\n"},
				{"pkg/ledger.go", "package ledger\n// v2\n"},
				{"cmd/svc/main.go", "package main\n"},
				{"pkg/api/handler.go", "package api\n"}};
	const file_spec t5[] = {{"README.md", "hello\nworld\n"},
				{"pkg/ledger.go", "package ledger\n// v3\n"},
				{"pkg/api/handler.go", "package api\n"}};
	const char *main_ref = "refs/heads/main";

	make_commit(f->c1, repo, main_ref, "Alice", 0, "Add ledger\n", t1, 2,
		    NULL, NULL);
	make_commit(f->c2, repo, main_ref, "Bob", 100,
		    "Ledger rounding for card 4111 1111 1111 1111 (ann@example.com)\n", t2, 3,
		    f->c1, NULL);
	make_commit(f->c3, repo, "refs/heads/feature", "Carol", 200,
		    "Add handler\n", t3, 4, f->c2, NULL);
	make_commit(f->c4, repo, main_ref, "Alice", 300,
		    "Docs:\nmention world\n\nA body.\n", t4, 3, f->c2, NULL);
	make_commit(f->m, repo, main_ref, "Bob", 400, "Merge feature\n", tm, 4,
		    f->c4, f->c3);
	make_commit(f->c5, repo, main_ref, "Alice", 500,
		    "Ledger fast path\n\nDrops the old entry point.\n", t5, 3,
		    f->m, NULL);
}

static int group_setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");
	git_repository_init_options opts;
	git_repository *repo = NULL;
	fixture *f = calloc(1, sizeof(*f));
	char sub[4300];

	assert_non_null(f);
	git_libgit2_init();
	snprintf(f->dir, sizeof(f->dir), "%s/test_gitinfo.XXXXXX",
		 base && *base ? base : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->repo, sizeof(f->repo), "%s/repo", f->dir);
	snprintf(f->empty, sizeof(f->empty), "%s/empty", f->dir);
	assert_int_equal(mkdir(f->empty, 0700), 0);
	check_git(git_repository_init_options_init(
			  &opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION), "opts");
	opts.flags = GIT_REPOSITORY_INIT_MKPATH;
	opts.initial_head = "main";
	check_git(git_repository_init_ext(&repo, f->repo, &opts), "init");
	make_history(f, repo);
	make_tags(f, repo);
	make_ambiguous_blobs(f, repo);
	git_repository_free(repo);
	snprintf(sub, sizeof(sub), "%s/sub", f->repo);
	assert_int_equal(mkdir(sub, 0700), 0);
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	fixture *f = *state;

	nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	git_libgit2_shutdown();
	return 0;
}

/* --- gitinfo_resolve ------------------------------------------------ */

static void test_every_ref_kind_resolves_to_its_commit(void **state)
{
	fixture *f = *state;
	char short3[8], upper[SHA_LEN];
	struct {
		const char *ref;
		const char *want;
	} cases[] = {
		{f->c2, f->c2},                 /* full SHA */
		{upper, f->c2},                 /* full SHA, upper case */
		{short3, f->c3},                /* short SHA */
		{"main", f->c5},                /* local branch */
		{"feature", f->c3},
		{"refs/heads/feature", f->c3},
		{"origin/main", f->c4},         /* remote-tracking branch */
		{"v1.0", f->c2},                /* lightweight tag */
		{"v2.0", f->c4},                /* annotated tag, peeled */
		{"refs/tags/v2.0", f->c4},
		{f->tag2, f->c4},               /* the tag object's own SHA */
		{"v2.0^{}", f->c4},
		{"HEAD", f->c5},
		{"HEAD~1", f->m},
		{"HEAD~2", f->c4},
		{"HEAD^^2", f->c3},             /* the merge's second parent */
		{"main~4", f->c1},
	};

	memcpy(short3, f->c3, 7);
	short3[7] = '\0';
	for (size_t i = 0; i < SHA_LEN; i++)
		upper[i] = f->c2[i] >= 'a' && f->c2[i] <= 'f'
				   ? f->c2[i] - 'a' + 'A' : f->c2[i];
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		pr_error err = PR_ERROR_INIT;
		char out[SHA_LEN];

		if (gitinfo_resolve(out, f->repo, cases[i].ref, &err) != 0)
			fail_msg("'%s': %s", cases[i].ref, err.msg);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("'%s' gave %s, want %s", cases[i].ref, out,
				 cases[i].want);
	}
}

static void test_unresolvable_refs_are_bad_input_naming_ref_and_repo(void **state)
{
	fixture *f = *state;
	const char *cases[][2] = {
		{"nope", "not found"},
		{"abc", "too short"},          /* under 4 hex digits */
		{"0123456789abcdef0123456789abcdef01234567", "not found"},
		{f->prefix, "ambiguous"},
		{"tree-tag", "it names a tree, not a commit"},
		{"HEAD:README.md", "it names a blob, not a commit"},
		{"HEAD^{tree}", "it names a tree, not a commit"},
		{"main..feature", ""},         /* a range is not one commit */
		{"refs/heads/gone", "not found"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		pr_error err = PR_ERROR_INIT;
		char out[SHA_LEN], want[4400];

		snprintf(want, sizeof(want), "cannot resolve '%s' in '%s': ",
			 cases[i][0], f->repo);
		assert_int_equal(gitinfo_resolve(out, f->repo, cases[i][0], &err),
				 PR_EDATA);
		assert_int_equal(err.code, PR_EDATA);
		assert_string_equal(out, "");
		if (strncmp(err.msg, want, strlen(want)) != 0 ||
		    !strstr(err.msg + strlen(want), cases[i][1]))
			fail_msg("'%s': unexpected message: %s", cases[i][0], err.msg);
	}
}

static void test_hostile_ref_is_quoted_short_and_printable(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char ref[300], out[SHA_LEN];

	memset(ref, 'x', sizeof(ref) - 1);
	ref[sizeof(ref) - 1] = '\0';
	ref[3] = '\n';
	ref[5] = '\033';
	assert_int_equal(gitinfo_resolve(out, f->repo, ref, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "cannot resolve 'xxx?x?xxx"));
	assert_non_null(strstr(err.msg, "...' in '"));
	for (const char *p = err.msg; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
	/* Not even libgit2's own copy of the ref runs past 64 bytes. */
	memset(ref, 'x', 65);
	ref[65] = '\0';
	assert_null(strstr(err.msg, ref));
	/* Cut between characters, never inside one. */
	pr_error_clear(&err);
	ref[0] = 'a';
	for (int i = 0; i < 40; i++)
		memcpy(ref + 1 + 2 * i, "\xc3\xa9", 2);
	ref[81] = '\0';
	assert_int_equal(gitinfo_resolve(out, f->repo, ref, &err), PR_EDATA);
	assert_true(utf8_valid(err.msg, strlen(err.msg)));
	assert_non_null(strstr(err.msg, "\xc3\xa9...' in '"));
}

static void test_without_repository_only_full_sha_is_accepted(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char out[SHA_LEN];
	const char *bad[] = {
		"main", "abc1234",
		"0123456789abcdef0123456789abcdef0123456",   /* 39 */
		"0123456789abcdef0123456789abcdef012345678", /* 41 */
		"0123456789abcdef0123456789abcdef0123456g",
	};

	(void)state;
	assert_int_equal(gitinfo_resolve(out, NULL,
					 "0123456789ABCDEF0123456789abcdef01234567",
					 &err), 0);
	assert_string_equal(out, "0123456789abcdef0123456789abcdef01234567");
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char want[200];

		pr_error_clear(&err);
		snprintf(want, sizeof(want),
			 "cannot resolve '%s' without a repository "
			 "(give --repo or a 40-hex SHA)", bad[i]);
		assert_int_equal(gitinfo_resolve(out, NULL, bad[i], &err),
				 PR_EUSAGE);
		assert_string_equal(err.msg, want);
	}
}

static void test_folder_that_is_not_a_repository_is_an_io_error(void **state)
{
	fixture *f = *state;
	char missing[4300], sub[4300];
	const char *paths[] = {f->empty, missing, sub};

	snprintf(missing, sizeof(missing), "%s/missing", f->dir);
	/* Inside the repository's work tree: parents are never searched. */
	snprintf(sub, sizeof(sub), "%s/sub", f->repo);
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		pr_error err = PR_ERROR_INIT;
		char out[SHA_LEN], want[4400];

		snprintf(want, sizeof(want), "cannot resolve 'HEAD' in '%s': ",
			 paths[i]);
		assert_int_equal(gitinfo_resolve(out, paths[i], "HEAD", &err),
				 PR_EIO);
		if (strncmp(err.msg, want, strlen(want)) != 0 ||
		    !strstr(err.msg, "not a repository (give its top folder"))
			fail_msg("unexpected message: %s", err.msg);
	}
}

static void test_resolve_rejects_missing_arguments(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char out[SHA_LEN];

	assert_int_equal(gitinfo_resolve(out, f->repo, "", &err), PR_EUSAGE);
	assert_int_equal(gitinfo_resolve(out, f->repo, NULL, NULL), PR_EUSAGE);
	assert_int_equal(gitinfo_resolve(out, "", "HEAD", NULL), PR_EUSAGE);
	assert_int_equal(gitinfo_resolve(NULL, f->repo, "HEAD", NULL), PR_EUSAGE);
}

/* --- gitinfo_range -------------------------------------------------- */

typedef struct want_commit {
	const char *sha;
	const char *author;
	int offset;
	const char *subject;
	const char *files; /* space-separated */
} want_commit;

static void check_commit(const gitinfo_commit *c, const want_commit *w)
{
	char files[512] = "";

	assert_string_equal(c->sha, w->sha);
	assert_string_equal(c->author, w->author);
	assert_int_equal(c->time_us, (int64_t)(T0 + w->offset) * 1000000);
	assert_string_equal(c->subject, w->subject);
	for (size_t i = 0; i < c->nfiles; i++) {
		if (i)
			strcat(files, " ");
		strcat(files, c->files[i]);
	}
	assert_string_equal(files, w->files);
}

static void history(const fixture *f, want_commit w[6])
{
	const want_commit all[6] = {
		{f->c5, "Alice", 500, "Ledger fast path", "cmd/svc/main.go pkg/ledger.go"},
		/* A clean merge: each file is as one of its parents has it. */
		{f->m, "Bob", 400, "Merge feature", ""},
		{f->c4, "Alice", 300, "Docs: mention world", "README.md"},
		{f->c3, "Carol", 200, "Add handler", "pkg/api/handler.go"},
		/* A subject is read by people: a card number and an e-mail go. */
		{f->c2, "Bob", 100, "Ledger rounding for card # <17 bytes>",
		 "cmd/svc/main.go pkg/ledger.go"},
		{f->c1, "Alice", 0, "Add ledger", "README.md pkg/ledger.go"},
	};

	memcpy(w, all, sizeof(all));
}

static void test_range_lists_new_commits_newest_first_with_files(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	want_commit w[6];
	size_t n = 0;

	history(f, w);
	if (gitinfo_range(&c, &n, NULL, f->repo, f->c2, f->c5, 100, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		check_commit(&c[i], &w[i]);
	gitinfo_commits_free(c, n);
}

static void test_range_without_from_reaches_the_root_commit(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	want_commit w[6];
	size_t n = 0;

	history(f, w);
	if (gitinfo_range(&c, &n, NULL, f->repo, NULL, f->c5, 100, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++)
		check_commit(&c[i], &w[i]);
	gitinfo_commits_free(c, n);
}

static void test_range_stops_at_max_commits(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	want_commit w[6];
	size_t n = 0;

	history(f, w);
	assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, NULL, f->c5, 2, &err), 0);
	assert_int_equal(n, 2);
	check_commit(&c[0], &w[0]);
	check_commit(&c[1], &w[1]);
	assert_int_equal(err.code, 0);
	gitinfo_commits_free(c, n);
}

static void test_range_from_a_side_branch_hides_only_its_history(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	want_commit w[6];
	size_t n = 0;

	history(f, w);
	/* c3 is not an ancestor of c4: only c4 is new. */
	assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, f->c3, f->c4, 100, &err), 0);
	assert_int_equal(n, 1);
	check_commit(&c[0], &w[2]);
	gitinfo_commits_free(c, n);
}

static void test_range_of_a_commit_to_itself_is_empty(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = (gitinfo_commit *)&err;
	size_t n = 7;

	assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, f->c5, f->c5, 100, &err), 0);
	assert_int_equal(n, 0);
	assert_null(c);
}

static void test_range_with_unknown_commit_is_bad_input(void **state)
{
	fixture *f = *state;
	const char *ghost = "0123456789abcdef0123456789abcdef01234567";
	const char *from[] = {NULL, ghost};
	const char *to[] = {ghost, f->c5};

	for (size_t i = 0; i < 2; i++) {
		pr_error err = PR_ERROR_INIT;
		gitinfo_commit *c = NULL;
		size_t n = 0;
		char want[4400];

		snprintf(want, sizeof(want), "cannot list commits %s..%s in '%s': ",
			 from[i] ? from[i] : "", to[i], f->repo);
		assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, from[i], to[i], 100, &err),
				 PR_EDATA);
		assert_null(c);
		assert_int_equal(n, 0);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("unexpected message: %s", err.msg);
	}
}

static void test_range_outside_a_repository_is_an_io_error(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	size_t n = 0;
	char want[4400];

	snprintf(want, sizeof(want), "cannot list commits ..%s in '%s': ",
		 f->c5, f->empty);
	assert_int_equal(gitinfo_range(&c, &n, NULL, f->empty, NULL, f->c5, 100, &err), PR_EIO);
	assert_null(c);
	if (strncmp(err.msg, want, strlen(want)) != 0)
		fail_msg("unexpected message: %s", err.msg);
}

static void test_range_rejects_bad_arguments(void **state)
{
	fixture *f = *state;
	gitinfo_commit *c = NULL;
	size_t n = 0;

	assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, NULL, "main", 100, NULL), PR_EUSAGE);
	assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, "abc1234", f->c5, 100, NULL),
			 PR_EUSAGE);
	assert_int_equal(gitinfo_range(&c, &n, NULL, f->repo, NULL, f->c5, 0, NULL), PR_EUSAGE);
	assert_int_equal(gitinfo_range(&c, &n, NULL, NULL, NULL, f->c5, 10, NULL), PR_EUSAGE);
	assert_int_equal(gitinfo_range(&c, NULL, NULL, f->repo, NULL, f->c5, 10, NULL), PR_EUSAGE);
	assert_null(c);
	gitinfo_commits_free(NULL, 0);
}

/* --- suspects ------------------------------------------------------- */

static void test_path_match_needs_a_slash_boundary(void **state)
{
	const struct {
		const char *profile, *repo;
		bool want;
	} cases[] = {
		{"pkg/ledger.go", "pkg/ledger.go", true},
		{"/home/ci/src/github.com/acme/svc/pkg/ledger.go", "pkg/ledger.go", true},
		{"github.com/acme/svc/pkg/ledger.go", "pkg/ledger.go", true},
		{"ledger.go", "pkg/ledger.go", true},
		{"./pkg/ledger.go", "pkg/ledger.go", true},
		{"C:\\src\\svc\\pkg\\ledger.go", "pkg/ledger.go", true},
		{"/src/mypkg/ledger.go", "pkg/ledger.go", false},
		{"pkg/ledger.go", "pkg/ledger.go.orig", false},
		{"pkg/xledger.go", "pkg/ledger.go", false},
		{"pkg/ledger.go", "pkg/api/ledger.go", false},
		{"", "pkg/ledger.go", false},
		{"pkg/ledger.go", "", false},
		{NULL, "pkg/ledger.go", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		if (gitinfo_path_match(cases[i].profile, cases[i].repo) !=
		    cases[i].want)
			fail_msg("'%s' vs '%s': want %d", cases[i].profile
				 ? cases[i].profile : "(null)", cases[i].repo,
				 cases[i].want);
}

static void test_suspects_are_the_commits_that_touched_the_file(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	size_t n = 0;
	const struct {
		const char *file;
		const char *want; /* indices into the full history */
	} cases[] = {
		{"/home/ci/src/github.com/acme/svc/pkg/ledger.go", "0 4 5"},
		{"github.com/acme/svc/pkg/api/handler.go", "3"}, /* not the merge */
		{"github.com/acme/svc/cmd/svc/main.go", "0 4"},  /* deleted, added */
		{"README.md", "2 5"},
		{"pkg/unknown.go", ""},
		{"/home/ci/src/github.com/acme/svc/xpkg/ledger.go", ""},
	};

	if (gitinfo_range(&c, &n, NULL, f->repo, NULL, f->c5, 100, &err) != 0)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t *idx = (size_t *)&n, k = 99;
		char got[64] = "";

		assert_int_equal(gitinfo_suspects(&idx, &k, c, n, cases[i].file), 0);
		for (size_t j = 0; j < k; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 j ? " %zu" : "%zu", idx[j]);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("'%s': got '%s', want '%s'", cases[i].file, got,
				 cases[i].want);
		if (k == 0)
			assert_null(idx);
		free(idx);
	}
	gitinfo_commits_free(c, n);
}

static void test_suspects_reject_bad_arguments(void **state)
{
	size_t *idx = NULL, k = 0;
	gitinfo_commit one = {.sha = "", .author = NULL};

	(void)state;
	assert_int_equal(gitinfo_suspects(&idx, &k, &one, 1, ""), PR_EUSAGE);
	assert_int_equal(gitinfo_suspects(&idx, &k, NULL, 1, "a.go"), PR_EUSAGE);
	assert_int_equal(gitinfo_suspects(NULL, &k, &one, 1, "a.go"), PR_EUSAGE);
	assert_int_equal(gitinfo_suspects(&idx, &k, NULL, 0, "a.go"), 0);
	assert_int_equal(k, 0);
	assert_null(idx);
}

/* The commits and note a finding stores, as "N note" (note "" when none). */
static void suspects_of(char *out, size_t n, const suspects_range *r, const char *name,
			const char *file)
{
	json_t *s = suspects_for_function(r, name, file);
	const char *note;

	assert_non_null(s);
	note = json_string_value(json_object_get(s, "note"));
	snprintf(out, n, "%zu %s", json_array_size(json_object_get(s, "commits")),
		 note ? note : "");
	json_decref(s);
}

static void test_code_without_symbols_has_no_suspect_commits(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	suspects_range r;
	char got[512];

	if (suspects_range_load(&r, f->repo, f->c1, f->c5, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(r.note, "");
	suspects_of(got, sizeof(got), &r, "ledger.Post", "/src/acme/svc/pkg/ledger.go");
	assert_string_equal(got, "2 ");
	/* An object whose path ends in a repository file's name is still not that file. */
	suspects_of(got, sizeof(got), &r, "[README.md]", "/usr/share/doc/svc/README.md");
	assert_non_null(strstr(got, "0 Code without symbols"));
	suspects_of(got, sizeof(got), &r, "[svc]", "/usr/local/bin/svc");
	assert_non_null(strstr(got, "0 Code without symbols"));
	suspects_of(got, sizeof(got), &r, "[unknown]", "");
	assert_non_null(strstr(got, "0 Code without symbols"));
	suspects_of(got, sizeof(got), &r, "ledger.Post", NULL);
	assert_string_equal(got, "0 The profile gives no file name for this function.");
	suspects_of(got, sizeof(got), &r, "[", "README.md");
	assert_string_equal(got, "1 ");
	suspects_range_release(&r);
}

/* --- what real histories hold --------------------------------------- */

/* A repository of its own under the fixture's folder, for one test. */
static git_repository *scratch_repo(const fixture *f, const char *name, char *path, size_t n)
{
	git_repository *repo = NULL;

	snprintf(path, n, "%s/%s", f->dir, name);
	check_git(git_repository_init(&repo, path, 0), "init scratch");
	return repo;
}

/* The files of commit `sha` in a range to it, as one string. */
static void files_of(char *out, size_t n, const char *repo, const char *from, const char *sha)
{
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	size_t nc = 0;

	out[0] = '\0';
	if (gitinfo_range(&c, &nc, NULL, repo, from, sha, 100, &err) != 0)
		fail_msg("%s", err.msg);
	assert_true(nc > 0);
	assert_string_equal(c[0].sha, sha);
	for (size_t i = 0; i < c[0].nfiles; i++)
		snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "", c[0].files[i]);
	gitinfo_commits_free(c, nc);
}

static void test_merge_changed_only_what_differs_from_every_parent(void **state)
{
	fixture *f = *state;
	const file_spec base[] = {{"a.go", "a\n"}, {"b.go", "b\n"}, {"c.go", "c\n"}};
	const file_spec left[] = {{"a.go", "a2\n"}, {"b.go", "b\n"}, {"c.go", "c\n"}};
	const file_spec right[] = {{"a.go", "a\n"}, {"b.go", "b2\n"}, {"c.go", "c\n"}};
	const file_spec clean[] = {{"a.go", "a2\n"}, {"b.go", "b2\n"}, {"c.go", "c\n"}};
	/* A conflict resolved in the merge, and an edit made in it. */
	const file_spec edited[] = {{"a.go", "a3\n"}, {"b.go", "b2\n"}, {"c.go", "c2\n"}};
	char path[4300], b[SHA_LEN], l[SHA_LEN], r[SHA_LEN], m1[SHA_LEN], m2[SHA_LEN];
	char files[256];
	git_repository *repo = scratch_repo(f, "merges", path, sizeof(path));

	make_commit(b, repo, "refs/heads/main", "Ann", 0, "base\n", base, 3, NULL, NULL);
	make_commit(l, repo, "refs/heads/left", "Ann", 10, "left\n", left, 3, b, NULL);
	make_commit(r, repo, "refs/heads/right", "Ann", 20, "right\n", right, 3, b, NULL);
	make_commit(m1, repo, NULL, "Ann", 30, "clean merge\n", clean, 3, l, r);
	make_commit(m2, repo, NULL, "Ann", 40, "edited merge\n", edited, 3, l, r);
	git_repository_free(repo);
	files_of(files, sizeof(files), path, b, m1);
	assert_string_equal(files, "");
	files_of(files, sizeof(files), path, b, m2);
	assert_string_equal(files, "a.go c.go");
}

static void test_commit_text_is_utf8_converted_and_cut(void **state)
{
	fixture *f = *state;
	const file_spec t[] = {{"x.go", "x\n"}};
	char path[4300], long_msg[5002];
	git_signature *latin = NULL, *raw = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, id1, id2, id3;
	const git_commit *parent[1];
	git_commit *p1 = NULL, *p2 = NULL;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	size_t n = 0;
	char sha3[SHA_LEN];
	git_repository *repo = scratch_repo(f, "text", path, sizeof(path));

	make_tree(&tree_id, repo, t, 1);
	check_git(git_tree_lookup(&tree, repo, &tree_id), "tree");
	/* Made with i18n.commitEncoding=ISO-8859-1: the header says so. */
	check_git(git_signature_new(&latin, "Jos\xe9", "j@example.com", T0, 0), "sig");
	check_git(git_commit_create(&id1, repo, "refs/heads/main", latin, latin, "ISO-8859-1",
				    "caf\xe9 path\n", tree, 0, NULL),
		  "latin-1 commit");
	/* Bytes that are UTF-8 of nothing, and no header to explain them. */
	check_git(git_signature_new(&raw, "Bad \xff\xfe", "b@example.com", T0 + 1, 0), "sig");
	check_git(git_commit_lookup(&p1, repo, &id1), "parent");
	parent[0] = p1;
	check_git(git_commit_create(&id2, repo, "refs/heads/main", raw, raw, NULL, "fix \xc3(\n",
				    tree, 1, parent),
		  "raw commit");
	memset(long_msg, 'x', 5000);
	long_msg[5000] = '\n';
	long_msg[5001] = '\0';
	check_git(git_commit_lookup(&p2, repo, &id2), "parent");
	parent[0] = p2;
	check_git(git_commit_create(&id3, repo, "refs/heads/main", raw, raw, NULL, long_msg, tree,
				    1, parent),
		  "long commit");
	git_oid_tostr(sha3, sizeof(sha3), &id3);
	git_commit_free(p1);
	git_commit_free(p2);
	git_tree_free(tree);
	git_signature_free(latin);
	git_signature_free(raw);
	git_repository_free(repo);

	if (gitinfo_range(&c, &n, NULL, path, NULL, sha3, 100, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 3);
	assert_int_equal(strlen(c[0].subject), GITINFO_SUBJECT_MAX + 3);
	assert_string_equal(c[0].subject + GITINFO_SUBJECT_MAX, "...");
	assert_string_equal(c[1].author, "Bad \xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(c[1].subject, "fix \xef\xbf\xbd(");
	assert_string_equal(c[2].author, "Jos\xc3\xa9");
	assert_string_equal(c[2].subject, "caf\xc3\xa9 path");
	gitinfo_commits_free(c, n);
}

static void test_range_info_counts_past_the_cap_and_sees_rewrites(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	gitinfo_range_info info;
	gitinfo_commit *c = NULL;
	size_t n = 0;

	assert_int_equal(gitinfo_range(&c, &n, &info, f->repo, NULL, f->c5, 2, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(info.total, 6);
	assert_false(info.rewritten);
	gitinfo_commits_free(c, n);
	/* c3 (the feature branch) is no ancestor of c4 (main before the merge). */
	assert_int_equal(gitinfo_range(&c, &n, &info, f->repo, f->c3, f->c4, 100, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(info.total, 1);
	assert_true(info.rewritten);
	gitinfo_commits_free(c, n);
}

static void test_suspects_say_what_limits_the_range(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	suspects_range r;
	char got[512];

	if (suspects_range_load(&r, f->repo, f->c3, f->c4, &err) != 0)
		fail_msg("%s", err.msg);
	suspects_of(got, sizeof(got), &r, "readme", "README.md");
	assert_non_null(strstr(got, "1 The previous deploy's commit"));
	assert_non_null(strstr(got, "is not an ancestor of"));
	suspects_of(got, sizeof(got), &r, "ledger", "pkg/ledger.go");
	assert_non_null(strstr(got, "0 No commit in the range touched this file. The previous"));
	suspects_range_release(&r);
}

/* A range longer than the search: the suspects say the culprit may be older. */
static void test_suspects_say_a_range_was_cut(void **state)
{
	fixture *f = *state;
	const file_spec t0[] = {{"README.md", "x\n"}};
	const file_spec t[] = {{"README.md", "x\n"}, {"pkg/ledger.go", "x\n"}};
	char path[4300], root[SHA_LEN], ledger[SHA_LEN], top[SHA_LEN], got[512], want[256];
	git_repository *repo = scratch_repo(f, "long", path, sizeof(path));
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *parent = NULL;
	git_oid tid, id;
	pr_error err = PR_ERROR_INIT;
	suspects_range r;

	/* The file's only change, then SUSPECTS_MAX_RANGE commits of the same tree. */
	make_commit(root, repo, "refs/heads/main", "Ann", 0, "start\n", t0, 1, NULL, NULL);
	make_commit(ledger, repo, "refs/heads/main", "Ann", 1, "ledger\n", t, 2, root, NULL);
	make_tree(&tid, repo, t, 2);
	check_git(git_tree_lookup(&tree, repo, &tid), "tree");
	check_git(git_signature_new(&sig, "Ann", "a@example.com", T0 + 2, 0), "sig");
	check_git(git_oid_fromstr(&id, ledger), "ledger");
	for (int i = 0; i < SUSPECTS_MAX_RANGE; i++) {
		const git_commit *p[1];
		check_git(git_commit_lookup(&parent, repo, &id), "parent");
		p[0] = parent;
		check_git(git_commit_create(&id, repo, NULL, sig, sig, NULL, "same\n", tree, 1, p),
			  "commit");
		git_commit_free(parent);
	}
	git_oid_tostr(top, sizeof(top), &id);
	git_signature_free(sig);
	git_tree_free(tree);
	git_repository_free(repo);

	if (suspects_range_load(&r, path, root, top, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(r.ncommits, SUSPECTS_MAX_RANGE);
	assert_int_equal(r.total, SUSPECTS_MAX_RANGE + 1);
	suspects_of(got, sizeof(got), &r, "ledger.Post", "pkg/ledger.go");
	snprintf(want, sizeof(want),
		 "0 No commit in the range touched this file. Only the newest %d of the "
		 "range's %d commits were searched.",
		 SUSPECTS_MAX_RANGE, SUSPECTS_MAX_RANGE + 1);
	assert_string_equal(got, want);
	suspects_range_release(&r);
}

/* A clone without the history it would need says it is shallow, and what to do. */
static void test_range_in_a_shallow_clone_says_so(void **state)
{
	fixture *f = *state;
	const file_spec t[] = {{"x.go", "x\n"}};
	char path[4300], shallow[4400], body[512], top[SHA_LEN], tree[SHA_LEN];
	git_repository *repo = scratch_repo(f, "cut", path, sizeof(path));
	const char *gone = "1111111111111111111111111111111111111111";
	git_odb *odb = NULL;
	git_oid id, tid;
	pr_error err = PR_ERROR_INIT;
	gitinfo_commit *c = NULL;
	size_t n = 0;
	FILE *fp;

	make_tree(&tid, repo, t, 1);
	git_oid_tostr(tree, sizeof(tree), &tid);
	snprintf(body, sizeof(body),
		 "tree %s\nparent %s\nauthor A <a@example.com> 1700000000 +0000\n"
		 "committer A <a@example.com> 1700000000 +0000\n\ntop\n",
		 tree, gone);
	check_git(git_repository_odb(&odb, repo), "odb");
	check_git(git_odb_write(&id, odb, body, strlen(body), GIT_OBJECT_COMMIT), "write");
	git_oid_tostr(top, sizeof(top), &id);
	git_odb_free(odb);
	git_repository_free(repo);

	assert_int_equal(gitinfo_range(&c, &n, NULL, path, gone, top, 100, &err), PR_EDATA);
	if (strstr(err.msg, "is a shallow clone"))
		fail_msg("unexpected message: %s", err.msg);
	snprintf(shallow, sizeof(shallow), "%s/.git/shallow", path);
	assert_non_null(fp = fopen(shallow, "w"));
	fprintf(fp, "%s\n", top);
	fclose(fp);
	pr_error_clear(&err);
	assert_int_equal(gitinfo_range(&c, &n, NULL, path, gone, top, 100, &err), PR_EDATA);
	assert_null(c);
	if (!strstr(err.msg, "the repository is a shallow clone") ||
	    !strstr(err.msg, "fetch-depth: 0"))
		fail_msg("unexpected message: %s", err.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_ref_kind_resolves_to_its_commit),
		cmocka_unit_test(test_unresolvable_refs_are_bad_input_naming_ref_and_repo),
		cmocka_unit_test(test_hostile_ref_is_quoted_short_and_printable),
		cmocka_unit_test(test_without_repository_only_full_sha_is_accepted),
		cmocka_unit_test(test_folder_that_is_not_a_repository_is_an_io_error),
		cmocka_unit_test(test_resolve_rejects_missing_arguments),
		cmocka_unit_test(test_range_lists_new_commits_newest_first_with_files),
		cmocka_unit_test(test_range_without_from_reaches_the_root_commit),
		cmocka_unit_test(test_range_stops_at_max_commits),
		cmocka_unit_test(test_range_from_a_side_branch_hides_only_its_history),
		cmocka_unit_test(test_range_of_a_commit_to_itself_is_empty),
		cmocka_unit_test(test_range_with_unknown_commit_is_bad_input),
		cmocka_unit_test(test_range_outside_a_repository_is_an_io_error),
		cmocka_unit_test(test_range_rejects_bad_arguments),
		cmocka_unit_test(test_path_match_needs_a_slash_boundary),
		cmocka_unit_test(test_suspects_are_the_commits_that_touched_the_file),
		cmocka_unit_test(test_suspects_reject_bad_arguments),
		cmocka_unit_test(test_code_without_symbols_has_no_suspect_commits),
		cmocka_unit_test(test_merge_changed_only_what_differs_from_every_parent),
		cmocka_unit_test(test_commit_text_is_utf8_converted_and_cut),
		cmocka_unit_test(test_range_info_counts_past_the_cap_and_sees_rewrites),
		cmocka_unit_test(test_suspects_say_what_limits_the_range),
		cmocka_unit_test(test_suspects_say_a_range_was_cut),
		cmocka_unit_test(test_range_in_a_shallow_clone_says_so),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
