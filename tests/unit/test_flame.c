/*
 * test_flame.c: the merged call tree and the differential flame graph.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reports/flame.h"

/* Add "a;b;c" with value v to one side. */
static void add(flame_tree *t, flame_side side, const char *stack, double v)
{
	const char *fr[64];
	size_t len[64], n = 0;
	const char *s = stack;
	pr_error err = PR_ERROR_INIT;

	while (*s && n < 64) {
		const char *e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		fr[n] = s;
		len[n++] = (size_t)(e - s);
		s = *e ? e + 1 : e;
	}
	assert_int_equal(flame_tree_add(t, side, fr, len, n, v, &err), 0);
}

static uint32_t find(const flame_tree *t, const char *path)
{
	uint32_t node = 0;
	char *copy = strdup(path), *save = NULL;

	for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		uint32_t c;
		for (c = t->nodes[node].child; c; c = t->nodes[c].next)
			if (strcmp(t->names[t->nodes[c].name], tok) == 0)
				break;
		if (!c) {
			free(copy);
			return UINT32_MAX;
		}
		node = c;
	}
	free(copy);
	return node;
}

static void test_merged_tree_sums_values_per_path_and_side(void **state)
{
	flame_tree t;
	pr_error err = PR_ERROR_INIT;
	double self[2], tot[2];
	uint32_t n;

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	add(&t, FLAME_BASE, "main;a", 30);
	add(&t, FLAME_BASE, "main;a;x", 10);
	add(&t, FLAME_BASE, "main;b", 60);
	add(&t, FLAME_CUR, "main;a", 50);
	add(&t, FLAME_CUR, "main;b", 50);
	add(&t, FLAME_CUR, "other;a", 100);
	assert_true(t.total[FLAME_BASE] == 100);
	assert_true(t.total[FLAME_CUR] == 200);
	n = find(&t, "main;a");
	assert_int_not_equal(n, UINT32_MAX);
	assert_true(t.nodes[n].v[FLAME_BASE] == 40);
	assert_true(t.nodes[n].v[FLAME_CUR] == 50);
	flame_node_shares(&t, n, self, tot);
	assert_true(tot[FLAME_BASE] == 0.4 && self[FLAME_BASE] == 0.3);
	assert_true(tot[FLAME_CUR] == 0.25 && self[FLAME_CUR] == 0.25);
	/* The same name under another parent is another frame. */
	assert_int_not_equal(find(&t, "other;a"), n);
	assert_int_equal(find(&t, "main;c"), UINT32_MAX);
	flame_tree_release(&t);
}

static void test_regressed_frame_is_the_reddest_and_shrunk_one_blue(void **state)
{
	flame_tree t;
	flame_opts o;
	flame_stats st;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	char *a, *b;

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	add(&t, FLAME_BASE, "main;handler;slow", 10);
	add(&t, FLAME_BASE, "main;handler;fast", 50);
	add(&t, FLAME_BASE, "main;idle", 40);
	add(&t, FLAME_CUR, "main;handler;slow", 40);
	add(&t, FLAME_CUR, "main;handler;fast", 40);
	add(&t, FLAME_CUR, "main;idle", 20);
	flame_opts_default(&o);
	assert_int_equal(flame_render_svg(&out, &t, &o, &st, &err), 0);
	assert_int_equal(st.frames, 6);
	assert_string_equal(t.names[t.nodes[st.reddest].name], "slow");
	assert_true(st.max_delta > 0.299 && st.max_delta < 0.301);
	/* Full intensity red for the largest growth, blue for the largest fall. */
	a = strstr(out.ptr, "data-name=\"slow\"");
	assert_non_null(a);
	b = strstr(a, "fill=\"");
	assert_non_null(b);
	assert_memory_equal(b, "fill=\"#d62020\"", 14);
	a = strstr(out.ptr, "data-name=\"idle\"");
	assert_non_null(a);
	assert_non_null(strstr(a, "fill=\"#"));
	assert_memory_not_equal(strstr(a, "fill=\"#"), "fill=\"#d6", 9);
	/* handler has no self time on either side: neutral. */
	a = strstr(out.ptr, "data-name=\"handler\"");
	assert_memory_equal(strstr(a, "fill=\""), "fill=\"#eceae4\"", 14);
	assert_non_null(strstr(out.ptr, "self change +30.000pp"));
	buf_release(&out);
	flame_tree_release(&t);
}

