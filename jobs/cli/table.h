/*
 * table.h: tables on a terminal, at most TABLE_WIDTH columns wide.
 *
 * A table has columns (title, alignment, the narrowest and the widest it
 * may be) and cells added one at a time, row after row. Every cell is
 * shown in its safe form (cli.h: control, C1 and bidirectional characters
 * and bytes that are not UTF-8 escaped), measured in display columns.
 * When the table is wider than TABLE_WIDTH, the columns that can give
 * the most give one column at a time, down to their minimum (a column
 * marked TABLE_WHOLE gives nothing); a cell
 * wider than its column loses its middle to an ellipsis, never inside a
 * character or an escape: "checkout.(*Ledger).…batchWrite".
 *
 * Wide mode (--wide) shows every column, and every cell whole.
 */
#ifndef PR_TABLE_H
#define PR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/buf.h"

#define TABLE_WIDTH 80

enum {
	TABLE_LEFT = 0,
	TABLE_RIGHT = 1 << 0,     /* right-aligned: numbers */
	TABLE_WHOLE = 1 << 1,     /* never shortened: numbers, times, fixed words */
	TABLE_WIDE_ONLY = 1 << 2, /* shown in wide mode only */
};

typedef struct table_col {
	const char *title;
	unsigned flags;  /* TABLE_RIGHT, TABLE_WHOLE, TABLE_WIDE_ONLY */
	int min;         /* shrinks no narrower than this, nor than its title */
	int max;         /* outside wide mode no wider than this; 0: no bound */
} table_col;

typedef struct table table;

/*
 * A new table with `ncols` (at least one) columns. `cols` is the caller's
 * and must outlive the table (a static array). Free with table_free.
 * Returns 0, PR_EUSAGE (no column) or PR_ENOMEM.
 */
int table_new(table **out, const table_col *cols, size_t ncols, bool wide);

/*
 * Add the next cell, copied (NULL shows as "-"); after a row's last
 * column the next row begins. Returns 0 or PR_ENOMEM. The first failure
 * is kept: later adds do nothing and table_print returns it, so a caller
 * may check once, at the end.
 */
int table_add(table *t, const char *cell);
int table_addf(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Print the title line and the rows to `f`, one line each, with no
 * trailing blanks. Returns 0, or the first failure of an add (nothing
 * is printed then) or PR_ENOMEM.
 */
int table_print(table *t, FILE *f);

/*
 * Append the safe form of `s` to `out` in at most `width` display
 * columns, shortened in the middle as a cell is (width <= 0: whole).
 * Returns the columns used, or buf_put's code (`out` is then empty).
 */
int table_fit(buf *out, const char *s, int width);

/* Free the table and its cells; NULL is fine. */
void table_free(table *t);

#endif
