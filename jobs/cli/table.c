/*
 * table.c: terminal tables that fit TABLE_WIDTH columns (see table.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/table.h"
#include "jobs/cli/cli.h"
#include "common/buf.h"
#include "common/error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

struct table {
	const table_col *cols;
	size_t ncols;
	bool wide;
	char **cells;  /* row after row; a missing cell of the last row is "" */
	size_t ncells, cap;
	int rc;        /* the first failure of an add */
};

int table_new(table **out, const table_col *cols, size_t ncols, bool wide)
{
	table *t;

	*out = NULL;
	if (ncols == 0)
		return PR_EUSAGE;
	if (!(t = calloc(1, sizeof(*t))))
		return PR_ENOMEM;
	t->cols = cols;
	t->ncols = ncols;
	t->wide = wide;
	*out = t;
	return 0;
}

void table_free(table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

int table_add(table *t, const char *cell)
{
	char *copy;

	if (t->rc < 0)
		return t->rc;
	if (t->ncells == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		char **cells = realloc(t->cells, cap * sizeof(*cells));
		if (!cells)
			return t->rc = PR_ENOMEM;
		t->cells = cells;
		t->cap = cap;
	}
	if (!(copy = strdup(cell ? cell : "-")))
		return t->rc = PR_ENOMEM;
	t->cells[t->ncells++] = copy;
	return 0;
}

int table_addf(table *t, const char *fmt, ...)
{
	buf b = BUF_INIT;
	va_list ap;
	int rc;

	if (t->rc < 0)
		return t->rc;
	va_start(ap, fmt);
	rc = buf_vprintf(&b, fmt, ap);
	va_end(ap);
	rc = rc < 0 ? (t->rc = rc) : table_add(t, b.ptr);
	buf_release(&b);
	return rc;
}

int table_fit(buf *out, const char *s, int w)
{
	int total = cli_width(s), hb = (w - 1) - (w - 1) / 2, tb = (w - 1) / 2;
	int cum = 0, used = 0, phase = 0, rc;
	cli_unit u;

	/* Whole, or the head (which gets the odd column), "…" and the tail. */
	if (w <= 0 || total <= w)
		return (rc = cli_escape(out, s)) < 0 ? rc : total;
	/* phase 0: the head; 1: the dropped middle; 2: the tail. */
	while (*s) {
		size_t n = cli_unit_next(&u, s);
		if (phase == 0 && cum + u.cols > hb) {
			if ((rc = buf_puts(out, ELLIPSIS)) < 0)
				return rc;
			used++;
			phase = 1;
		}
		if (phase == 1 && total - cum <= tb)
			phase = 2;
		if (phase != 1) {
			if ((rc = buf_puts(out, u.text)) < 0)
				return rc;
			used += u.cols;
		}
		cum += u.cols;
		s += n;
	}
	return used;
}

/* Append `n` spaces. */
static int pad(buf *out, int n)
{
	int rc = 0;

	for (; n > 0 && rc == 0; n--)
		rc = buf_putc(out, ' ');
	return rc;
}

/*
 * The widths of the columns into w[0..ncols) (0 for a hidden column);
 * w[ncols..2 ncols) is room for each column's floor.
 */
static void layout(const table *t, int *w)
{
	size_t nrows = (t->ncells + t->ncols - 1) / t->ncols, nvis = 0;
	int total = 0, *floor = w + t->ncols;

	for (size_t i = 0; i < t->ncols; i++) {
		const table_col *c = &t->cols[i];
		w[i] = floor[i] = 0;
		if ((c->flags & TABLE_WIDE_ONLY) && !t->wide)
			continue;
		w[i] = cli_width(c->title);
		floor[i] = c->min > w[i] ? c->min : w[i];
		for (size_t r = 0; r < nrows; r++) {
			size_t k = r * t->ncols + i;
			int cw = k < t->ncells ? cli_width(t->cells[k]) : 0;
			if (cw > w[i])
				w[i] = cw;
		}
		if (c->flags & TABLE_WHOLE)
			floor[i] = w[i];
		else if (!t->wide && c->max > 0 && w[i] > c->max)
			w[i] = c->max > floor[i] ? c->max : floor[i];
		total += w[i];
		nvis++;
	}
	total += nvis > 0 ? (int)nvis - 1 : 0;
	/* Too wide: the column that can give the most gives one, and again. */
	while (!t->wide && total > TABLE_WIDTH) {
		size_t best = t->ncols;
		for (size_t i = 0; i < t->ncols; i++)
			if (w[i] > floor[i] &&
			    (best == t->ncols || w[i] - floor[i] >= w[best] - floor[best]))
				best = i;
		if (best == t->ncols)
			break;
		w[best]--;
		total--;
	}
}

#define TITLES ((size_t)-1) /* the row of titles, for put_line */

/* One line: the cells of `row` (or TITLES) at widths w[], no trailing blank. */
static int put_line(buf *line, const table *t, size_t row, const int *w)
{
	buf cell = BUF_INIT;
	bool first = true;
	int rc = 0, used;

	buf_reset(line);
	for (size_t i = 0; i < t->ncols; i++) {
		const table_col *c = &t->cols[i];
		size_t k = row * t->ncols + i;
		const char *s = row == TITLES ? c->title : k < t->ncells ? t->cells[k] : "";
		if (w[i] == 0)
			continue;
		buf_reset(&cell);
		if ((used = table_fit(&cell, s, w[i])) < 0) {
			rc = used;
			goto out;
		}
		if ((!first && (rc = buf_putc(line, ' ')) < 0) ||
		    ((c->flags & TABLE_RIGHT) && (rc = pad(line, w[i] - used)) < 0) ||
		    (rc = buf_put(line, cell.ptr, cell.len)) < 0 ||
		    (!(c->flags & TABLE_RIGHT) && (rc = pad(line, w[i] - used)) < 0))
			goto out;
		first = false;
	}
	while (line->len && line->ptr[line->len - 1] == ' ')
		line->ptr[--line->len] = '\0';
	rc = buf_putc(line, '\n');
out:
	buf_release(&cell);
	return rc;
}

int table_print(table *t, FILE *f)
{
	size_t nrows = (t->ncells + t->ncols - 1) / t->ncols;
	buf line = BUF_INIT;
	int *w = NULL, rc = t->rc;

	if (rc < 0)
		goto out;
	if (!(w = calloc(2 * t->ncols, sizeof(*w)))) {
		rc = PR_ENOMEM;
		goto out;
	}
	layout(t, w);
	if ((rc = put_line(&line, t, TITLES, w)) < 0)
		goto out;
	fwrite(line.ptr, 1, line.len, f);
	for (size_t r = 0; r < nrows; r++) {
		if ((rc = put_line(&line, t, r, w)) < 0)
			goto out;
		fwrite(line.ptr, 1, line.len, f);
	}
out:
	free(w);
	buf_release(&line);
	return rc;
}
