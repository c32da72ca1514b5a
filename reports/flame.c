/*
 * flame.c: the merged call tree of two sides and its differential SVG.
 */
#include "reports/flame.h"
#include "reports/escape.h"
#include "common/memhint.h"
#include "common/strmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW 17        /* pixels per level */
#define TOP 4         /* margin above the root */
#define CHAR_PX 7.0   /* average glyph width of the 12px label font */

/*
 * A change in points for the tooltip: one that prints as 0.000 is 0, so
 * a rounding error below the last digit never reads as "-0.000pp".
 */
static double pp(double share_delta)
{
	return fabs(100 * share_delta) < 0.0005 ? 0.0 : 100 * share_delta;
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "cannot build the flame graph: out of memory");
}

/*
 * A stored capture's stacks are whoever wrote it's to choose, and so are
 * the (parent, name) pairs of its tree. Hashed without a seed, pairs
 * picked for the low bits of their hashes took one run of slots: a
 * 1.5 MB folded capture of 100,000 of them made 'profreg diff' of it
 * take 4.9 s against 0.09 s. The seed is unknown outside the process.
 */
static size_t slot_of(const flame_tree *t, uint32_t parent, uint32_t name)
{
	return (size_t)strmap_mix(((uint64_t)parent << 32 | name) ^ t->seed) & (t->hcap - 1);
}

/*
 * A slot holds the index of a node; the key, (parent, name), is read from
 * the node, which a lookup touches anyway to add its value. 0 marks an
 * empty slot: the root is no node's child. Growing re-inserts the nodes in
 * order, a sequential pass, rather than walking the old table.
 */
static int hash_resize(flame_tree *t, size_t ncap)
{
	uint32_t *sl = calloc(ncap, sizeof(*sl));

	if (!sl)
		return PR_ENOMEM;
	/* Large trees: fewer, larger pages for the table (memhint.h). */
	mem_hint_huge(sl, ncap * sizeof(*sl));
	free(t->slots);
	t->slots = sl;
	t->hcap = ncap;
	for (size_t i = 1; i < t->n; i++) {
		size_t j = slot_of(t, t->nodes[i].parent, t->nodes[i].name);
		while (sl[j])
			j = (j + 1) & (ncap - 1);
		sl[j] = (uint32_t)i;
	}
	return 0;
}

static int hash_grow(flame_tree *t)
{
	return hash_resize(t, t->hcap ? t->hcap * 2 : 1024);
}

/* Room for `n` nodes in all, so that a big profile grows the array once. */
static int nodes_reserve(flame_tree *t, size_t n)
{
	flame_node *nn;

	if (n <= t->cap)
		return 0;
	if (!(nn = realloc(t->nodes, n * sizeof(*nn))))
		return PR_ENOMEM;
	mem_hint_huge(nn, n * sizeof(*nn));
	t->nodes = nn;
	t->cap = n;
	return 0;
}

static int intern(flame_tree *t, uint32_t *out, const char *s, size_t len)
{
	const char *stored;
	int r;

	if (t->nnames == t->names_cap) {
		size_t ncap = t->names_cap ? t->names_cap * 2 : 256;
		const char **nn = realloc(t->names, ncap * sizeof(*nn));
		if (!nn)
			return PR_ENOMEM;
		t->names = nn;
		t->names_cap = ncap;
	}
	r = strmap_put(&t->name_index, s, len, (uint32_t)t->nnames, out, &stored);
	if (r < 0)
		return r;
	if (r == 1)
		t->names[t->nnames++] = stored;
	return 0;
}

int flame_tree_init(flame_tree *t, pr_error *err)
{
	uint32_t root_name;

	memset(t, 0, sizeof(*t));
	strmap_init(&t->name_index);
	t->seed = strmap_seed_new(t);
	t->max_nodes = FLAME_DEFAULT_MAX_NODES;
	t->cap = 1024;
	if (!(t->nodes = calloc(t->cap, sizeof(*t->nodes))) ||
	    intern(t, &root_name, "all", 3) < 0 || hash_grow(t) < 0) {
		flame_tree_release(t);
		return oom(err);
	}
	t->n = 1;
	t->nodes[0].name = root_name;
	return 0;
}

void flame_tree_release(flame_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->names);
	free(t->slots);
	strmap_release(&t->name_index);
	memset(t, 0, sizeof(*t));
}