/* A change too small to show (a third against 0.333333) reads +0.000pp, never -0.000pp. */
static void test_a_change_below_the_last_digit_is_no_negative_zero(void **state)
{
	flame_tree t;
	flame_opts o;
	flame_stats st;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	add(&t, FLAME_BASE, "main;third", 1);
	add(&t, FLAME_BASE, "main;rest", 2);
	add(&t, FLAME_CUR, "main;third", 333333);
	add(&t, FLAME_CUR, "main;rest", 666667);
	flame_opts_default(&o);
	assert_int_equal(flame_render_svg(&out, &t, &o, &st, &err), 0);
	assert_null(strstr(out.ptr, "-0.000pp"));
	assert_non_null(strstr(out.ptr, "self change +0.000pp"));
	buf_release(&out);
	flame_tree_release(&t);
}

static void test_narrow_frames_are_merged_into_their_parent(void **state)
{
	flame_tree t;
	flame_opts o;
	flame_stats st;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	char stack[64];

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	add(&t, FLAME_CUR, "main;big", 1000000);
	add(&t, FLAME_BASE, "main;big", 1000000);
	for (int i = 0; i < 500; i++) {
		snprintf(stack, sizeof(stack), "main;tiny%d", i);
		add(&t, FLAME_CUR, stack, 10);
		add(&t, FLAME_BASE, stack, 10);
	}
	flame_opts_default(&o);
	assert_int_equal(flame_render_svg(&out, &t, &o, &st, &err), 0);
	assert_int_equal(st.frames, 3); /* all, main, big */
	assert_int_equal(st.pruned, 500);
	assert_null(strstr(out.ptr, "tiny"));
	buf_release(&out);
	flame_tree_release(&t);
}

static void test_frame_cap_bounds_a_huge_profile(void **state)
{
	flame_tree t;
	flame_opts o;
	flame_stats st;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	char stack[64];

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	for (int i = 0; i < 20000; i++) {
		snprintf(stack, sizeof(stack), "main;m%d;f%d", i % 100, i);
		add(&t, FLAME_CUR, stack, 1 + i % 7);
	}
	flame_opts_default(&o);
	o.min_frac = 0;
	o.max_frames = 150;
	assert_int_equal(flame_render_svg(&out, &t, &o, &st, &err), 0);
	assert_true(st.frames <= 150);
	assert_true(st.frames >= 100);
	assert_true(out.len < 150 * 1024);
	buf_release(&out);
	flame_tree_release(&t);
}

