/*
 * flame.c: the merged call tree of two sides and its differential SVG.
 */
#include "reports/flame.h"
#include "reports/escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW 17        /* pixels per level */
#define TOP 4         /* margin above the root */
#define CHAR_PX 7.0   /* average glyph width of the 12px label font */

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "cannot build the flame graph: out of memory");
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Empty slots hold key UINT64_MAX: no (parent, name) pair reaches it. */
static int hash_grow(flame_tree *t)
{
	size_t ncap = t->hcap ? t->hcap * 2 : 1024;
	uint64_t *k = malloc(ncap * sizeof(*k));
	uint32_t *v = malloc(ncap * sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return PR_ENOMEM;
	}
	memset(k, 0xff, ncap * sizeof(*k));
	for (size_t i = 0; i < t->hcap; i++) {
		size_t j;
		if (t->hkeys[i] == UINT64_MAX)
			continue;
		for (j = mix(t->hkeys[i]) & (ncap - 1); k[j] != UINT64_MAX;
		     j = (j + 1) & (ncap - 1))
			;
		k[j] = t->hkeys[i];
		v[j] = t->hvals[i];
	}
	free(t->hkeys);
	free(t->hvals);
	t->hkeys = k;
	t->hvals = v;
	t->hcap = ncap;
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
	free(t->hkeys);
	free(t->hvals);
	strmap_release(&t->name_index);
	memset(t, 0, sizeof(*t));
}

/* The child of `parent` named `name`, created when absent. */
static int child_of(flame_tree *t, uint32_t *out, uint32_t parent, uint32_t name, pr_error *err)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	size_t j;
	flame_node *nd;

	if ((t->hcount + 1) * 4 > t->hcap * 3 && hash_grow(t) < 0)
		return oom(err);
	for (j = mix(key) & (t->hcap - 1); t->hkeys[j] != UINT64_MAX; j = (j + 1) & (t->hcap - 1))
		if (t->hkeys[j] == key) {
			*out = t->hvals[j];
			return 0;
		}
	if (t->n >= t->max_nodes)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot build the flame graph: more than "
				    "%zu distinct frames", t->max_nodes);
	if (t->n == t->cap) {
		size_t ncap = t->cap * 2;
		flame_node *nn = realloc(t->nodes, ncap * sizeof(*nn));
		if (!nn)
			return oom(err);
		t->nodes = nn;
		t->cap = ncap;
	}
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->depth = t->nodes[parent].depth + 1;
	nd->next = t->nodes[parent].child;
	t->nodes[parent].child = (uint32_t)t->n;
	t->hkeys[j] = key;
	t->hvals[j] = (uint32_t)t->n;
	t->hcount++;
	*out = (uint32_t)t->n++;
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
	uint32_t *map = NULL;
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
	for (size_t s = 0; s < p->nsamples; s++) {
		double v = (double)p->values[s * p->nvalue_types + column] * weight;
		const uint32_t *fr = p->frames + p->stack_off[s];
		uint32_t node = 0;

		t->total[side] += v;
		t->nodes[0].v[side] += v;
		for (uint32_t i = 0; i < p->stack_len[s]; i++) {
			if ((rc = child_of(t, &node, node, map[fr[i]], err)) < 0)
				goto out;
			t->nodes[node].v[side] += v;
		}
	}
out:
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

typedef struct render {
	const flame_tree *t;
	const flame_opts *o;
	buf *out;
	double thr;          /* minimum current value drawn */
	double maxd;         /* largest |self share delta| among drawn frames */
	uint32_t *kids;      /* scratch: children being drawn, a stack of slices */
	size_t nkids, kids_cap;
	size_t frames;
	int max_depth;
	flame_stats *st;
} render;

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