/* The child of `parent` named `name`, created when absent. */
static int child_of(flame_tree *t, uint32_t *out, uint32_t parent, uint32_t name, pr_error *err)
{
	size_t j;
	uint32_t v;
	flame_node *nd;

	/*
	 * The node made or found after the last one: a capture whose stacks
	 * come in the order of the one added before it (sorted folded files,
	 * two captures of one service) looks its nodes up in the order they
	 * were made, one after the other in the array, without the index.
	 */
	if (t->guess > 0 && t->guess < t->n && t->nodes[t->guess].parent == parent &&
	    t->nodes[t->guess].name == name) {
		*out = t->guess++;
		return 0;
	}
	if ((t->hcount + 1) * 4 > t->hcap * 3 && hash_grow(t) < 0)
		return oom(err);
	for (j = slot_of(t, parent, name); (v = t->slots[j]) != 0; j = (j + 1) & (t->hcap - 1))
		if (t->nodes[v].parent == parent && t->nodes[v].name == name) {
			*out = v;
			t->guess = v + 1;
			return 0;
		}
	if (t->n >= t->max_nodes)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot build the flame graph: more than "
				    "%zu distinct frames", t->max_nodes);
	if (t->n == t->cap && nodes_reserve(t, t->cap * 2) < 0)
		return oom(err);
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->depth = t->nodes[parent].depth + 1;
	nd->next = t->nodes[parent].child;
	t->nodes[parent].child = (uint32_t)t->n;
	t->slots[j] = (uint32_t)t->n;
	t->hcount++;
	*out = (uint32_t)t->n++;
	t->guess = (uint32_t)t->n;
	return 0;
}

static int check_value(double value, pr_error *err)
{
	if (!(value >= 0) || isinf(value))
		return pr_error_set(
			err, PR_EUSAGE,
			"cannot build the flame graph: value %g is not a "
			"finite non-negative number",
			value);
	return 0;
}

int flame_tree_add(flame_tree *t, flame_side side, const char *const *frames,
		   const size_t *lens, size_t depth, double value, pr_error *err)
{
	uint32_t node = 0, name;
	int rc;

	if ((rc = check_value(value, err)) < 0)
		return rc;
	t->total[side] += value;
	t->nodes[0].v[side] += value;
	for (size_t i = 0; i < depth; i++) {
		if (intern(t, &name, frames[i], lens[i]) < 0)
			return oom(err);
		if ((rc = child_of(t, &node, node, name, err)) < 0)
			return rc;
		t->nodes[node].v[side] += value;
	}
	return 0;
}

int flame_tree_add_profile(flame_tree *t, flame_side side, const profile *p,
			   size_t column, double weight, pr_error *err)
{
	uint32_t *map = NULL, *path = NULL;
	const uint32_t *prev = NULL;
	uint32_t prev_len = 0, max_len = 0;
	size_t lookups = 0;
	int rc = 0;

	if (column >= p->nvalue_types)
		return pr_error_set(err, PR_EUSAGE,
				    "cannot build the flame graph of '%s': no value column %zu",
				    p->input_name ? p->input_name : "profile", column);
	if ((rc = check_value(weight, err)) < 0)
		return rc;
	/* Function ids of the profile -> name ids of the tree, once each. */
	if (p->nfuncs && !(map = malloc(p->nfuncs * sizeof(*map))))
		return oom(err);
	for (uint32_t f = 0; f < p->nfuncs; f++)
		if (intern(t, &map[f], p->funcs[f].name, strlen(p->funcs[f].name)) < 0) {
			rc = oom(err);
			goto out;
		}
	/*
	 * Each frame past the part a stack shares with the one before it is
	 * a lookup below, and at most a new node: room for that many, within
	 * the limit, saves growing the array by doubling (a hint: without the
	 * room the array still grows as it fills).
	 */
	for (size_t s = 0; s < p->nsamples; s++) {
		const uint32_t *fr = p->frames + p->stack_off[s];
		uint32_t i = 0;
		while (i < p->stack_len[s] && i < prev_len && fr[i] == prev[i])
			i++;
		lookups += p->stack_len[s] - i;
		if (p->stack_len[s] > max_len)
			max_len = p->stack_len[s];
		prev = fr;
		prev_len = p->stack_len[s];
	}
	prev = NULL;
	prev_len = 0;
	if (lookups > t->max_nodes)
		lookups = t->max_nodes;
	/*
	 * An empty tree (the first capture added): every lookup may make a
	 * node, so size the nodes and the index for all of them at once.
	 * Later captures mostly find their nodes there: room for a node per
	 * lookup again would move the array into one twice its size, fresh
	 * memory for nothing; the array and the index grow as they fill.
	 */
	if (t->hcount == 0) {
		size_t cap = t->hcap;

		(void)nodes_reserve(t, t->n + lookups < t->max_nodes ? t->n + lookups
								 : t->max_nodes);
		while (lookups * 4 > cap * 3)
			cap *= 2;
		if (cap != t->hcap)
			(void)hash_resize(t, cap);
	}
	if (max_len && !(path = malloc(max_len * sizeof(*path)))) {
		rc = oom(err);
		goto out;
	}
	for (size_t s = 0; s < p->nsamples; s++) {
		double v = (double)p->values[s * p->nvalue_types + column] * weight;
		const uint32_t *fr = p->frames + p->stack_off[s];
		uint32_t node = 0, i = 0;

		t->total[side] += v;
		t->nodes[0].v[side] += v;
		/*
		 * The frames this stack shares with the previous one from the
		 * root lead to the same nodes (path[] holds them): stacks come
		 * sorted or grouped more often than not, so most lookups go.
		 */
		for (; i < p->stack_len[s] && i < prev_len && fr[i] == prev[i]; i++) {
			node = path[i];
			t->nodes[node].v[side] += v;
		}
		for (; i < p->stack_len[s]; i++) {
			if ((rc = child_of(t, &node, node, map[fr[i]], err)) < 0)
				goto out;
			path[i] = node;
			t->nodes[node].v[side] += v;
		}
		prev = fr;
		prev_len = p->stack_len[s];
	}
out:
	free(path);
	free(map);
	return rc;
}