static void test_hostile_names_are_escaped_in_the_svg(void **state)
{
	static const char *hostile[] = {
		"<script>alert(1)</script>", "a\"b'c&d", "]]></svg><img src=x onerror=alert(1)>",
		"ctl\x01\x1b[31m", "\xef\xbf\xbd replaced",
	};
	flame_tree t;
	flame_opts o;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	char stack[256];
	const char *end;

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		snprintf(stack, sizeof(stack), "main;%s", hostile[i]);
		add(&t, FLAME_CUR, stack, 10);
	}
	flame_opts_default(&o);
	o.highlight = "<script>alert(1)</script>";
	assert_int_equal(flame_render_svg(&out, &t, &o, NULL, &err), 0);
	assert_null(strstr(out.ptr, "<script"));
	assert_null(strstr(out.ptr, "<img"));
	assert_null(strstr(out.ptr, "\x01"));
	assert_null(strstr(out.ptr, "\x1b"));
	assert_non_null(strstr(out.ptr, "data-name=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));
	assert_non_null(strstr(out.ptr, "a&quot;b&#39;c&amp;d"));
	assert_non_null(strstr(out.ptr, "ctl\\x01\\x1b[31m"));
	assert_non_null(strstr(out.ptr, "class=\"fr hl\""));
	/* The only closing tag of the svg is its own, at the end. */
	end = strstr(out.ptr, "</svg>");
	assert_non_null(end);
	assert_string_equal(end, "</svg>\n");
	buf_release(&out);
	flame_tree_release(&t);
}

static void test_bad_values_and_limits_are_refused_with_a_reason(void **state)
{
	flame_tree t;
	pr_error err = PR_ERROR_INIT;
	const char *fr[2] = {"a", "b"};
	size_t len[2] = {1, 1};

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	assert_int_equal(flame_tree_add(&t, FLAME_CUR, fr, len, 2, -1, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "value -1"));
	pr_error_clear(&err);
	t.max_nodes = 2;
	assert_int_equal(flame_tree_add(&t, FLAME_CUR, fr, len, 2, 1, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "more than 2 distinct frames"));
	flame_tree_release(&t);
}

static void test_empty_current_side_draws_a_note_not_a_graph(void **state)
{
	flame_tree t;
	flame_opts o;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	add(&t, FLAME_BASE, "main;a", 5);
	flame_opts_default(&o);
	assert_int_equal(flame_render_svg(&out, &t, &o, NULL, &err), 0);
	assert_null(strstr(out.ptr, "<svg"));
	assert_non_null(strstr(out.ptr, "No current samples"));
	buf_release(&out);
	flame_tree_release(&t);
}

static void test_profile_samples_are_weighted_into_one_side(void **state)
{
	profile *p = NULL;
	flame_tree t;
	pr_error err = PR_ERROR_INIT;
	const char *types[1] = {"samples"}, *units[1] = {"count"};
	uint32_t a, b, st[2];
	int64_t v;

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "t", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_intern(p, &a, "main", 4, NULL, 0, &err), 0);
	assert_int_equal(profile_intern(p, &b, "work", 4, "w.go", 4, &err), 0);
	st[0] = a, st[1] = b, v = 30;
	assert_int_equal(profile_add_sample(p, st, 2, &v, &err), 0);
	v = 10;
	assert_int_equal(profile_add_sample(p, st, 1, &v, &err), 0);
	assert_int_equal(flame_tree_init(&t, &err), 0);
	assert_int_equal(flame_tree_add_profile(&t, FLAME_CUR, p, 0, 1.0 / 40, &err), 0);
	assert_true(t.total[FLAME_CUR] == 1.0);
	assert_true(t.nodes[find(&t, "main;work")].v[FLAME_CUR] == 0.75);
	assert_int_equal(flame_tree_add_profile(&t, FLAME_CUR, p, 3, 1, &err), PR_EUSAGE);
	flame_tree_release(&t);
	profile_free(p);
}

/*
 * A sample without a stack (legal in a pprof) is weight on the root
 * alone: the root has no children to sort, and sorting none from a NULL
 * array was undefined behaviour (UBSan stopped `profreg diff` there).
 */