static int frame(render *r, uint32_t i, double x)
{
	const flame_tree *t = r->t;
	const flame_node *nd = &t->nodes[i];
	const char *name = t->names[nd->name];
	double self[2], tot[2], w = nd->v[FLAME_CUR] / t->total[FLAME_CUR], px = w * r->o->width;
	double d = 0, dt;
	char fill[8];
	bool hl;
	int y = TOP + (int)nd->depth * ROW, rc;

	flame_node_shares(t, i, self, tot);
	if (i)
		d = self[FLAME_CUR] - self[FLAME_BASE];
	dt = tot[FLAME_CUR] - tot[FLAME_BASE];
	colour(fill, d, r->maxd);
	hl = r->o->highlight && i && strcmp(r->o->highlight, name) == 0;
	if ((int)nd->depth > r->max_depth)
		r->max_depth = (int)nd->depth;
	if (r->st && i && d > 0 && (!r->st->reddest || d > r->st->max_delta)) {
		r->st->reddest = i;
		r->st->max_delta = d;
	}
	r->frames++;
	rc = buf_printf(r->out, "<g class=\"fr%s\" data-name=\"", hl ? " hl" : "");
	if (rc == 0)
		rc = esc_html(r->out, name);
	if (rc == 0)
		rc = buf_printf(
			r->out,
			"\" data-delta=\"%.6g\" data-dtotal=\"%.6g\" "
			"data-cur=\"%.6g\" data-base=\"%.6g\""
			" data-x=\"%.6f\" data-w=\"%.6f\" data-depth=\"%u\"><title>",
			d, dt, tot[FLAME_CUR], tot[FLAME_BASE], x / r->o->width, w, nd->depth);
	if (rc == 0)
		rc = esc_html(r->out, name);
	if (rc == 0)
		rc = buf_printf(
			r->out,
			"\ncurrent %.3f%% (self %.3f%%)\nbaseline %.3f%% (self %.3f%%)\n"
			"self change %+.3fpp, total change %+.3fpp</title>"
			"<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%d\">",
			100 * tot[FLAME_CUR], 100 * self[FLAME_CUR], 100 * tot[FLAME_BASE],
			100 * self[FLAME_BASE], 100 * d, 100 * dt, x, y, px, ROW - 1, fill, x + 3,
			y + ROW - 5);
	if (rc == 0)
		rc = label(r->out, name, px);
	if (rc == 0)
		rc = buf_puts(r->out, "</text></g>\n");
	return rc;
}

/* Draw node i at x and, sorted by name, its children wide enough. */
static int draw(render *r, uint32_t i, double x)
{
	const flame_tree *t = r->t;
	size_t start = r->nkids, end;
	int rc;

	if ((rc = frame(r, i, x)) < 0)
		return rc;
	for (uint32_t c = t->nodes[i].child; c; c = t->nodes[c].next) {
		if (t->nodes[c].v[FLAME_CUR] < r->thr || t->nodes[c].v[FLAME_CUR] <= 0) {
			if (r->st && t->nodes[c].v[FLAME_CUR] > 0)
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
	qsort(r->kids + start, end - start, sizeof(*r->kids), cmp_name);
	for (size_t k = start; k < end && rc == 0; k++) {
		uint32_t c = r->kids[k];
		if (r->frames >= r->o->max_frames) {
			if (r->st)
				r->st->pruned++;
			continue;
		}
		rc = draw(r, c, x);
		x += t->nodes[c].v[FLAME_CUR] / t->total[FLAME_CUR] * r->o->width;
	}
	r->nkids = start;
	return rc;
}

/*
 * The smallest current value drawn: the minimum width, raised so that
 * at most max_frames frames pass. A child is never wider than its parent,
 * so every frame that passes has its ancestors drawn too.
 */
static int threshold(double *out, const flame_tree *t, const flame_opts *o)
{
	double min = o->min_frac * t->total[FLAME_CUR], *w = NULL;
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += t->nodes[i].v[FLAME_CUR] >= min && t->nodes[i].v[FLAME_CUR] > 0;
	*out = min;
	if (n <= o->max_frames || o->max_frames == 0)
		return 0;
	if (!(w = malloc(n * sizeof(*w))))
		return PR_ENOMEM;
	n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].v[FLAME_CUR] >= min && t->nodes[i].v[FLAME_CUR] > 0)
			w[n++] = t->nodes[i].v[FLAME_CUR];
	qsort(w, n, sizeof(*w), cmp_desc);
	*out = w[o->max_frames - 1];
	free(w);
	return 0;
}

