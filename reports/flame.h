/*
 * flame.h: the differential flame graph.
 *
 * Two sets of stacks (the baseline side and the current side, root first)
 * are merged into one call tree: a node per distinct path of function
 * names, holding its inclusive value on each side. Drawn as an inline SVG
 * flame graph of the current side (root at the top, width = current
 * share of the root), each frame coloured by how much its self share (the
 * part of the frame not covered by its children, as analysis tests it)
 * grew (red) or shrank (blue) against the baseline side, the intensity
 * proportional to the change over the largest change drawn. The exact
 * values sit in a tooltip and in data-* attributes (data-name,
 * data-delta, ...), so scripts and tests can read them.
 *
 * Frames narrower than a minimum fraction of the root are merged away
 * (their width stays with the parent) and at most max_frames are drawn,
 * so a huge profile gives a small graph. Every name is HTML-escaped.
 */
#ifndef PR_FLAME_H
#define PR_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/strmap.h"
#include "pipeline/profile.h"

typedef enum flame_side { FLAME_BASE = 0, FLAME_CUR = 1 } flame_side;

typedef struct flame_node {
	uint32_t name;   /* index into the tree's names */
	uint32_t parent; /* the root is its own parent */
	uint32_t child;  /* first child, 0: none */
	uint32_t next;   /* next sibling, 0: none */
	uint32_t depth;  /* the root is 0 */
	double v[2];     /* inclusive value per side */
} flame_node;

typedef struct flame_tree {
	flame_node *nodes;    /* nodes[0] is the root, "all" */
	size_t n, cap;
	const char **names;   /* interned, owned by name_index */
	size_t nnames, names_cap;
	strmap name_index;
	uint32_t *slots;      /* (parent, name) -> node, open addressing; 0: empty */
	size_t hcap, hcount;
	uint64_t seed;        /* of the slots' hash, picked by flame_tree_init */
	double total[2];      /* everything added to each side */
	/*
	 * What one capture of each side holds on average, in `unit`, for the
	 * page's absolute values (share x per_capture); 0 and "" when unknown.
	 * Set by whoever adds the captures.
	 */
	double per_capture[2];
	char unit[32];
	size_t max_nodes;     /* PR_ELIMIT past this many nodes */
	uint32_t guess;       /* the node after the last one a lookup found or made */
} flame_tree;

#define FLAME_DEFAULT_MAX_NODES (16u << 20)

/* An empty tree (just the root). Release with flame_tree_release. */
int flame_tree_init(flame_tree *t, pr_error *err);
void flame_tree_release(flame_tree *t);

/*
 * Add `value` (>= 0) to one side along a stack of `depth` frames, root
 * first, frame i being the `lens[i]` bytes at `frames[i]`. A zero-depth
 * stack counts toward the side's total only.
 */
int flame_tree_add(flame_tree *t, flame_side side, const char *const *frames,
		   const size_t *lens, size_t depth, double value, pr_error *err);

/*
 * Add every sample of `p` (its column `column`) to one side, each value
 * multiplied by `weight`. Frames are merged by function name. With
 * weight 1 / total per capture, every capture counts equally, as it does
 * in the analysis' mean share.
 */
int flame_tree_add_profile(flame_tree *t, flame_side side, const profile *p,
			   size_t column, double weight, pr_error *err);

typedef struct flame_opts {
	double min_frac;        /* narrower than this fraction of the root: merged away (0.001) */
	size_t max_frames;      /* frames drawn at most (2000) */
	int width;              /* pixels (1200) */
	const char *id;         /* the svg element's id ("flame") */
	const char *highlight;  /* frames of this function get an outline, or NULL */
} flame_opts;

void flame_opts_default(flame_opts *o);

/* What a rendering drew. */
typedef struct flame_stats {
	size_t frames;          /* frames drawn */
	size_t pruned;          /* nodes with current width merged away */
	double max_delta;       /* largest |self share change| drawn */
	uint32_t reddest;       /* node with the largest growth, 0: none */
} flame_stats;

/*
 * Append the SVG element to `out`. `st` may be NULL. A frame is drawn when
 * its share on either side reaches min_frac (raised so that at most
 * max_frames pass). With no current samples a note is drawn instead.
 * Returns 0 or PR_ENOMEM/PR_ELIMIT (the buffer's cap).
 */
int flame_render_svg(buf *out, const flame_tree *t, const flame_opts *o,
		     flame_stats *st, pr_error *err);

/*
 * CSS and JavaScript to put once into a page: click to zoom, search, the
 * current/baseline/difference toggle, the tooltip element and the sandwich
 * view (callers above, callees below a function, over every call site)
 * opened on each graph's highlighted function. The page supplies the
 * controls (flame_controls).
 */
const char *flame_css(void);
const char *flame_script(void);

/* The view toggle and the sandwich box of the graph with id `id`. */
int flame_controls(buf *out, const char *id);

/* Self and inclusive shares of node `i` on each side (0 when a side is empty). */
void flame_node_shares(const flame_tree *t, uint32_t i, double self_out[2],
		       double total_out[2]);

#endif