static void test_samples_without_stacks_render_without_children(void **state)
{
	profile *p = NULL;
	flame_tree t;
	flame_opts o;
	pr_error err = PR_ERROR_INIT;
	buf out = BUF_INIT;
	const char *types[1] = {"samples"}, *units[1] = {"count"};
	int64_t v = 1;

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_PPROF, "t", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_add_sample(p, NULL, 0, &v, &err), 0);
	assert_int_equal(flame_tree_init(&t, &err), 0);
	assert_int_equal(flame_tree_add_profile(&t, FLAME_BASE, p, 0, 1, &err), 0);
	assert_int_equal(flame_tree_add_profile(&t, FLAME_CUR, p, 0, 1, &err), 0);
	flame_opts_default(&o);
	if (flame_render_svg(&out, &t, &o, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	buf_release(&out);
	flame_tree_release(&t);
	profile_free(p);
}

/*
 * The child index (parent, name) -> node through many regrowths of its
 * table: 3000 siblings under main, each with two children, in an order
 * that is not sorted (so the shared-prefix shortcut rarely helps). Added
 * again, every lookup finds the node it made; no node is made twice.
 */
static void test_child_index_finds_every_node_through_regrowth(void **state)
{
	enum { N = 3000 };
	profile *p = NULL;
	flame_tree t;
	pr_error err = PR_ERROR_INIT;
	const char *types[1] = {"samples"}, *units[1] = {"count"};
	uint32_t mainf, leaf[2], st[3];
	int64_t v = 1;
	size_t nodes, cap;
	char name[32], path[96];

	(void)state;
	assert_int_equal(profile_new(&p, PROFILE_FMT_FOLDED, "t", NULL, &err), 0);
	assert_int_equal(profile_set_value_types(p, 1, types, units, &err), 0);
	assert_int_equal(profile_intern(p, &mainf, "main", 4, NULL, 0, &err), 0);
	assert_int_equal(profile_intern(p, &leaf[0], "x", 1, NULL, 0, &err), 0);
	assert_int_equal(profile_intern(p, &leaf[1], "y", 1, NULL, 0, &err), 0);
	for (uint32_t k = 0; k < 2 * N; k++) {
		uint32_t i = (k * 7919u) % N; /* every function twice, scattered */
		snprintf(name, sizeof(name), "f%u", i);
		st[0] = mainf;
		assert_int_equal(profile_intern(p, &st[1], name, strlen(name), NULL, 0, &err), 0);
		st[2] = leaf[k / N];
		assert_int_equal(profile_add_sample(p, st, 3, &v, &err), 0);
	}
	assert_int_equal(flame_tree_init(&t, &err), 0);
	assert_int_equal(flame_tree_add_profile(&t, FLAME_BASE, p, 0, 1, &err), 0);
	nodes = t.n;
	assert_int_equal(nodes, 1 + 1 + N + 2 * N);
	assert_true(t.hcap >= 4 * (nodes - 1) / 3);
	cap = t.cap;
	assert_int_equal(flame_tree_add_profile(&t, FLAME_CUR, p, 0, 1, &err), 0);
	assert_int_equal(t.n, nodes);
	/* Every node was there already: the array was not moved into a larger one. */
	assert_int_equal(t.cap, cap);
	for (uint32_t i = 0; i < N; i += 97) {
		snprintf(path, sizeof(path), "main;f%u;y", i);
		assert_true(find(&t, path) != UINT32_MAX);
		assert_true(t.nodes[find(&t, path)].v[FLAME_BASE] == 1);
		assert_true(t.nodes[find(&t, path)].v[FLAME_CUR] == 1);
		snprintf(path, sizeof(path), "main;f%u", i);
		assert_true(t.nodes[find(&t, path)].v[FLAME_CUR] == 2);
	}
	/* The text entry point shares the index: the same path is the same node. */
	add(&t, FLAME_CUR, "main;f5;x", 1);
	assert_int_equal(t.n, nodes);
	flame_tree_release(&t);

	/* Room is reserved within the node limit, and the limit still holds. */
	assert_int_equal(flame_tree_init(&t, &err), 0);
	t.max_nodes = 100;
	assert_int_equal(flame_tree_add_profile(&t, FLAME_BASE, p, 0, 1, &err), PR_ELIMIT);
	assert_non_null(strstr(err.msg, "more than 100 distinct frames"));
	assert_true(t.cap <= 1024);
	flame_tree_release(&t);
	profile_free(p);
}

/* The slots' hash before it had a seed, to pick pairs that collide in it. */
static uint64_t unseeded_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

enum { NPARENTS = 20000, NNAMES = 500, NPICKED = 60000 };

typedef struct pick {
	uint32_t slot, parent, name;
} pick;

static int by_slot(const void *a, const void *b)
{
	const pick *x = a, *y = b;

	return (x->slot > y->slot) - (x->slot < y->slot);
}

/*
 * CPU seconds to add p<i> and n<j> under the root (nodes and names
 * 1 + i and 1 + NPARENTS + j), then p<i>;n<j> for each pick.
 */
static double add_cpu(const pick *picks)
{
	pr_error err = PR_ERROR_INIT;
	char a[16], b[16];
	const char *fr[2] = {a, b};
	size_t len[2];
	flame_tree t;
	clock_t t0 = clock();
	double cpu;

	assert_int_equal(flame_tree_init(&t, &err), 0);
	for (uint32_t i = 0; i < NPARENTS; i++) {
		len[0] = (size_t)snprintf(a, sizeof(a), "p%u", i);
		assert_int_equal(flame_tree_add(&t, FLAME_BASE, fr, len, 1, 1, &err), 0);
	}
	for (uint32_t j = 0; j < NNAMES; j++) {
		len[0] = (size_t)snprintf(a, sizeof(a), "n%u", j);
		assert_int_equal(flame_tree_add(&t, FLAME_BASE, fr, len, 1, 1, &err), 0);
	}
	for (uint32_t k = 0; k < NPICKED; k++) {
		len[0] = (size_t)snprintf(a, sizeof(a), "p%u", picks[k].parent);
		len[1] = (size_t)snprintf(b, sizeof(b), "n%u", picks[k].name);
		assert_int_equal(flame_tree_add(&t, FLAME_BASE, fr, len, 2, 1, &err), 0);
	}
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	assert_int_equal(t.n, 1 + NPARENTS + NNAMES + NPICKED);
	flame_tree_release(&t);
	return cpu;
}

/*
 * A stored capture's stacks, and so the (parent, name) pairs of its tree,
 * are whoever wrote it's to choose. Unseeded, 60,000 pairs picked among
 * 10 million for the low bits of their hashes took one run of slots, and
 * each insert scanned it: far longer than for as many pairs spread over
 * the table (a 1.5 MB folded capture of such stacks made 'profreg diff'
 * of it 55 times slower). Seeded, both take the same time.
 */
static void test_stacks_made_to_collide_do_not_slow_the_tree(void **state)
{
	size_t hcap = 1024, n = 0, cap = 4 * NPICKED;
	pick *cand = malloc(cap * sizeof(*cand));
	double colliding, spread;

	(void)state;
	assert_non_null(cand);
	while ((size_t)(NPARENTS + NNAMES + NPICKED) * 4 > hcap * 3)
		hcap *= 2;
	for (uint32_t i = 0; i < NPARENTS; i++)
		for (uint32_t j = 0; j < NNAMES && n < cap; j++) {
			uint64_t key = (uint64_t)(1 + i) << 32 | (1 + NPARENTS + j);
			uint32_t slot = (uint32_t)(unseeded_mix(key) & (hcap - 1));
			if (slot < 2048)
				cand[n++] = (pick){slot, i, j};
		}
	assert_true(n >= NPICKED);
	qsort(cand, n, sizeof(*cand), by_slot);
	colliding = add_cpu(cand);
	for (uint32_t k = 0; k < NPICKED; k++)
		cand[k] = (pick){0, k % NPARENTS, k / NPARENTS};
	spread = add_cpu(cand);
	if (colliding > 3 * spread + 0.5)
		fail_msg("colliding stacks took %.2f s of CPU, spread ones %.2f s", colliding,
			 spread);
	free(cand);
}

/*
 * A look-up tries the node after the last one it found first: a node of
 * the same name under another parent is not the one looked for. After
 * "a" is found, the next node in the array is a;x; looking up x at the
 * root must make a new node, not take a;x, and a;x keeps its values.
 */
static void test_same_name_under_another_parent_is_another_node(void **state)
{
	flame_tree t;
	pr_error err = PR_ERROR_INIT;
	size_t n;

	(void)state;
	assert_int_equal(flame_tree_init(&t, &err), 0);
	add(&t, FLAME_BASE, "a;x", 1);
	n = t.n;
	add(&t, FLAME_CUR, "a", 2);
	add(&t, FLAME_CUR, "x", 4);
	assert_int_equal(t.n, n + 1);
	assert_true(find(&t, "x") != find(&t, "a;x"));
	assert_true(t.nodes[find(&t, "x")].v[FLAME_CUR] == 4);
	assert_true(t.nodes[find(&t, "a;x")].v[FLAME_CUR] == 0);
	assert_true(t.nodes[find(&t, "a;x")].v[FLAME_BASE] == 1);
	assert_true(t.nodes[find(&t, "a")].v[FLAME_CUR] == 2);
	/* And the same stacks again, in the order they were made: the same nodes. */
	add(&t, FLAME_CUR, "a;x", 8);
	assert_int_equal(t.n, n + 1);
	assert_true(t.nodes[find(&t, "a;x")].v[FLAME_CUR] == 8);
	flame_tree_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_name_under_another_parent_is_another_node),
		cmocka_unit_test(test_merged_tree_sums_values_per_path_and_side),
		cmocka_unit_test(test_regressed_frame_is_the_reddest_and_shrunk_one_blue),
		cmocka_unit_test(test_a_change_below_the_last_digit_is_no_negative_zero),
		cmocka_unit_test(test_narrow_frames_are_merged_into_their_parent),
		cmocka_unit_test(test_frame_cap_bounds_a_huge_profile),
		cmocka_unit_test(test_hostile_names_are_escaped_in_the_svg),
		cmocka_unit_test(test_bad_values_and_limits_are_refused_with_a_reason),
		cmocka_unit_test(test_empty_current_side_draws_a_note_not_a_graph),
		cmocka_unit_test(test_profile_samples_are_weighted_into_one_side),
		cmocka_unit_test(test_samples_without_stacks_render_without_children),
		cmocka_unit_test(test_child_index_finds_every_node_through_regrowth),
		cmocka_unit_test(test_stacks_made_to_collide_do_not_slow_the_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