int flame_render_svg(buf *out, const flame_tree *t, const flame_opts *o,
		     flame_stats *st, pr_error *err)
{
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
		double self[2], tot[2];
		if (t->nodes[i].v[FLAME_CUR] < r.thr || t->nodes[i].v[FLAME_CUR] <= 0)
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
	if ((rc = buf_printf(
		     out,
		     "\" width=\"%d\" height=\"%-8d\" data-width=\"%d\" data-max-delta=\"%.6g\">\n",
		     o->width, 0, o->width, r.maxd)) < 0 ||
	    (rc = draw(&r, 0, 0)) < 0 || (rc = buf_puts(out, "</svg>\n")) < 0)
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
	       "svg.flame g.fr{cursor:pointer}\n"
	       "svg.flame rect{stroke:#fff;stroke-width:0.5}\n"
	       "svg.flame g.fr:hover rect{stroke:#000;stroke-width:1}\n"
	       "svg.flame g.hl rect{stroke:#000;stroke-width:1.5}\n"
	       "svg.flame g.match rect{fill:#e8b10a}\n"
	       "svg.flame text{fill:#111;pointer-events:none}\n";
}

/* Click a frame to zoom into it (the root resets); type to highlight matches. */
const char *flame_script(void)
{
	return "(function(){\n"
	       "function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-name'),"
	       "c=Math.floor((w-6)/7),a=Array.from(n);"
	       "t.textContent=c<3?'':(a.length>c?a.slice(0,c-2).join('')+'..':n);}\n"
	       "function zoom(svg,z){var "
	       "W=+svg.getAttribute('data-width'),zx=+z.dataset.x,zw=+z.dataset.w,"
	       "zd=+z.dataset.depth,e=1e-9;\n"
	       " svg.querySelectorAll('g.fr').forEach(function(f){var "
	       "x=+f.dataset.x,w=+f.dataset.w,"
	       "d=+f.dataset.depth,r=f.querySelector('rect'),t=f.querySelector('text');\n"
	       "  var inside=d>=zd&&x>=zx-e&&x+w<=zx+zw+e,anc=d<zd&&x<=zx+e&&x+w>=zx+zw-e;\n"
	       "  if(!inside&&!anc){f.style.display='none';return;}\n"
	       "  f.style.display='';var nx=anc?0:(x-zx)/zw*W,nw=anc?W:w/zw*W;\n"
	       "  "
	       "r.setAttribute('x',nx);r.setAttribute('width',nw);"
	       "t.setAttribute('x',nx+3);fit(f,nw);});}\n"
	       "document.querySelectorAll('svg.flame').forEach(function(svg){"
	       "svg.addEventListener('click',function(ev){var "
	       "g=ev.target.closest('g.fr');if(g)zoom(svg,g);});});\n"
	       "document.querySelectorAll('input.flame-search').forEach(function(inp){"
	       "inp.addEventListener('input',function(){var "
	       "svg=document.getElementById(inp.dataset.for),"
	       "q=inp.value,sum=0,out=document.getElementById(inp.dataset.for+'-found');\n"
	       " svg.querySelectorAll('g.fr').forEach(function(f){var "
	       "m=q!==''&&f.dataset.name.indexOf(q)>=0;"
	       "f.classList.toggle('match',m);});\n"
	       " var ms=Array.from(svg.querySelectorAll('g.match'));ms.forEach(function(f){"
	       "var nested=ms.some(function(o){return o!==f&&+o.dataset.depth<+f.dataset.depth&&"
	       "+o.dataset.x<=+f.dataset.x+1e-9&&+o.dataset.x+ "
	       "+o.dataset.w>=+f.dataset.x+ +f.dataset.w-1e-9;});"
	       "if(!nested)sum+=+f.dataset.cur;});\n"
	       " if(out)out.textContent=q===''?'':'matched "
	       "'+(100*sum).toFixed(2)+'% of current';});});\n"
	       "})();\n";
}
