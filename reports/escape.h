/*
 * escape.h: making names taken from a profile safe in each output format.
 *
 * Every function and file name in a report comes from an untrusted
 * profile. These are the only ways such a string enters HTML or Markdown,
 * so a name like `<script>` or `a|b` always renders as the text it is.
 * (JSON output goes through jansson, which escapes by itself.)
 */
#ifndef PR_ESCAPE_H
#define PR_ESCAPE_H

#include <stddef.h>

#include "common/buf.h"

/*
 * Append `s` to `out` as HTML text or attribute value: & < > " ' become
 * entities, control characters become the visible text \xNN. Returns 0
 * or the buffer's error (PR_ENOMEM, PR_ELIMIT).
 */
int esc_html(buf *out, const char *s);

/* Same for the first `n` bytes of `s` (which may contain no NUL). */
int esc_html_n(buf *out, const char *s, size_t n);

/*
 * Append `s` as HTML text that is only read, never sent back (a commit's
 * subject and author): as esc_html, and what would change how the text
 * after it reads (C1 controls, bidirectional overrides, line separators:
 * utf8_hidden) or a byte that is not UTF-8 becomes \u{NNNN} or \xNN, as
 * in Markdown. Attribute values keep such characters (esc_html): the page
 * matches them against other names.
 */
int esc_html_text(buf *out, const char *s);

/*
 * Append `s` to `out` as Markdown text that is safe inside a table cell:
 * every character that can start emphasis, code, a link, an image, raw
 * HTML, a heading or a table cell is backslash-escaped, C0 controls
 * (newlines included) and DEL become \xNN, and what a terminal or a CI
 * log would act on (C1 controls, bidirectional marks and overrides, line
 * separators: utf8_hidden) \u{NNNN}; a byte that is not UTF-8 \xNN.
 * Returns as esc_html.
 */
int esc_md(buf *out, const char *s);

/*
 * The longest name a report's table cell shows whole; a longer one is cut
 * in the middle ("std::_Function_handler<void (acme::...…...>::_M_invoke"),
 * and its finding's own section has it whole.
 */
#define ESC_CELL_MAX 160

/*
 * As esc_html and esc_md, for a table cell: a name longer than
 * ESC_CELL_MAX bytes keeps its first 100 and last 50 (never inside a
 * UTF-8 sequence) with "…" between them. 0 or a negative code.
 */
int esc_html_cell(buf *out, const char *s);
int esc_md_cell(buf *out, const char *s);

#endif