void flame_node_shares(const flame_tree *t, uint32_t i, double self_out[2], double total_out[2])
{
	for (int s = 0; s < 2; s++) {
		double self = t->nodes[i].v[s];
		for (uint32_t c = t->nodes[i].child; c; c = t->nodes[c].next)
			self -= t->nodes[c].v[s];
		if (self < 0)
			self = 0; /* rounding of weighted sums */
		total_out[s] = t->total[s] > 0 ? t->nodes[i].v[s] / t->total[s] : 0;
		self_out[s] = t->total[s] > 0 ? self / t->total[s] : 0;
	}
}

void flame_opts_default(flame_opts *o)
{
	o->min_frac = 0.001;
	o->max_frames = 2000;
	o->width = 1200;
	o->id = "flame";
	o->highlight = NULL;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Three layouts of one set of frames: 0 the current side (width = current
 * share), 1 the baseline side, 2 the difference (width = the mean of the
 * two shares, so that a frame present on either side has width and the
 * children of a frame never outgrow it). The SVG is drawn in layout 2;
 * every frame carries all three (data-g) for the page's view toggle.
 */
enum { VIEW_CUR = 0, VIEW_BASE = 1, VIEW_DIFF = 2, NVIEWS = 3 };

typedef struct render {
	const flame_tree *t;
	const flame_opts *o;
	buf *out;
	double thr;          /* minimum widest share (either side) drawn */
	double maxd;         /* largest |self share delta| among drawn frames */
	uint32_t *kids;      /* scratch: children being drawn, a stack of slices */
	size_t nkids, kids_cap;
	size_t frames;
	int max_depth;
	flame_stats *st;
} render;

/* Node i's width in each layout, as a fraction of the root. */
static void widths(const flame_tree *t, uint32_t i, double w[NVIEWS])
{
	w[VIEW_CUR] = t->total[FLAME_CUR] > 0 ? t->nodes[i].v[FLAME_CUR] / t->total[FLAME_CUR] : 0;
	w[VIEW_BASE] =
		t->total[FLAME_BASE] > 0 ? t->nodes[i].v[FLAME_BASE] / t->total[FLAME_BASE] : 0;
	/* With one side empty, the difference is the other side. */
	if (t->total[FLAME_BASE] <= 0)
		w[VIEW_DIFF] = w[VIEW_CUR];
	else
		w[VIEW_DIFF] = (w[VIEW_CUR] + w[VIEW_BASE]) / 2;
}

/* The share that decides whether node i is drawn: its wider side. */
static double widest(const flame_tree *t, uint32_t i)
{
	double w[NVIEWS];

	widths(t, i, w);
	return w[VIEW_CUR] > w[VIEW_BASE] ? w[VIEW_CUR] : w[VIEW_BASE];
}

static const flame_tree *sort_tree;
static int cmp_name(const void *a, const void *b)
{
	const flame_node *x = &sort_tree->nodes[*(const uint32_t *)a];
	const flame_node *y = &sort_tree->nodes[*(const uint32_t *)b];
	return strcmp(sort_tree->names[x->name], sort_tree->names[y->name]);
}

/* Colour of a self-share change: neutral, to red (growth) or blue (shrink). */
static void colour(char out[8], double d, double maxd)
{
	static const int neutral[3] = {236, 234, 228}, red[3] = {214, 32, 32},
			 blue[3] = {38, 92, 214};
	double k = maxd > 0 ? fabs(d) / maxd : 0;
	const int *to = d > 0 ? red : blue;
	int c[3];

	if (k > 1)
		k = 1;
	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(neutral[i] + k * (to[i] - neutral[i]));
	snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* The label that fits `w` pixels: whole, cut with "..", or nothing. */
static int label(buf *out, const char *name, double w)
{
	long fit = (long)((w - 6) / CHAR_PX);
	size_t chars = 0, cut = 0, i;

	if (fit < 3)
		return 0;
	for (i = 0; name[i]; i++)
		if (((unsigned char)name[i] & 0xc0) != 0x80) {
			if ((long)chars == fit - 2)
				cut = i;
			chars++;
		}
	if ((long)chars <= fit)
		return esc_html(out, name);
	if (esc_html_n(out, name, cut) < 0)
		return PR_ENOMEM;
	return buf_puts(out, "..");
}

static int frame(render *r, uint32_t i, const double x[NVIEWS])
{
	const flame_tree *t = r->t;
	const flame_node *nd = &t->nodes[i];
	const char *name = t->names[nd->name];
	double self[2], tot[2], w[NVIEWS], px, d = 0, dt;
	char fill[8];
	bool hl, gone;
	int y = TOP + (int)nd->depth * ROW, rc;

	widths(t, i, w);
	px = w[VIEW_DIFF] * r->o->width;
	flame_node_shares(t, i, self, tot);
	if (i)
		d = self[FLAME_CUR] - self[FLAME_BASE];
	dt = tot[FLAME_CUR] - tot[FLAME_BASE];
	colour(fill, d, r->maxd);
	hl = r->o->highlight && i && strcmp(r->o->highlight, name) == 0;
	gone = i && nd->v[FLAME_CUR] <= 0;
	if ((int)nd->depth > r->max_depth)
		r->max_depth = (int)nd->depth;
	if (r->st && i && d > 0 && (!r->st->reddest || d > r->st->max_delta)) {
		r->st->reddest = i;
		r->st->max_delta = d;
	}
	r->frames++;
	rc = buf_printf(r->out, "<g class=\"fr%s%s\" data-name=\"", hl ? " hl" : "",
			gone ? " gone" : "");
	if (rc == 0)
		rc = esc_html(r->out, name);
	if (rc == 0)
		rc = buf_printf(
			r->out,
			"\" data-delta=\"%.6g\" data-dtotal=\"%.6g\" "
			"data-cur=\"%.6g\" data-base=\"%.6g\" "
			"data-scur=\"%.6g\" data-sbase=\"%.6g\""
			" data-x=\"%.6f\" data-w=\"%.6f\" data-depth=\"%u\" data-id=\"%u\" "
			"data-p=\"%u\" data-g=\"%.6f %.6f %.6f %.6f %.6f %.6f\"><title>",
			d, dt, tot[FLAME_CUR], tot[FLAME_BASE], self[FLAME_CUR], self[FLAME_BASE],
			x[VIEW_DIFF], w[VIEW_DIFF], nd->depth, i, nd->parent, x[VIEW_CUR],
			w[VIEW_CUR], x[VIEW_BASE], w[VIEW_BASE], x[VIEW_DIFF], w[VIEW_DIFF]);
	if (rc == 0)
		rc = esc_html(r->out, name);
	if (rc == 0)
		rc = buf_printf(
			r->out,
			"%s\ncurrent %.3f%% (self %.3f%%)\nbaseline %.3f%% (self %.3f%%)\n"
			"self change %+.3fpp, total change %+.3fpp</title>"
			"<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%d\">",
			gone ? " (gone: baseline only)" : "", 100 * tot[FLAME_CUR],
			100 * self[FLAME_CUR], 100 * tot[FLAME_BASE], 100 * self[FLAME_BASE],
			pp(d), pp(dt), x[VIEW_DIFF] * r->o->width, y, px, ROW - 1, fill,
			x[VIEW_DIFF] * r->o->width + 3, y + ROW - 5);
	if (rc == 0)
		rc = label(r->out, name, px);
	if (rc == 0)
		rc = buf_puts(r->out, "</text></g>\n");
	return rc;
}

/* Draw node i at x (each layout's) and, sorted by name, its children wide enough. */
static int draw(render *r, uint32_t i, const double x0[NVIEWS])
{
	const flame_tree *t = r->t;
	size_t start = r->nkids, end;
	double x[NVIEWS];
	int rc;

	if ((rc = frame(r, i, x0)) < 0)
		return rc;
	memcpy(x, x0, sizeof(x));
	for (uint32_t c = t->nodes[i].child; c; c = t->nodes[c].next) {
		double m = widest(t, c);
		if (m < r->thr || m <= 0) {
			if (r->st && m > 0)
				r->st->pruned++;
			continue;
		}
		if (r->nkids == r->kids_cap) {
			size_t ncap = r->kids_cap ? r->kids_cap * 2 : 256;
			uint32_t *nk = realloc(r->kids, ncap * sizeof(*nk));
			if (!nk)
				return PR_ENOMEM;
			r->kids = nk;
			r->kids_cap = ncap;
		}
		r->kids[r->nkids++] = c;
	}
	end = r->nkids;
	sort_tree = t;
	if (end > start) /* a root of no stacks has no kids yet: r->kids is NULL */
		qsort(r->kids + start, end - start, sizeof(*r->kids), cmp_name);
	for (size_t k = start; k < end && rc == 0; k++) {
		uint32_t c = r->kids[k];
		double w[NVIEWS];
		if (r->frames >= r->o->max_frames) {
			if (r->st)
				r->st->pruned++;
			continue;
		}
		rc = draw(r, c, x);
		widths(t, c, w);
		for (int v = 0; v < NVIEWS; v++)
			x[v] += w[v];
	}
	r->nkids = start;
	return rc;
}

/*
 * The smallest widest share drawn: the minimum width, raised so that at
 * most max_frames frames pass. A child is never wider than its parent on
 * either side, so every frame that passes has its ancestors drawn too.
 */
static int threshold(double *out, const flame_tree *t, const flame_opts *o)
{
	double min = o->min_frac, *w = NULL;
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		double m = widest(t, (uint32_t)i);
		n += m >= min && m > 0;
	}
	*out = min;
	if (n <= o->max_frames || o->max_frames == 0)
		return 0;
	if (!(w = malloc(n * sizeof(*w))))
		return PR_ENOMEM;
	n = 0;
	for (size_t i = 0; i < t->n; i++) {
		double m = widest(t, (uint32_t)i);
		if (m >= min && m > 0)
			w[n++] = m;
	}
	qsort(w, n, sizeof(*w), cmp_desc);
	*out = w[o->max_frames - 1];
	free(w);
	return 0;
}

int flame_render_svg(buf *out, const flame_tree *t, const flame_opts *o,
		     flame_stats *st, pr_error *err)
{
	static const double x0[NVIEWS] = {0, 0, 0};
	render r;
	size_t head;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	if (st)
		memset(st, 0, sizeof(*st));
	if (t->total[FLAME_CUR] <= 0) {
		rc = buf_printf(out,
				"<p class=\"note\">No current samples: nothing to draw.</p>\n");
		goto out;
	}
	r.t = t, r.o = o, r.out = out, r.st = st;
	if ((rc = threshold(&r.thr, t, o)) < 0)
		goto out;
	/* Colours are relative to the largest change among the frames drawn. */
	for (size_t i = 1; i < t->n; i++) {
		double self[2], tot[2], m = widest(t, (uint32_t)i);
		if (m < r.thr || m <= 0)
			continue;
		flame_node_shares(t, (uint32_t)i, self, tot);
		if (fabs(self[FLAME_CUR] - self[FLAME_BASE]) > r.maxd)
			r.maxd = fabs(self[FLAME_CUR] - self[FLAME_BASE]);
	}
	/* The height is known only after drawing: leave room and patch it. */
	if ((rc = buf_puts(
		     out, "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" id=\"")) < 0 ||
	    (rc = esc_html(out, o->id)) < 0)
		goto out;
	head = out->len;
	if ((rc = buf_printf(out,
			     "\" width=\"%d\" height=\"%-8d\" data-width=\"%d\" "
			     "data-max-delta=\"%.6g\" data-view=\"%d\" data-abs-cur=\"%.6g\" "
			     "data-abs-base=\"%.6g\" data-unit=\"",
			     o->width, 0, o->width, r.maxd, VIEW_DIFF, t->per_capture[FLAME_CUR],
			     t->per_capture[FLAME_BASE])) < 0 ||
	    (rc = esc_html(out, t->unit)) < 0 || (rc = buf_puts(out, "\" data-focus=\"")) < 0 ||
	    (rc = esc_html(out, o->highlight ? o->highlight : "")) < 0 ||
	    (rc = buf_puts(out, "\">\n")) < 0 || (rc = draw(&r, 0, x0)) < 0 ||
	    (rc = buf_puts(out, "</svg>\n")) < 0)
		goto out;
	{
		char h[16];
		int hv = TOP + (r.max_depth + 1) * ROW + 4;
		char *p = strstr(out->ptr + head, "height=\"");
		snprintf(h, sizeof(h), "%-8d", hv);
		memcpy(p + 8, h, 8);
	}
	if (st) {
		st->frames = r.frames;
		st->max_delta = st->reddest ? st->max_delta : 0;
	}
out:
	free(r.kids);
	if (rc == PR_ENOMEM || rc == PR_ELIMIT)
		return pr_error_set(err, rc, "cannot render the flame graph: %s",
				    rc == PR_ELIMIT ? "the output would exceed its size limit"
						    : "out of memory");
	return rc;
}

const char *flame_css(void)
{
	return "svg.flame{display:block;font:12px ui-monospace,Menlo,Consolas,monospace;"
	       "background:#fff}\n"
	       "svg.flame g.fr,svg.sandwich g.sw{cursor:pointer}\n"
	       "svg.flame rect,svg.sandwich rect{stroke:#fff;stroke-width:0.5}\n"
	       "svg.flame g.fr:hover rect,svg.sandwich g.sw:hover rect"
	       "{stroke:#000;stroke-width:1}\n"
	       "svg.flame g.hl rect,svg.sandwich g.hl rect{stroke:#000;stroke-width:1.5}\n"
	       "svg.flame g.gone rect{fill-opacity:0.55;stroke:#265cd6;stroke-dasharray:3,2}\n"
	       "svg.flame g.gone text{font-style:italic}\n"
	       "svg.flame g.match rect{fill:#e8b10a}\n"
	       "svg.flame text,svg.sandwich text{fill:#111;pointer-events:none}\n"
	       "svg.sandwich{display:block;font:12px ui-monospace,Menlo,Consolas,monospace}\n"
	       ".flame-views label{margin-right:1em}\n"
	       "#flame-tip{position:fixed;display:none;z-index:10;max-width:40em;background:#fff;"
	       "border:1px solid #888;padding:4px 6px;font:12px system-ui,sans-serif;"
	       "box-shadow:0 2px 6px rgba(0,0,0,.2);pointer-events:none;overflow-wrap:anywhere}\n"
	       "#flame-tip td{padding:0 6px;text-align:right}\n"
	       "#flame-tip td:first-child{text-align:left}\n";
}

/*
 * The page's script: click to zoom (the root resets, Escape too), alt- or
 * shift-click or 's' over a frame for its sandwich, '/' to search, the
 * view toggle, and the tooltip element (its text set with textContent:
 * names are never parsed as markup). The frames' <title> stays for
 * readers without script and is taken out while the tooltip shows.
 */
const char *flame_script(void)
{
	return "(function(){\n"
	       "var tip=null,hover=null;\n"
	       "function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-name'),\n"
	       "c=Math.floor((w-6)/7),a=Array.from(n);\n"
	       "t.textContent=c<3?'':(a.length>c?a.slice(0,c-2).join('')+'..':n);}\n"
	       "function geo(f,v){var g=f.dataset.g.split(' ');return [+g[2*v],+g[2*v+1]];}\n"
	       "function layout(svg){var W=+svg.dataset.width,v=+svg.dataset.view,z=svg._zoom,"
	       "zx=0,zw=1,zd=0,\n"
	       "e=1e-9;\n"
	       " if(z){var q=geo(z,v);if(q[1]>0){zx=q[0];zw=q[1];zd=+z.dataset.depth;}else svg"
	       "._zoom=null;}\n"
	       " svg.querySelectorAll('g.fr').forEach(function(f){var q=geo(f,v),x=q[0],w=q[1]"
	       ",\n"
	       "d=+f.dataset.depth,r=f.querySelector('rect'),t=f.querySelector('text');\n"
	       "  f.dataset.x=x;f.dataset.w=w;\n"
	       "  var inside=d>=zd&&x>=zx-e&&x+w<=zx+zw+e,anc=d<zd&&x<=zx+e&&x+w>=zx+zw-e;\n"
	       "  if(w<=0||(!inside&&!anc)){f.style.display='none';return;}\n"
	       "  f.style.display='';var nx=anc?0:(x-zx)/zw*W,nw=anc?W:w/zw*W;\n"
	       "  r.setAttribute('x',nx);r.setAttribute('width',nw);t.setAttribute('x',nx+3);f"
	       "it(f,nw);});}\n"
	       "function val(share,abs,unit){if(!(abs>0))return '';var v=share*abs,u=unit;\n"
	       " if(u==='nanoseconds'){u='s';v/=1e9;if(v<1){v*=1e3;u='ms';}}\n"
	       " else if(u==='bytes'){u='B';['KiB','MiB','GiB'].forEach(function(k){if(v>=1024"
	       "){v/=1024;u=k;}});}\n"
	       " return (v>=100?v.toFixed(0):v.toPrecision(3))+' '+u+' ';}\n"
	       "function pc(x){return (100*x).toFixed(3)+'%';}\n"
	       "function show(ev,g){var svg=g.closest('svg'),main=svg.classList.contains('flam"
	       "e')?svg:\n"
	       "document.getElementById(svg.dataset.for),ac=+main.dataset.absCur,ab=+main.data"
	       "set.absBase,\n"
	       "u=main.dataset.unit,d=g.dataset,rows=[['',\"self\",\"total\"],\n"
	       "['current',val(+d.scur,ac,u)+pc(+d.scur),val(+d.cur,ac,u)+pc(+d.cur)],\n"
	       "['baseline',val(+d.sbase,ab,u)+pc(+d.sbase),val(+d.base,ab,u)+pc(+d.base)],\n"
	       "['change',((+d.scur-d.sbase)*100).toFixed(3)+'pp',((+d.cur-d.base)*100).toFixe"
	       "d(3)+'pp']];\n"
	       " if(d.scur===undefined)rows=rows.map(function(r){return [r[0],r[2]];});\n"
	       " if(!tip){tip=document.createElement('div');tip.id='flame-tip';tip.setAttribut"
	       "e('role','tooltip');\n"
	       "document.body.appendChild(tip);}\n"
	       " tip.textContent='';var h=document.createElement('b');h.textContent=d.name+\n"
	       "(g.classList.contains('gone')?' (gone: baseline only)':'');tip.appendChild(h);\n"
	       " var tb=document.createElement('table');rows.forEach(function(r){var tr=tb.ins"
	       "ertRow();\n"
	       "r.forEach(function(c){tr.insertCell().textContent=c;});});tip.appendChild(tb);\n"
	       " tip.style.display='block';tip.style.left=Math.min(ev.clientX+12,innerWidth-ti"
	       "p.offsetWidth-4)+'px';\n"
	       " tip.style.top=(ev.clientY+14)+'px';}\n"
	       "function over(ev){var g=ev.target.closest&&ev.target.closest('g.fr,g.sw');if(!"
	       "g){return;}\n"
	       " var t=g.querySelector('title');if(t){g._title=t;t.remove();}hover=g;show(ev,g"
	       ");}\n"
	       "function out(ev){var g=ev.target.closest&&ev.target.closest('g.fr,g.sw');if(!g"
	       ")return;\n"
	       " if(g._title){g.insertBefore(g._title,g.firstChild);g._title=null;}\n"
	       " if(tip)tip.style.display='none';hover=null;}\n"
	       "function nodes(svg){if(svg._n)return svg._n;var n=map();\n"
	       " svg.querySelectorAll('g.fr').forEach(function(f){n[f.dataset.id]={name:f.data"
	       "set.name,\n"
	       "p:f.dataset.p,id:f.dataset.id,c:+f.dataset.cur,b:+f.dataset.base,kids:[]};});\n"
	       " Object.keys(n).forEach(function(k){var x=n[k];if(k!=='0'&&n[x.p])n[x.p].kids."
	       "push(x);});\n"
	       " return svg._n=n;}\n"
	       "function add(m,x){m.c+=x.c;m.b+=x.b;}\n"
	       /* Maps keyed by name have no prototype: a frame may be named toString, __proto__. */
	       "function map(){return Object.create(null);}\n"
	       "function kid(m,name){return m.kids[name]||(m.kids[name]={name:name,c:0,b:0,kid"
	       "s:map()});}\n"
	       "function merge(m,x){add(m,x);x.kids.forEach(function(k){merge(kid(m,k.name),k)"
	       ";});}\n"
	       "function sandwich(svg,fn){var n=nodes(svg),up={name:fn,c:0,b:0,kids:map()},\n"
	       "down={name:fn,c:0,b:0,kids:map()},box=document.getElementById(svg.id+'-sw');if(!b"
	       "ox)return;\n"
	       " Object.keys(n).forEach(function(k){var x=n[k],a;if(k==='0'||x.name!==fn)retur"
	       "n;\n"
	       "  for(a=n[x.p];a&&a.id!=='0';a=n[a.p])if(a.name===fn)return;\n"
	       "  merge(down,x);var m=up;add(m,x);for(a=n[x.p];a&&a.id!=='0';a=n[a.p]){m=kid(m"
	       ",a.name);add(m,x);}});\n"
	       " box.dataset.fn=fn;box.querySelector('.sw-name').textContent=fn;\n"
	       " var s=box.querySelector('svg');s.textContent='';if(!(up.c+up.b>0)){box.hidden"
	       "=true;return;}\n"
	       " box.hidden=false;var v=+svg.dataset.view,W=+svg.dataset.width,R=17,rows=[];\n"
	       " var hb=+svg.querySelector('g.fr').dataset.base>0;\n"
	       " function wv(m){return v===0?m.c:v===1?m.b:hb?(m.c+m.b)/2:m.c;}\n"
	       " var full=wv(up)||1e-12,md=+svg.dataset.maxDelta||1e-12;\n"
	       " function lay(m,x,d,dir){var w=wv(m)/full*W;if(w<0.5)return;rows.push({m:m,x:x"
	       ",w:w,d:d*dir});\n"
	       "  Object.keys(m.kids).sort().forEach(function(k){var c=m.kids[k];lay(c,x,d+1,d"
	       "ir);x+=wv(c)/full*W;});}\n"
	       " lay(up,0,0,-1);Object.keys(down.kids).sort().reduce(function(x,k){var c=down."
	       "kids[k];\n"
	       "lay(c,x,1,1);return x+wv(c)/full*W;},0);\n"
	       " var top=0,bot=0;rows.forEach(function(r){top=Math.min(top,r.d);bot=Math.max(b"
	       "ot,r.d);});\n"
	       " s.setAttribute('height',(bot-top+1)*R+4);s.setAttribute('width',W);\n"
	       " rows.forEach(function(r){var ns='http://www.w3.org/2000/svg',g=document.creat"
	       "eElementNS(ns,'g'),\n"
	       "rc=document.createElementNS(ns,'rect'),t=document.createElementNS(ns,'text'),\n"
	       "dd=r.m.c-r.m.b,k=Math.min(1,Math.abs(dd)/md),to=dd>0?[214,32,32]:[38,92,214],\n"
	       "fr=[236,234,228].map(function(c,i){return Math.round(c+k*(to[i]-c));});\n"
	       "  g.setAttribute('class','sw'+(r.d===0?' hl':''));g.dataset.name=r.m.name;g.da"
	       "taset.cur=r.m.c;\n"
	       "g.dataset.base=r.m.b;rc.setAttribute('x',r.x);rc.setAttribute('y',(r.d-top)*R+"
	       "2);\n"
	       "rc.setAttribute('width',r.w);rc.setAttribute('height',R-1);\n"
	       "rc.setAttribute('fill','rgb('+fr.join(',')+')');t.setAttribute('x',r.x+3);\n"
	       "t.setAttribute('y',(r.d-top)*R+R-3);g.appendChild(rc);g.appendChild(t);s.appen"
	       "dChild(g);\n"
	       "g.setAttribute('data-name',r.m.name);fit(g,r.w);});}\n"
	       "document.querySelectorAll('svg.flame').forEach(function(svg){\n"
	       " svg.addEventListener('click',function(ev){var g=ev.target.closest('g.fr');if("
	       "!g)return;\n"
	       "if(ev.altKey||ev.shiftKey){sandwich(svg,g.dataset.name);return;}svg._zoom=g;la"
	       "yout(svg);});\n"
	       " svg.addEventListener('mouseover',over);svg.addEventListener('mouseout',out);\n"
	       " svg.addEventListener('mousemove',function(ev){if(hover)show(ev,hover);});\n"
	       " var sw=document.getElementById(svg.id+'-sw');if(sw){var ss=sw.querySelector('"
	       "svg');\n"
	       "ss.addEventListener('mouseover',over);ss.addEventListener('mouseout',out);\n"
	       "ss.addEventListener('click',function(ev){var g=ev.target.closest('g.sw');\n"
	       "if(g)sandwich(svg,g.dataset.name);});}\n"
	       " if(svg.dataset.focus)sandwich(svg,svg.dataset.focus);});\n"
	       "document.querySelectorAll('input.flame-view').forEach(function(r){r.addEventLi"
	       "stener('change',\n"
	       "function(){var svg=document.getElementById(r.dataset.for),sw;svg.dataset.view="
	       "r.value;layout(svg);\n"
	       "sw=document.getElementById(r.dataset.for+'-sw');if(sw&&sw.dataset.fn)sandwich("
	       "svg,sw.dataset.fn);\n"
	       "});});\n"
	       "document.addEventListener('keydown',function(ev){var a=document.activeElement;\n"
	       " if(a&&(a.tagName==='INPUT'&&a.type!=='radio'))return;\n"
	       " if(ev.key==='s'&&hover&&hover.classList.contains('fr')){sandwich(hover.closes"
	       "t('svg'),\n"
	       "hover.dataset.name);}\n"
	       " else if(ev.key==='Escape'){document.querySelectorAll('svg.flame').forEach(fun"
	       "ction(svg){\n"
	       "svg._zoom=null;layout(svg);});}\n"
	       " else if(ev.key==='/'){var i=document.querySelector('input.flame-search');\n"
	       "if(i){ev.preventDefault();i.focus();}}});\n"
	       "document.querySelectorAll('input.flame-search').forEach(function(inp){\n"
	       "inp.addEventListener('input',function(){var svg=document.getElementById(inp.da"
	       "taset.for),\n"
	       "q=inp.value,sum=0,out=document.getElementById(inp.dataset.for+'-found');\n"
	       " svg.querySelectorAll('g.fr').forEach(function(f){var m=q!==''&&f.dataset.name"
	       ".indexOf(q)>=0;\n"
	       "f.classList.toggle('match',m);});\n"
	       " var ms=Array.from(svg.querySelectorAll('g.match'));ms.forEach(function(f){\n"
	       "var nested=ms.some(function(o){return o!==f&&+o.dataset.depth<+f.dataset.depth"
	       "&&\n"
	       "+o.dataset.x<=+f.dataset.x+1e-9&&+o.dataset.x+ +o.dataset.w>=+f.dataset.x+ +f."
	       "dataset.w-1e-9;});\n"
	       "if(!nested)sum+=+f.dataset.cur;});\n"
	       " if(out)out.textContent=q===''?'':'matched '+(100*sum).toFixed(2)+'% of curren"
	       "t';});});\n"
	       "})();\n";
}

int flame_controls(buf *out, const char *id)
{
	static const char *views[] = {"current", "baseline", "difference"};
	int rc = buf_puts(out, "<p class=\"flame-views note\">View: ");

	for (int v = 0; v < 3 && rc == 0; v++) {
		rc = buf_printf(out, "<label><input type=\"radio\" class=\"flame-view\" name=\"");
		if (rc == 0)
			rc = esc_html(out, id);
		if (rc == 0)
			rc = buf_printf(out, "-view\" value=\"%d\"%s data-for=\"", v,
					v == VIEW_DIFF ? " checked" : "");
		if (rc == 0)
			rc = esc_html(out, id);
		if (rc == 0)
			rc = buf_printf(out, "\"> %s</label>", views[v]);
	}
	if (rc == 0)
		rc = buf_puts(out, " <span>Alt-click a frame (or press s over it) for its "
				   "callers and callees; Escape resets the zoom; / searches."
				   "</span></p>\n"
				   "<div class=\"sandwich-box\" hidden id=\"");
	if (rc == 0)
		rc = esc_html(out, id);
	if (rc == 0)
		rc = buf_puts(out, "-sw\"><p class=\"note\">Sandwich of <b class=\"sw-name\"></b>: "
				   "its callers above, its callees below, merged over every call "
				   "site.</p><svg class=\"sandwich\" "
				   "xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\" "
				   "data-for=\"");
	if (rc == 0)
		rc = esc_html(out, id);
	if (rc == 0)
		rc = buf_puts(out, "\"></svg></div>\n");
	return rc;
}
