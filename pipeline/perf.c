/*
 * perf.c: parser for Linux `perf script` text (see perf.h).
 *
 * After `perf record -g`, `perf script` prints one block per sample event:
 *
 *   render pool 11713   667.664722:   10101010 cpu-clock:
 *   	            1257 leaf_hash+0x27 (/tmp/pf/burn)
 *   	            135c checksum_inline+0x1c (inlined)
 *   	            135c render_page+0x1c (/tmp/pf/burn)
 *   	          1098eb clone3+0x2b (/usr/lib/x86_64-linux-gnu/libc.so.6)
 *   <blank line>
 *
 * a header line (comm, pid[/tid], [cpu], misc flags, time of day, time,
 * period, event: which fields appear depends on -F), then the call chain
 * leaf first, one indented "address symbol+offset (dso)" line a frame,
 * then a blank line.
 *
 * The command name may contain spaces and digits ("Web Content",
 * "kworker/0:1", "render pool 2"); perf prints no mark where it ends, so
 * the header is read (header_comm) as the shortest name that one of
 * these can follow, tried in this order:
 *   - a pid, then any of the cpu "[001]", the flags of -F +misc ("K",
 *     "KGg", as perf joins them), the time of day of -F +tod
 *     ("2024-03-15 10:20:30.123456", "disabled"), then the timestamp
 *     "secs.usecs:": the name is whatever comes before the pid;
 *   - the same without the pid: then the name stops at its first word
 *     of digits (the pid, as the script reads it: "render pool 2
 *     460.339740:" is "render pool") or shaped like another field;
 *   - without a timestamp, any of the pid, cpu, flags, time of day and
 *     period, then the event, the last word, ending in ':' (see
 *     untimed_fields);
 *   - the script's reading, a pid and then anything: the name is what
 *     comes before the pid, and the period is read after the first
 *     "secs.usecs:" if there is one.
 * So fields this parser does not know never go into the name: they
 * follow a pid, or the line is not a header (an error), where a name
 * with a cpu, flags or time of day in it would be a function of its own
 * for every sample.
 *
 * After `perf record` without -g there is no call chain, and each sample
 * is one line, the command padded to 16 columns and the frame the sample
 * hit after the event:
 *
 *   burn 24193  7227.119856:    5025125 cpu-clock:  557ad0a49257 leaf_hash+0x27 (/tmp/pf/burn)
 *
 * That is a stack of two frames, the command and that symbol, tidied as
 * any frame is; its symbol must be there.
 *
 * Stacks are folded the way Brendan Gregg's stackcollapse-perf.pl folds
 * them with its default options, so a profile from this parser and one
 * from that script's output agree function for function:
 *   - the root frame is the command name with spaces turned into '_';
 *   - each event counts 1 in the first column, samples/count. When the
 *     header has the event's period (the number perf prints after the
 *     timestamp, as it does by default), a second column, "cpu", adds
 *     up the periods, as the script's current version and perf report
 *     do: in nanoseconds for cpu-clock and task-clock, else in events
 *     (cycles, page faults) as "count". That column is what a cpu
 *     capture analyses. perf record -F asks the kernel for a frequency,
 *     and for any event but the two clocks (the hardware cycles of a
 *     plain perf record, page faults) the kernel then changes the
 *     period from sample to sample: counted alone, samples of short
 *     periods weighed as much as the rest, and shares differed from perf
 *     report's by points (tests/data/perf/tpl-pagefaults.perf);
 *   - only events of the first event type seen are kept, because adding
 *     up cycles and instructions (say) would mean nothing; the others
 *     are counted (profile.other_events) so that ingest can say so, as
 *     the script warns "Filtering for events of type: ...". When the
 *     first is no measure of CPU time but a later one is (cpu-clock,
 *     task-clock, cycles), the print is read again keeping that one:
 *     `perf record -e cpu-clock,page-faults` prints a page fault of the
 *     loader first, and the capture, a cpu capture, was of page faults;
 *   - "+0x1f" offsets are stripped; "[unknown]" becomes the basename of
 *     the dso in brackets ("[libc.so.6]"), or "[unknown]" when the dso is
 *     unknown too;
 *   - argument lists are cut from the first '(' (except Go's
 *     "pkg.(*T).Method", C++'s "(anonymous namespace)" and, below, a
 *     '(' inside brackets, braces or angle brackets), ';' becomes
 *     ':', quotes are dropped, and for commands starting with "java" the
 *     leading 'L' of "Lpkg/Class;" signatures goes;
 *   - "a->b" inline chains become two frames; the script marks the
 *     second "_[i]", profreg does not: an inlined function is the same
 *     function as its copies that were not inlined (as in pprof, and as
 *     the folded parser reads "_[i]"), so a release that inlines it
 *     differently does not move its cost to another name. perf's own
 *     "(inlined)" frames are frames like any other;
 *   - frames whose symbol starts with '(' are process names and skipped;
 *   - V8's JIT frames from perf maps (node --perf-basic-prof), "JS:*f
 *     /srv/app.js:3:9", are the function f of /srv/app.js: the script
 *     keeps the tier mark, which changes as the JIT warms up, and the
 *     line and column, which change as code moves (v8_code_name);
 *   - a header with no frames after it is a stack of the command alone.
 *
 * Where the script's regular expressions trip over input they were not
 * written for, this parser does the sensible thing instead, on purpose:
 *   - a command name ending in a number ("render pool 2") is kept whole
 *     when the header has a pid and a timestamp; the script cuts it at
 *     the first word made of digits;
 *   - the cpu, flags and time of day are fields wherever they are
 *     printed; the script takes them into the name when there is no pid
 *     before them;
 *   - the last event is kept even without a blank line after it (shells
 *     and editors strip trailing newlines); the script drops it. But a
 *     last frame line cut off before its "(dso)", or inside its
 *     indentation (spaces alone at the end), is an error, and so is a
 *     last header cut off before its event when the headers before it
 *     had one, or whose event is the start of the one kept up to a ':'
 *     ("cpu-clock" of "cpu-clock:ppp"), unless the space perf prints
 *     after the event's ':' is there or an earlier header had that
 *     event;
 *   - a header that arrives while an event is still open ends that event;
 *     the script merges the two stacks;
 *   - "(anonymous namespace)::f" is a frame, not a process name;
 *   - a '(' inside brackets, braces or a C++ template's angle brackets
 *     does not start an argument list: Go's generic
 *     "main.Apply[go.shape.func(int) int_0]", C++'s lambda
 *     "main::{lambda(int)#2}::operator()" and std::function's
 *     "std::_Function_handler<long (long), main::{lambda(long)#1}>
 *     ::_M_invoke" stay whole up to the '(' after them, where the script
 *     cuts them at "[go.shape.func", "{lambda" and
 *     "std::_Function_handler<long " and makes one function of every
 *     instantiation or lambda (an operator's '<' or '>', as in
 *     "operator<<", opens or closes nothing);
 *   - the dso is the balanced "(...)" group at the end of a frame line,
 *     so "(/tmp/x.so (deleted))" is one dso, named "[x.so]" for an
 *     unknown symbol;
 *   - a frame line without a "(dso)" (perf script -F ip,sym) is a frame;
 *   - a period with no event name after it (perf script -F without
 *     event) ends the header: it is not read as a frame's address;
 *   - the source lines perf prints under each frame with -F +srcline
 *     ("  file.c:42", "  ??:0", "  [dso][addr]") are skipped, as they add
 *     nothing to a frame; only right after a frame (or a one-line event)
 *     is such a line taken for one;
 *   - side-band records (--show-mmap-events, --show-task-events and the
 *     like: "comm pid time: PERF_RECORD_MMAP2 ...") are not samples and
 *     are skipped (read as headers they would each count as a sample),
 *     and so are the indented lines some print under them (the namespaces of
 *     --show-namespace-events) and --show-round-events' bare
 *     "PERF_RECORD_FINISHED_ROUND";
 * Lines of only whitespace are ignored, as the script ignores them. Any
 * other line that is not a comment ('#'), a header, a frame or a blank
 * line is an error naming the line, where the script only warns: input
 * that does not parse is not silently turned into a smaller profile.
 */
#include "pipeline/perf.h"
#include "common/redact.h"
#include "pipeline/v8.h"
#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNIFF_BYTES 65536
/* A cache entry: the key, its NUL and up to three map slots. */
#define CACHE_COST(n) ((n) + 1 + 3 * sizeof(strmap_slot))

typedef enum ev_state {
	EV_NONE,  /* between events: a frame line here is an error */
	EV_OPEN,  /* collecting the frames of a kept event */
	EV_SKIP,  /* an event of another type: its frames are ignored */
	EV_RECORD, /* a side-band record: its indented lines are ignored */
} ev_state;

typedef struct parser {
	profile *p;
	pr_error *err;
	size_t line;
	strmap cache;        /* folded frame name -> function id */
	buf name;            /* scratch: the frame name being folded */
	buf event;           /* the event type kept; empty until the first */
	buf cpu_event;       /* the first CPU-time event of those not kept */
	uint64_t prefixes;   /* bit k: the event kept up to its (k+1)th ':' was seen */
	uint32_t *stack;     /* the open event's frames, leaf first */
	bool *interp;        /* of each, whether it runs in CPython's interpreter */
	size_t stack_cap;
	bool in_python;   /* the open event has a Python function's frame (py::) */
	uint32_t inlined; /* frames just pushed whose dso is "(inlined)": the next's */
	uint32_t depth;
	ev_state state;
	size_t ev_line;      /* line of the open event's header */
	uint32_t comm_id;
	bool java;           /* the open event's command starts with "java" */
	bool after_frame;    /* the last line was a frame or a one-line event */
	bool cut;            /* this line is the last and has no newline */
	bool dsos;           /* a frame line so far ended in its "(dso)" */
	int64_t period;      /* the open event's period; -1 when its header has none */
	int periods;         /* 1: the columns count periods too, 0: not, -1: undecided */
} parser;

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_xdigit(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static size_t skip_spaces(const char *s, size_t n, size_t i)
{
	while (i < n && is_space((unsigned char)s[i]))
		i++;
	return i;
}

static size_t skip_digits(const char *s, size_t n, size_t i)
{
	while (i < n && is_digit((unsigned char)s[i]))
		i++;
	return i;
}

static size_t token_end(const char *s, size_t n, size_t i)
{
	while (i < n && !is_space((unsigned char)s[i]))
		i++;
	return i;
}

static int bad_line(parser *ps, const char *what, const char *s, size_t n)
{
	char q[40];

	return pr_error_set(ps->err, PR_EDATA, "cannot parse '%s': line %zu: %s '%s'",
			    ps->p->input_name, ps->line, what, profile_quote(q, s, n));
}

static int oom(parser *ps)
{
	return pr_error_set(ps->err, PR_ENOMEM, "cannot parse '%s': out of memory",
			    ps->p->input_name);
}

/* An error from the profile model, with the line number put in. */
static int model_error(parser *ps, int rc, const pr_error *inner, size_t line)
{
	char prefix[PR_ERROR_MSG_MAX];
	size_t k;

	snprintf(prefix, sizeof(prefix), "cannot parse '%s': ", ps->p->input_name);
	k = strlen(prefix);
	if (strncmp(inner->msg, prefix, k) == 0)
		return pr_error_set(ps->err, rc, "%sline %zu: %s", prefix, line,
				    inner->msg + k);
	return pr_error_set(ps->err, rc, "%s (line %zu)", inner->msg, line);
}

static int intern(parser *ps, uint32_t *out, const char *s, size_t n)
{
	pr_error inner = PR_ERROR_INIT;
	const char *name = s, *file = NULL;
	size_t name_len = n, file_len = 0;
	int rc;

	if (strmap_get(&ps->cache, s, n, out))
		return 0;
	/* A V8 JIT frame is its function in its file, whatever its tier or line. */
	if (!v8_code_name(s, n, &name, &name_len, &file, &file_len)) {
		name = s;
		name_len = n;
		file = NULL;
		file_len = 0;
	}
	/* The cache keeps its own copy of the folded name: charge it too. */
	if ((rc = profile_intern(ps->p, out, name, name_len, file, file_len, &inner)) < 0 ||
	    (rc = profile_mem_take(ps->p, CACHE_COST(n), &inner)) < 0)
		return model_error(ps, rc, &inner, ps->line);
	if (strmap_put(&ps->cache, s, n, *out, out, NULL) < 0)
		return oom(ps);
	return 0;
}

/*
 * Between the command and the time, perf script prints these fields, in
 * this order, each when -F asks for it (perf_sample__fprintf_start): the
 * pid or tid ("8090"), or both ("8090/8091"); the cpu ("[001]"); the
 * flags of +misc, joined and padded to six columns ("K", "U", "KUH" for
 * the hypervisor, "KGg" for a guest's user space; "M", "E", "S", "p" on
 * records); the time of day of +tod ("2024-03-15 10:20:30.123456", with
 * nine digits under --ns, or "disabled" when the recording kept no clock
 * data, "failed" when it could not be converted). Each skip_* reads its
 * field at s[i..n), which a space must end, and returns where the next
 * field starts, or i when the field is not there.
 */
static size_t field_end(const char *s, size_t n, size_t i, size_t j)
{
	return j > i && j < n && is_space((unsigned char)s[j]) ? skip_spaces(s, n, j) : i;
}

static size_t skip_pid(const char *s, size_t n, size_t i)
{
	size_t j = skip_digits(s, n, i), k;

	if (j > i && j < n && s[j] == '/') {
		if ((k = skip_digits(s, n, j + 1)) == j + 1)
			return i;
		j = k;
	}
	return field_end(s, n, i, j);
}

static size_t skip_cpu(const char *s, size_t n, size_t i)
{
	size_t j;

	if (i >= n || s[i] != '[' || (j = skip_digits(s, n, i + 1)) == i + 1 || j >= n ||
	    s[j] != ']')
		return i;
	return field_end(s, n, i, j + 1);
}

/*
 * The flags: perf joins them ("KGg"); they are read apart too ("K U H").
 * Six letters at most in all, as perf pads them to six columns, so that
 * a line of one-letter words costs no more than any other to try.
 */
#define MAX_MISC_FLAGS 6

static size_t skip_misc_flags(const char *s, size_t n, size_t i)
{
	static const char flags[] = "KUHGgMESp";
	size_t letters = 0, j, k;

	for (;;) {
		k = i;
		while (k < n && k - i < MAX_MISC_FLAGS && memchr(flags, s[k], sizeof(flags) - 1))
			k++;
		if (letters + (k - i) > MAX_MISC_FLAGS || (j = field_end(s, n, i, k)) == i)
			return i;
		letters += k - i;
		i = j;
	}
}

/* Digits, then `sep` and digits, twice: "2024-03-15", "10:20:30". */
static size_t skip_triple(const char *s, size_t n, size_t i, char sep)
{
	size_t j = i, k;

	for (int part = 0; part < 3; part++) {
		if (part && (j >= n || s[j++] != sep))
			return i;
		if ((k = skip_digits(s, n, j)) == j)
			return i;
		j = k;
	}
	return j;
}

static size_t skip_tod(const char *s, size_t n, size_t i)
{
	static const char *const words[] = {"disabled", "failed"};
	size_t j, k;

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t len = strlen(words[w]);

		if (n - i > len && memcmp(s + i, words[w], len) == 0)
			return field_end(s, n, i, i + len);
	}
	if ((j = field_end(s, n, i, skip_triple(s, n, i, '-'))) == i ||
	    (k = skip_triple(s, n, j, ':')) == j)
		return i;
	if (k < n && s[k] == '.' && skip_digits(s, n, k + 1) > k + 1)
		k = skip_digits(s, n, k + 1);
	return field_end(s, n, i, k);
}

/*
 * The fields perf prints between the command and the time, at s[i..n):
 * where what follows them starts; *pid: whether a pid was among them.
 */
static size_t header_fields(const char *s, size_t n, size_t i, bool *pid)
{
	size_t j = skip_pid(s, n, i);

	*pid = j > i;
	return skip_tod(s, n, skip_misc_flags(s, n, skip_cpu(s, n, j)));
}

/* The end of a timestamp "secs.usecs:" at s[i..n), just after its ':'; 0: none. */
static size_t timestamp_end(const char *s, size_t n, size_t i)
{
	size_t j = skip_digits(s, n, i), k;

	if (j == i || j >= n || s[j] != '.' || (k = skip_digits(s, n, j + 1)) == j + 1 ||
	    k >= n || s[k] != ':')
		return 0;
	return k + 1;
}

/*
 * Does a field, a timestamp or what looks like a part of the time of
 * day (a date, "10:20:30") start at s[i]?
 */
static bool field_at(const char *s, size_t n, size_t i)
{
	bool pid;

	return header_fields(s, n, i, &pid) > i || timestamp_end(s, n, i) > 0 ||
	       skip_triple(s, n, i, '-') > i || skip_triple(s, n, i, ':') > i;
}

/*
 * Is a number of `digits` digits after `spaces` spaces, alone between
 * the command and the event of a header without a timestamp, the period
 * rather than the pid? perf prints each field and one space, the period
 * right-aligned in ten columns ("%10" PRIu64) and the pid in five (seven
 * since perf 6.5), so a period ends eleven columns after the command
 * and a pid six or eight; no pid has more than seven digits
 * (PID_MAX_LIMIT). Anything else is read as the script reads it, a pid.
 */
static bool lone_number_is_period(size_t spaces, size_t digits)
{
	return spaces + digits == 11 || digits > 7;
}

/*
 * The start of the last word of s[0..*n), *n cut to leave out the
 * spaces after it: in a header without a timestamp, the event.
 */
static size_t last_word(const char *s, size_t *n)
{
	size_t e;

	while (*n && is_space((unsigned char)s[*n - 1]))
		(*n)--;
	for (e = *n; e && !is_space((unsigned char)s[e - 1]); e--)
		;
	return e;
}

/*
 * Read a header printed without a timestamp (-F without time), s[0..m)
 * with its last word, the event, at e: after the command (comm_len), at
 * least one of the fields (header_fields) or the period, then "event:".
 * *period_at: where the period starts, 0 when there is none. The pid
 * comes before the cpu, flags and time of day and the period after them;
 * a number alone is the pid or the period by where it stands.
 */
static bool untimed_tail(const char *s, size_t m, size_t e, size_t comm_len, size_t *period_at)
{
	size_t i = skip_spaces(s, e, comm_len), j, k;
	bool pid;

	*period_at = 0;
	if (e <= comm_len || m < e + 2 || s[m - 1] != ':')
		return false;
	j = header_fields(s, e, i, &pid);
	if (j < e) {
		/* What is left is the period, or the header is not so. */
		if ((k = skip_digits(s, e, j)) == j || skip_spaces(s, e, k) != e)
			return false;
		*period_at = j;
		return true;
	}
	if (j == i)
		return false;
	k = skip_digits(s, e, i);
	if (pid && skip_pid(s, e, i) == j && s[k] != '/' &&
	    lone_number_is_period(i - comm_len, k - i))
		*period_at = i;
	return true;
}

/*
 * The period and event of a header without a timestamp whose command
 * ends at comm_len (see untimed_tail); *ev, *ev_len: the event without
 * its ':'. stackcollapse-perf.pl finds no event there (it looks for the
 * timestamp's ':'), but the periods of two events must not be added up,
 * so the event is read as well.
 */
static bool untimed_fields(const char *s, size_t n, size_t comm_len, size_t *period_at,
			   const char **ev, size_t *ev_len)
{
	size_t e = last_word(s, &n);

	if (!untimed_tail(s, n, e, comm_len, period_at))
		return false;
	*ev = s + e;
	*ev_len = n - 1 - e;
	return true;
}

/* The readings of a header, tried in this order (see header_comm). */
enum {
	HDR_PID,     /* command, pid, [cpu] [flags] [time of day] time */
	HDR_NO_PID,  /* command, [cpu] [flags] [time of day] time */
	HDR_UNTIMED, /* command, [pid] [cpu] [flags] [time of day] [period] event: */
	HDR_SCRIPT,  /* command, pid, anything: stackcollapse-perf.pl's */
	HDR_READINGS
};

/*
 * Does s[i..n) continue a header after a command name s[0..i), read the
 * way `reading` says? e and m: the start and end of the last word (see
 * last_word). *ts_end: just after the timestamp's ':', 0 when there is
 * none.
 */
static bool header_tail(const char *s, size_t n, size_t i, int reading, size_t e, size_t m,
			size_t *ts_end)
{
	size_t j, k, period_at;
	bool pid;

	*ts_end = 0;
	if (i >= n || !is_space((unsigned char)s[i]))
		return false;
	j = skip_spaces(s, n, i);
	switch (reading) {
	case HDR_PID:
	case HDR_NO_PID:
		k = header_fields(s, n, j, &pid);
		if ((reading == HDR_PID && !pid) || (*ts_end = timestamp_end(s, n, k)) == 0)
			return false;
		return true;
	case HDR_UNTIMED:
		return untimed_tail(s, m, e, i, &period_at);
	default:
		if ((k = skip_pid(s, n, j)) == j)
			return false;
		/* Fields not understood before the time: the period is after it still. */
		for (; k < n && !(*ts_end = timestamp_end(s, n, k)); k = skip_spaces(s, n, k))
			k = token_end(s, n, k);
		return true;
	}
}

/*
 * Length of the command name when s[0..n) is an event header, else 0.
 * *ts_end: the offset just after the timestamp's ':', or 0 when the
 * header has no timestamp.
 *
 * A command name may contain spaces and words of digits ("render pool
 * 2"), and the fields after it are each optional (-F picks them), so the
 * name is the shortest prefix that the rest of a header can follow,
 * read in turn as header_tail's readings say. With a pid after it, the
 * name is whatever comes before. Without one, nothing but a field can
 * follow the name, so the name stops at the first word shaped like one:
 * a word of digits (the pid, as stackcollapse-perf.pl reads it), a cpu,
 * flags, a date. When the words after that are no fields perf prints,
 * the name is what comes before a pid ("burn" of "burn 8090 ?? 1.5:"),
 * or the line is no header: a name swallowing a cpu, flags or a time of
 * day would be a function of its own for every sample. Only the start
 * of each run of spaces can end the name, and the fields after it are
 * a few words, so this is linear.
 */
static size_t header_comm(const char *s, size_t n, size_t *ts_end)
{
	size_t m = n, e = last_word(s, &m);

	*ts_end = 0;
	if (n == 0 || is_space((unsigned char)s[0]))
		return 0;
	for (int reading = HDR_PID; reading < HDR_READINGS; reading++) {
		for (size_t i = 1; i < n; i++) {
			if (!is_space((unsigned char)s[i]))
				continue;
			if (header_tail(s, n, i, reading, e, m, ts_end))
				return i;
			i = skip_spaces(s, n, i);
			if (reading != HDR_PID && field_at(s, n, i))
				break;
		}
	}
	return 0;
}

/*
 * The event type, as stackcollapse-perf.pl finds it: the last field when
 * it ends in ':' and follows a ':' with at most a number (the period) in
 * between: "...: 5025125 cpu-clock:" or "...: cycles:u:". That leaves out
 * a timestamp when perf script prints no event field.
 */
static bool header_event(const char *s, size_t n, const char **ev, size_t *ev_len)
{
	size_t start, i;

	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	if (n < 2 || s[n - 1] != ':')
		return false;
	start = n - 1;
	while (start && !is_space((unsigned char)s[start - 1]))
		start--;
	if (start == n - 1 || start == 0)
		return false;
	i = start;
	while (i && is_space((unsigned char)s[i - 1]))
		i--;
	while (i && is_digit((unsigned char)s[i - 1]))
		i--;
	while (i && is_space((unsigned char)s[i - 1]))
		i--;
	if (i == 0 || s[i - 1] != ':')
		return false;
	*ev = s + start;
	*ev_len = n - 1 - start;
	return true;
}

static bool ident_byte(unsigned char c)
{
	return is_digit(c) || c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/*
 * A tracepoint's event after the timestamp that ends at ts_end, maybe
 * after a period: "...: sched:sched_switch: prev_comm=...". Its fields
 * follow it, so it is not the line's last field that header_event looks
 * for, and such a recording was read as having no event at all.
 */
static bool tracepoint_event(const char *s, size_t n, size_t ts_end, const char **ev,
			     size_t *ev_len)
{
	size_t i = skip_spaces(s, n, ts_end), j, colon = 0;

	if ((j = skip_digits(s, n, i)) > i) {
		if (j >= n || !is_space((unsigned char)s[j]))
			return false;
		i = skip_spaces(s, n, j);
	}
	for (j = i; j < n && !is_space((unsigned char)s[j]); j++)
		if (s[j] == ':' && j + 1 < n && !is_space((unsigned char)s[j + 1])) {
			if (colon || j == i)
				return false;
			colon = j;
		} else if (s[j] != ':' && !ident_byte((unsigned char)s[j])) {
			return false;
		}
	if (!colon || j - 1 <= colon + 1 || s[j - 1] != ':')
		return false;
	*ev = s + i;
	*ev_len = j - 1 - i;
	return true;
}

static bool hex_token(const char *s, size_t i, size_t j)
{
	if (j == i)
		return false;
	for (; i < j; i++)
		if (!is_xdigit((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * Without -g, perf script prints a sample on one line: the header, then
 * the frame the sample hit, "ip sym (dso)", after the event field. This
 * finds that frame in a header whose timestamp ends at ts_end (0: none)
 * and returns its offset, or 0 when the line is a header alone. After the
 * timestamp come an optional period (digits), an optional event name
 * ending in ':', then the frame, which must start with a hex address:
 * anything else there (a tracepoint's fields) keeps the line a header.
 * A period is told from an address by the hex address after it.
 * *ev is the event name without its ':', NULL when there is none.
 */
static size_t oneline_frame(const char *s, size_t n, size_t ts_end,
			    const char **ev, size_t *ev_len)
{
	size_t i, j;

	*ev = NULL;
	*ev_len = 0;
	if (ts_end == 0)
		return 0;
	i = skip_spaces(s, n, ts_end);
	j = token_end(s, n, i);
	if (j > i && skip_digits(s, n, i) == j) {
		size_t i2 = skip_spaces(s, n, j), j2 = token_end(s, n, i2);

		/* A period and nothing after it: a header without event name. */
		if (j2 == i2)
			return 0;
		if (s[j2 - 1] == ':' || hex_token(s, i2, j2)) {
			i = i2;
			j = j2;
		}
	}
	if (j > i + 1 && s[j - 1] == ':') {
		*ev = s + i;
		*ev_len = j - 1 - i;
		i = skip_spaces(s, n, j);
		j = token_end(s, n, i);
	}
	return hex_token(s, i, j) ? i : 0;
}

/*
 * Append to the open event's stack. A frame must leave room for the
 * command that flush() puts at the root, so that a stack too deep is
 * reported at the frame line that made it so.
 */
static int push(parser *ps, uint32_t id, bool frame)
{
	if (frame && ps->depth + 1 >= ps->p->limits.max_depth)
		return pr_error_set(ps->err, PR_ELIMIT,
				    "cannot parse '%s': line %zu: a stack of more than %u frames "
				    "exceeds the depth limit of %u",
				    ps->p->input_name, ps->line, ps->p->limits.max_depth,
				    ps->p->limits.max_depth);
	if (ps->depth == ps->stack_cap) {
		size_t cap = ps->stack_cap ? ps->stack_cap * 2 : 64;
		uint32_t *st = realloc(ps->stack, cap * sizeof(*st));
		bool *in;
		if (!st)
			return oom(ps);
		ps->stack = st;
		if (!(in = realloc(ps->interp, cap * sizeof(*in))))
			return oom(ps);
		ps->interp = in;
		ps->stack_cap = cap;
	}
	ps->interp[ps->depth] = false;
	ps->stack[ps->depth++] = id;
	return 0;
}

/*
 * Whether dso[0..n) is CPython's interpreter: libpython3.12.so.1.0, or a
 * python3.12 binary that links it in.
 */
static bool python_dso(const char *dso, size_t n)
{
	const char *base = dso;

	for (size_t i = 0; i < n; i++)
		if (dso[i] == '/')
			base = dso + i + 1;
	n -= (size_t)(base - dso);
	return (n >= 6 && memcmp(base, "python", 6) == 0) ||
	       (n >= 9 && memcmp(base, "libpython", 9) == 0);
}

/*
 * Whether the frame just pushed runs in the interpreter (python_leaf). A
 * function perf shows inlined ("(inlined)" for its dso) is in the dso of
 * the frame after it, which holds its code.
 */
static void mark_interp(parser *ps, const char *dso, size_t dso_len)
{
	bool in;

	if (ps->in_python)
		return;
	if (dso && dso_len == 7 && memcmp(dso, "inlined", 7) == 0) {
		ps->inlined++;
		return;
	}
	in = dso && python_dso(dso, dso_len);
	for (uint32_t k = 0; k <= ps->inlined && k < ps->depth; k++)
		ps->interp[ps->depth - 1 - k] = in;
	ps->inlined = 0;
}

/*
 * Python 3.12's perf support (python -X perf) names each Python function
 * in a perf map, "py::hot:/srv/app.py", as a frame above the interpreter
 * code that runs it: every sample's self time sat in the interpreter's own
 * functions (_PyEval_EvalFrameDefault, long_mul), whose mix does not move
 * when a Python function does twice the work, and a 2x slowdown of one
 * was no finding. At the innermost such frame, the interpreter's frames
 * below it are dropped, so their time is the Python function's, as a
 * JIT's frame is the leaf; frames of other code below it (a C extension,
 * libc, the kernel) keep theirs.
 */
static void python_leaf(parser *ps, const char *sym, size_t sym_len, const char *dso,
			size_t dso_len)
{
	size_t w = 0;

	if (ps->in_python || sym_len < 5 || memcmp(sym, "py::", 4) != 0 || !dso ||
	    python_dso(dso, dso_len))
		return;
	ps->in_python = true;
	for (size_t i = 0; i < ps->depth; i++)
		if (!ps->interp[i])
			ps->stack[w++] = ps->stack[i];
	ps->depth = (uint32_t)w;
}

/*
 * The columns, set at the first event kept (or at the end, when there is
 * none): the samples, and the periods when that event's header has one.
 * A clock's period is nanoseconds of CPU time; any other event's, events.
 */
static int set_columns(parser *ps, bool periods)
{
	static const char *const types[] = {"samples", "cpu"};
	const char *units[] = {"count", "count"};
	const char *ev = ps->event.len ? ps->event.ptr : "";
	size_t n = ps->event.len;
	pr_error inner = PR_ERROR_INIT;
	int rc;

	/* "cpu-clock:u": the event a modifier asks for is the same clock. */
	for (size_t i = 0; i < ps->event.len; i++)
		if (ev[i] == ':') {
			n = i;
			break;
		}
	if ((n == 9 && memcmp(ev, "cpu-clock", 9) == 0) ||
	    (n == 10 && memcmp(ev, "task-clock", 10) == 0))
		units[1] = "nanoseconds";
	if ((rc = profile_set_value_types(ps->p, periods ? 2 : 1, types, units, &inner)) < 0)
		return model_error(ps, rc, &inner, ps->line);
	ps->periods = periods;
	return 0;
}

/* End the open event: its frames plus the command as the root. */
static int flush(parser *ps)
{
	pr_error inner = PR_ERROR_INIT;
	int64_t vals[2] = {1, ps->period};
	int rc;

	if (ps->state != EV_OPEN) {
		ps->state = EV_NONE;
		return 0;
	}
	ps->state = EV_NONE;
	if (ps->periods < 0 && (rc = set_columns(ps, ps->period >= 0)) < 0)
		return rc;
	if (ps->periods && ps->period < 0)
		return pr_error_set(ps->err, PR_EDATA,
				    "cannot parse '%s': line %zu: the event has no period, as "
				    "the ones before it have",
				    ps->p->input_name, ps->ev_line);
	if ((rc = push(ps, ps->comm_id, false)) < 0)
		return rc;
	if ((rc = profile_add_sample_leaf_first(ps->p, ps->stack, ps->depth, vals,
						&inner)) < 0)
		return model_error(ps, rc, &inner, ps->ev_line);
	return 0;
}

/*
 * The event's period: the number at `at`, right after the timestamp (or,
 * in a header without one, where untimed_fields found it), as perf
 * script prints the period field; -1 when there is none (`at` 0). In a
 * one-line event a number there may be the frame's address instead: it
 * is the period only when the frame starts after it.
 */
static int header_period(parser *ps, int64_t *out, const char *s, size_t n, size_t at,
			 size_t frame)
{
	size_t i, j;
	int64_t v = 0;

	*out = -1;
	if (at == 0)
		return 0;
	i = skip_spaces(s, n, at);
	j = skip_digits(s, n, i);
	if (j == i || (j < n && !is_space((unsigned char)s[j])) || (frame && frame <= i))
		return 0;
	for (size_t k = i; k < j; k++) {
		if (v > (INT64_MAX - 9) / 10)
			return bad_line(ps, "the event's period overflows 64 bits:", s, n);
		v = v * 10 + (s[k] - '0');
	}
	*out = v;
	return 0;
}

static int parse_frame(parser *ps, const char *s, size_t n);

/*
 * The frame of a one-line event must name a symbol: an address alone,
 * or an address and a "(dso)", is a line cut short or printed without
 * the sym field, and folding it would invent a function.
 */
static bool oneline_has_symbol(const char *s, size_t n, size_t i)
{
	size_t depth = 0, k;

	while (n > i && is_space((unsigned char)s[n - 1]))
		n--;
	i = skip_spaces(s, n, token_end(s, n, i));
	if (i >= n)
		return false;
	if (s[i] != '(')
		return true;
	for (k = i; k < n; k++) {
		if (s[k] == '(')
			depth++;
		else if (s[k] == ')' && --depth == 0)
			break;
	}
	return k + 1 < n;
}

/*
 * Does the event measure CPU time: a clock, or the cycles a plain perf
 * record counts ("cpu-clock:u": a modifier keeps the event what it is)?
 */
static bool cpu_time_event(const char *ev, size_t n)
{
	static const char *const names[] = {"cpu-clock", "task-clock", "cycles", "cpu-cycles"};
	const char *colon = memchr(ev, ':', n);

	if (colon)
		n = (size_t)(colon - ev);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(ev, names[i], n) == 0)
			return true;
	return false;
}

/* Whether s[0..n) holds the word w. */
static bool holds(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, w, k) == 0)
			return true;
	return false;
}

bool perf_event_is_cpu_time(const char *event)
{
	static const char *const counts[] = {"page-faults",      "faults",
					     "minor-faults",     "major-faults",
					     "context-switches", "cs",
					     "cpu-migrations",   "migrations",
					     "alignment-faults", "emulation-faults",
					     "bpf-output",       "dummy",
					     "branches",         "branch-instructions",
					     "branch-misses",    "cache-misses",
					     "cache-references", "mem-loads",
					     "mem-stores"};
	size_t n = strlen(event);
	const char *colon = memchr(event, ':', n);

	/* "sched:sched_switch": a tracepoint; "cycles:u" is an event and its modifiers. */
	if (colon && colon + 1 < event + n) {
		const char *m = colon + 1;
		while (*m && strchr("ukhpPGHISDWebR", *m))
			m++;
		if (*m)
			return false;
	}
	if (colon)
		n = (size_t)(colon - event);
	if (cpu_time_event(event, n))
		return true;
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (strlen(counts[i]) == n && memcmp(event, counts[i], n) == 0)
			return false;
	/* L1-dcache-load-misses, LLC-loads, dTLB-store-misses, ...: the cache events. */
	return !(holds(event, n, "cache") || holds(event, n, "TLB") || holds(event, n, "LLC-") ||
		 holds(event, n, "-misses"));
}

const char *perf_event_text(char out[80], const char *event)
{
	size_t n = strlen(event);
	bool plain = n > 0 && n < 64;

	for (size_t i = 0; plain && i < n; i++)
		plain = (event[i] >= 'a' && event[i] <= 'z') ||
			(event[i] >= 'A' && event[i] <= 'Z') || strchr("_.:-", event[i]);
	return plain ? event : redact_excerpt(out, 80, event, n);
}

/* perf_event_is_cpu_time of ev[0..n). */
static bool event_is_time(const char *ev, size_t n)
{
	char e[128];

	if (n >= sizeof(e))
		return true;
	memcpy(e, ev, n);
	e[n] = '\0';
	return perf_event_is_cpu_time(e);
}

/*
 * Whether event ev[0..n), seen after `kept`, is the one to keep instead:
 * a clock or cycles after an event that is neither, or any event that
 * may count CPU time (a PMU's "cpu_core/cycles/") after one that surely
 * does not (sched:sched_switch printed first).
 */
static bool better_event(const char *kept, size_t klen, const char *ev, size_t n)
{
	if (cpu_time_event(kept, klen))
		return false;
	return cpu_time_event(ev, n) || (!event_is_time(kept, klen) && event_is_time(ev, n));
}

/*
 * The bit of parser.prefixes for an event that is the kept one up to a
 * ':': one per ':' in it. 0 (never seen) past 64 of them.
 */
static uint64_t prefix_bit(const char *ev, size_t ev_len)
{
	size_t colons = 0;

	for (size_t i = 0; i < ev_len; i++)
		colons += ev[i] == ':';
	return colons < 64 ? (uint64_t)1 << colons : 0;
}

/* Is the event at ev, in the line s[0..n), followed by ':' and a space? */
static bool event_ended(const char *s, size_t n, const char *ev, size_t ev_len)
{
	size_t k = (size_t)(ev - s) + ev_len + 1;

	return k < n && is_space((unsigned char)s[k]);
}

/*
 * A header line; with a frame after the event (perf record without -g),
 * a whole sample: the command, then that frame.
 */
static int parse_header(parser *ps, const char *s, size_t n, size_t comm_len,
			size_t ts_end)
{
	const char *ev;
	size_t ev_len, frame, period_at = ts_end;
	bool has_event, prefix;
	int rc;

	if ((rc = flush(ps)) < 0)
		return rc;
	frame = oneline_frame(s, n, ts_end, &ev, &ev_len);
	if (frame && !oneline_has_symbol(s, n, frame))
		return bad_line(ps, "one-line event has no symbol after the address:", s, n);
	has_event = frame ? ev != NULL : header_event(s, n, &ev, &ev_len);
	if (!frame && !has_event && ts_end)
		has_event = tracepoint_event(s, n, ts_end, &ev, &ev_len);
	if (!frame && !has_event && ts_end == 0 &&
	    untimed_fields(s, n, comm_len, &period_at, &ev, &ev_len))
		has_event = true;
	prefix = has_event && ev_len < ps->event.len && ps->event.ptr[ev_len] == ':' &&
		 memcmp(ps->event.ptr, ev, ev_len) == 0;
	/*
	 * The last line, with no newline after it, is a header without an
	 * event, though the headers before it had theirs: the input was cut
	 * inside it, and kept, its sample would be the command alone with
	 * maybe a period cut short. So it is when its event is the start of
	 * the one kept ("cpu-clock" of "cpu-clock:ppp"), unless the space
	 * perf prints after an event's ':' follows it, or an earlier header
	 * had that event: then it is an event of its own.
	 */
	if (ps->cut && ps->event.len &&
	    (!has_event || (prefix && !event_ended(s, n, ev, ev_len) &&
			    !(prefix_bit(ev, ev_len) & ps->prefixes))))
		return bad_line(ps, "input ends in the middle of a header line:", s, n);
	if (prefix)
		ps->prefixes |= prefix_bit(ev, ev_len);
	if (has_event) {
		if (ps->event.len == 0) {
			if (buf_put(&ps->event, ev, ev_len) < 0)
				return oom(ps);
		} else if (ps->event.len != ev_len || memcmp(ps->event.ptr, ev, ev_len)) {
			if (!ps->cpu_event.len &&
			    better_event(ps->event.ptr, ps->event.len, ev, ev_len) &&
			    buf_put(&ps->cpu_event, ev, ev_len) < 0)
				return oom(ps);
			ps->p->other_events++;
			ps->state = frame ? EV_NONE : EV_SKIP;
			ps->after_frame = frame != 0;
			return 0;
		}
	}
	buf_reset(&ps->name);
	if (buf_put(&ps->name, s, comm_len) < 0)
		return oom(ps);
	for (size_t i = 0; i < ps->name.len; i++)
		if (ps->name.ptr[i] == ' ')
			ps->name.ptr[i] = '_';
	ps->java = strncmp(ps->name.ptr, "java", 4) == 0;
	if ((rc = intern(ps, &ps->comm_id, ps->name.ptr, ps->name.len)) < 0)
		return rc;
	if ((rc = header_period(ps, &ps->period, s, n, period_at, frame)) < 0)
		return rc;
	ps->state = EV_OPEN;
	ps->ev_line = ps->line;
	ps->depth = 0;
	ps->in_python = false;
	ps->inlined = 0;
	if (!frame)
		return 0;
	if ((rc = parse_frame(ps, s + frame, n - frame)) < 0 || (rc = flush(ps)) < 0)
		return rc;
	ps->after_frame = true;
	return 0;
}

/* Does s[0..n) look like a Go method, "pkg.(*T).Method"? */
static bool go_method(const char *s, size_t n)
{
	const char *open = NULL;

	for (size_t i = 0; i + 1 < n; i++) {
		if (!open && s[i] == '.' && s[i + 1] == '(')
			open = s + i;
		else if (open && s + i >= open + 2 && s[i] == ')' && s[i + 1] == '.')
			return true;
	}
	return false;
}

/* Does s[0..i) end with the word "operator" (not "cooperator")? */
static bool after_operator(const char *s, size_t i)
{
	char before = i > 8 ? s[i - 9] : ':';

	return i >= 8 && memcmp(s + i - 8, "operator", 8) == 0 &&
	       !is_digit((unsigned char)before) &&
	       !((before | 0x20) >= 'a' && (before | 0x20) <= 'z') && before != '_';
}

/*
 * The length of a C++ operator's symbol at s[i..n), just after the word
 * "operator": "<", "<<=", "->*", ">" and the like, whose angle brackets
 * open and close no template arguments. 0 when there is none.
 */
static size_t operator_symbol(const char *s, size_t n, size_t i)
{
	size_t k = i;

	if (after_operator(s, i))
		while (k < n && s[k] && strchr("<>=-*", s[k]))
			k++;
	return k - i;
}

/* Fold one symbol (a piece of an "a->b" chain) into ps->name and intern it. */
static int fold_symbol(parser *ps, uint32_t *out, const char *sym, size_t sym_len,
		       const char *dso, size_t dso_len)
{
	static const char anon[] = "anonymous namespace)";
	buf *b = &ps->name;
	size_t cut, w;

	buf_reset(b);
	if (sym_len == 0 || (sym_len == 9 && memcmp(sym, "[unknown]", 9) == 0)) {
		const char *slash;

		/* A binary replaced since it was mapped; the name is the same. */
		if (dso_len > 10 && memcmp(dso + dso_len - 10, " (deleted)", 10) == 0)
			dso_len -= 10;
		if (dso_len == 0 || (dso_len == 9 && memcmp(dso, "[unknown]", 9) == 0)) {
			dso = "unknown";
			dso_len = 7;
		}
		/* The basename: everything after the last '/'. */
		for (slash = dso + dso_len; slash > dso && slash[-1] != '/'; slash--)
			;
		if (buf_putc(b, '[') < 0 ||
		    buf_put(b, slash, (size_t)(dso + dso_len - slash)) < 0 ||
		    buf_putc(b, ']') < 0)
			return oom(ps);
	} else if (buf_put(b, sym, sym_len) < 0) {
		return oom(ps);
	}

	for (size_t i = 0; i < b->len; i++)
		if (b->ptr[i] == ';')
			b->ptr[i] = ':';
	if (!go_method(b->ptr, b->len)) {
		/*
		 * A '(' inside brackets, braces or a template's angle
		 * brackets is part of the name: Go's
		 * "main.Apply[go.shape.func(int) int_0]", C++'s
		 * "main::{lambda(int)#2}::operator()" and
		 * "std::_Function_handler<long (long), main::{lambda(long)#1}>
		 * ::_M_invoke". Cut there, two functions would become one.
		 * The '<' and '>' of an operator's name ("operator<<") are no
		 * brackets.
		 */
		size_t depth = 0, op;

		for (cut = 0; cut < b->len; cut++) {
			char c = b->ptr[cut];

			if ((op = operator_symbol(b->ptr, b->len, cut)) > 0)
				cut += op - 1;
			else if (c == '[' || c == '{' || c == '<')
				depth++;
			else if ((c == ']' || c == '}' || c == '>') && depth)
				depth--;
			else if (c == '(' && !depth &&
				 !(b->len - cut - 1 >= sizeof(anon) - 1 &&
				   memcmp(b->ptr + cut + 1, anon, sizeof(anon) - 1) == 0))
				break;
		}
		b->len = cut;
	}
	w = 0;
	for (size_t i = 0; i < b->len; i++)
		if (b->ptr[i] != '"' && b->ptr[i] != '\'')
			b->ptr[w++] = b->ptr[i];
	b->len = w;
	b->ptr[b->len] = '\0';
	if (ps->java && b->len && b->ptr[0] == 'L' && memchr(b->ptr, '/', b->len)) {
		memmove(b->ptr, b->ptr + 1, b->len);
		b->len--;
	}
	return intern(ps, out, b->ptr, b->len);
}

/*
 * A frame line: whitespace, a hex address, the symbol (maybe with
 * "+0xoff", maybe absent) and the dso in parentheses at the end (maybe
 * absent, as with perf script -F ip,sym).
 */
static int parse_frame(parser *ps, const char *s, size_t n)
{
	const char *sym, *dso = NULL;
	size_t i, j, sym_len, dso_len = 0;
	int rc;

	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	/*
	 * A frame line always ends in its "(dso)"; one that does not, at
	 * the very end of the input, was cut off (a copy interrupted, a
	 * disk full) and would fold into a half name.
	 */
	if (ps->cut && n && s[n - 1] != ')')
		return bad_line(ps, "input ends in the middle of a frame line:", s, n);
	i = skip_spaces(s, n, 0);
	j = i;
	while (j < n && is_xdigit((unsigned char)s[j]))
		j++;
	if (j == i || (j < n && !is_space((unsigned char)s[j])))
		return bad_line(ps, "frame line does not start with an address:", s + i, n - i);
	i = skip_spaces(s, n, j);
	sym = s + i;
	sym_len = n - i;

	/* The dso: the balanced "(...)" at the end, after a space. */
	if (sym_len && sym[sym_len - 1] == ')') {
		size_t k = sym_len - 1, depth = 0;
		for (;;) {
			if (sym[k] == ')')
				depth++;
			else if (sym[k] == '(' && --depth == 0)
				break;
			if (k == 0)
				break;
			k--;
		}
		if (depth == 0 && (k == 0 || is_space((unsigned char)sym[k - 1]))) {
			dso = sym + k + 1;
			dso_len = sym_len - k - 2;
			sym_len = k;
			while (sym_len && is_space((unsigned char)sym[sym_len - 1]))
				sym_len--;
		}
	}
	/*
	 * A ')' of the name's own ("main::{lambda(int)" of a lambda) is no
	 * dso: a last line without one, where the frames before had theirs,
	 * was cut inside its name.
	 */
	if (ps->cut && !dso && ps->dsos)
		return bad_line(ps, "input ends in the middle of a frame line:", s, n);
	if (dso)
		ps->dsos = true;

	/* "+0x1f" at the end: perf prints offsets since Linux 4.8. */
	for (size_t k = sym_len; k > 0; k--) {
		unsigned char c = (unsigned char)sym[k - 1];
		if (is_digit(c) || (c >= 'a' && c <= 'f'))
			continue;
		if (c == 'x' && k >= 3 && k < sym_len && sym[k - 2] == '0' &&
		    sym[k - 3] == '+')
			sym_len = k - 3;
		break;
	}
	/*
	 * Perl's split drops empty trailing pieces: "a->" is just "a". Not
	 * "Ptr::operator->", a function of its own: stackcollapse-perf.pl
	 * makes it "Ptr::operator", the name "Ptr::operator()" also gets.
	 */
	while (sym_len >= 2 && sym[sym_len - 1] == '>' && sym[sym_len - 2] == '-' &&
	       !after_operator(sym, sym_len - 2))
		sym_len -= 2;
	if (sym_len && sym[0] == '(' &&
	    !(sym_len >= 21 && memcmp(sym + 1, "anonymous namespace)", 20) == 0))
		return 0;

	/*
	 * "a->b->c": the pieces go root-ward first in stackcollapse-perf's
	 * output ("a;b;c", its "_[i]" marks left out), so on this
	 * leaf-first stack they are pushed in reverse, scanning the chain
	 * from its end.
	 */
	{
		const char *end = sym + sym_len;
		const char *piece_end = end;
		const char *q = end;

		for (;;) {
			const char *arrow = NULL;
			for (const char *t = q; t > sym + 1; t--)
				if (t[-1] == '>' && t[-2] == '-' &&
				    !after_operator(sym, (size_t)(t - 2 - sym))) {
					arrow = t - 2;
					break;
				}
			const char *piece = arrow ? arrow + 2 : sym;
			uint32_t id;

			if ((rc = fold_symbol(ps, &id, piece, (size_t)(piece_end - piece),
					      dso, dso_len)) < 0)
				return rc;
			python_leaf(ps, piece, (size_t)(piece_end - piece), dso, dso_len);
			if ((rc = push(ps, id, true)) < 0)
				return rc;
			mark_interp(ps, dso, dso_len);
			if (!arrow)
				break;
			piece_end = arrow;
			q = arrow;
		}
	}
	return 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_space((unsigned char)s[i]))
			return false;
	return true;
}

/* Does an indented s[0..n) start with "hex-address whitespace"? */
static bool frame_shaped(const char *s, size_t n)
{
	size_t i = skip_spaces(s, n, 0), j = i;

	while (j < n && is_xdigit((unsigned char)s[j]))
		j++;
	return j > i && j < n && is_space((unsigned char)s[j]);
}

/*
 * Is the indented s[0..n) a source line as perf script -F +srcline
 * prints it under a frame: "file:line", maybe with " (discriminator N)",
 * or "dso[address]" where the line is unknown ("[kernel.kallsyms][ff..]",
 * "libc.so.6[2f440]"); either maybe with " (inlined)" after it?
 */
static bool srcline_shaped(const char *s, size_t n)
{
	static const char disc[] = " (discriminator ", inl[] = " (inlined)";
	size_t i = skip_spaces(s, n, 0), k;

	if (i == 0)
		return false;
	while (n > i && is_space((unsigned char)s[n - 1]))
		n--;
	if (n - i > sizeof(inl) - 1 && memcmp(s + n - (sizeof(inl) - 1), inl, sizeof(inl) - 1) == 0)
		n -= sizeof(inl) - 1;
	if (n > i && s[n - 1] == ']') {
		/* The address: the last "[...]", hex, maybe with "0x", after a name. */
		for (k = n - 1; k > i && s[k - 1] != '['; k--)
			;
		if (k < i + 2)
			return false;
		if (n - 1 - k > 2 && s[k] == '0' && s[k + 1] == 'x')
			k += 2;
		return hex_token(s, k, n - 1);
	}
	/* A discriminator's ")" and digits, then the ":line" before it. */
	if (n > i && s[n - 1] == ')') {
		k = n - 1;
		while (k > i && is_digit((unsigned char)s[k - 1]))
			k--;
		if (k == n - 1 || k - i < sizeof(disc) - 1 ||
		    memcmp(s + k - (sizeof(disc) - 1), disc, sizeof(disc) - 1) != 0)
			return false;
		n = k - (sizeof(disc) - 1);
	}
	k = n;
	while (k > i && is_digit((unsigned char)s[k - 1]))
		k--;
	return k < n && k > i && s[k - 1] == ':';
}

/*
 * Is s[0..n) (leading spaces already skipped) a side-band record, "comm
 * pid[/tid] [cpu] time: PERF_RECORD_..." with whichever of the fields
 * -F prints? comm and ts are header_comm's answers for the line: its
 * fields are matched first, so a command named PERF_RECORD_x still has
 * samples.
 */
static bool sideband(const char *s, size_t n, size_t comm, size_t ts)
{
	static const char rec[] = "PERF_RECORD_";
	size_t k;

	if (comm && ts) {
		k = skip_spaces(s, n, ts);
		return n - k >= sizeof(rec) - 1 && memcmp(s + k, rec, sizeof(rec) - 1) == 0;
	}
	/*
	 * Without a timestamp to anchor it, the record is a word anywhere
	 * after the first: after a pid ("burn 17 PERF_RECORD_MMAP2 ..."),
	 * where there is none to print ("swapper PERF_RECORD_MMAP -1/0:
	 * ..."), and where the pid is -1, which is no header's pid (":-1 -1
	 * [001] 1.000001: PERF_RECORD_SWITCH_CPU_WIDE OUT next pid/tid: 0/0 "
	 * would otherwise read as the command of a header ending in "0/0 ").
	 * A line of no other fields is one too: --show-round-events prints
	 * "PERF_RECORD_FINISHED_ROUND" alone.
	 */
	for (k = 0; k + sizeof(rec) - 1 <= n; k++)
		if ((k == 0 ? !comm : is_space((unsigned char)s[k - 1])) &&
		    memcmp(s + k, rec, sizeof(rec) - 1) == 0)
			return true;
	return false;
}

static int parse_line(parser *ps, const char *s, size_t n)
{
	size_t comm_len, ts_end, i;
	bool after = ps->after_frame, indented;
	const char *ev;
	size_t ev_len;
	int rc;

	ps->after_frame = false;
	if (n && s[n - 1] == '\r')
		n--;
	if (n == 0)
		return flush(ps);
	/*
	 * Spaces alone, at the very end of the input and inside an event, are
	 * the indentation of a frame line cut off before its address: kept,
	 * the event's stack would be stored short of its callers.
	 */
	if (ps->cut && ps->state == EV_OPEN && blank(s, n))
		return bad_line(ps, "input ends in the middle of a frame line:", s, n);
	if (s[0] == '#' || blank(s, n))
		return 0;
	/*
	 * perf script -F +srccode prints the sampled source line after an
	 * event, unindented: "|10   unsigned long compute_tax(long n) {...".
	 * Read as a header, it was "the event has no period".
	 */
	if (s[0] == '|' && n > 1 && s[1] >= '0' && s[1] <= '9') {
		size_t d = 1;
		while (d < n && s[d] >= '0' && s[d] <= '9')
			d++;
		if (d == n || s[d] == ' ')
			return 0;
	}
	indented = is_space((unsigned char)s[0]);
	if (indented && after && !frame_shaped(s, n) && srcline_shaped(s, n)) {
		ps->after_frame = true; /* inline chains print one per piece */
		return 0;
	}
	if (indented && ps->state == EV_SKIP)
		return 0;
	/* Inside an event an indented line is a frame, never a header or a record. */
	if (indented && ps->state == EV_OPEN) {
		if ((rc = parse_frame(ps, s, n)) == 0)
			ps->after_frame = true;
		return rc;
	}
	/*
	 * A header, a side-band record, or (without -g, where perf pads the
	 * command to 16 columns) a one-line event that starts with spaces.
	 */
	i = skip_spaces(s, n, 0);
	comm_len = header_comm(s + i, n - i, &ts_end);
	if (sideband(s + i, n - i, comm_len, ts_end)) {
		rc = flush(ps);
		ps->state = EV_RECORD;
		return rc;
	}
	if (indented) {
		if (comm_len && oneline_frame(s + i, n - i, ts_end, &ev, &ev_len))
			return parse_header(ps, s + i, n - i, comm_len, ts_end);
		/* A record printed on several lines (PERF_RECORD_NAMESPACES). */
		if (ps->state == EV_RECORD)
			return 0;
		return bad_line(ps, "frame line outside an event (no header before it):", s, n);
	}
	if (!comm_len)
		return bad_line(ps, "not an event header, frame, comment or blank line:", s, n);
	return parse_header(ps, s, n, comm_len, ts_end);
}

/*
 * One reading of the print; `keep`, when not NULL, is the event type to
 * keep from the start. *cpu_event gets the first CPU-time event of those
 * left out (NULL when none), the caller's to free.
 */
static int parse_once(profile **out, char **cpu_event, const uint8_t *data, size_t len,
		      const char *name, const profile_limits *lim, const char *keep,
		      pr_error *err)
{
	parser ps = {0};
	const char *text = (const char *)data;
	size_t pos = 0;
	int rc;

	*out = NULL;
	*cpu_event = NULL;
	strmap_init(&ps.cache);
	buf_init(&ps.name, SIZE_MAX);
	buf_init(&ps.event, SIZE_MAX);
	buf_init(&ps.cpu_event, SIZE_MAX);
	ps.err = err;
	ps.periods = -1;
	if ((rc = profile_new(&ps.p, PROFILE_FMT_PERF, name, lim, err)) < 0)
		goto out;
	if (keep && buf_puts(&ps.event, keep) < 0) {
		rc = oom(&ps);
		goto out;
	}

	if (len >= 8 && memcmp(text, "PERFILE2", 8) == 0) {
		rc = pr_error_set(err, PR_EDATA,
				  "cannot parse '%s': this is a perf.data file, not perf script "
				  "text (convert it with 'perf script -i')",
				  ps.p->input_name);
		goto out;
	}
	if ((rc = profile_reject_nul(text, len, ps.p->input_name, "perf script text", err)) < 0)
		goto out;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		ps.line++;
		ps.cut = !nl;
		if ((rc = parse_line(&ps, text + pos, end - pos)) < 0)
			goto out;
		pos = end + 1;
	}
	if ((rc = flush(&ps)) < 0 || (ps.periods < 0 && (rc = set_columns(&ps, false)) < 0))
		goto out;
	if (ps.event.len) {
		size_t n = ps.event.len < sizeof(ps.p->event) ? ps.event.len
							     : sizeof(ps.p->event) - 1;
		memcpy(ps.p->event, ps.event.ptr, n);
		ps.p->event[n] = '\0';
	}
	if (ps.cpu_event.len && !(*cpu_event = buf_detach(&ps.cpu_event, NULL))) {
		rc = oom(&ps);
		goto out;
	}
	*out = ps.p;
	ps.p = NULL;
	rc = 0;
out:
	profile_free(ps.p);
	strmap_release(&ps.cache);
	buf_release(&ps.name);
	buf_release(&ps.event);
	buf_release(&ps.cpu_event);
	free(ps.stack);
	free(ps.interp);
	return rc;
}

int perf_parse(profile **out, const uint8_t *data, size_t len,
	       const char *name, const profile_limits *lim, pr_error *err)
{
	char *cpu_event = NULL, *unused = NULL;
	int rc;

	rc = parse_once(out, &cpu_event, data, len, name, lim, NULL, err);
	/* A CPU-time event came after another: read again, keeping it (see the top). */
	if (rc == 0 && cpu_event) {
		profile_free(*out);
		rc = parse_once(out, &unused, data, len, name, lim, cpu_event, err);
	}
	free(cpu_event);
	free(unused);
	return rc;
}

bool perf_sniff(const uint8_t *data, size_t len)
{
	const char *text = (const char *)data;
	size_t n = len > SNIFF_BYTES ? SNIFF_BYTES : len, pos = 0, i, j, c, ts, ev_len;
	const char *ev;
	bool header = false, record = false; /* record: a side-band record seen */

	if (!data || n == 0 || memchr(text, '\0', n))
		return false;
	while (pos < n) {
		const char *nl = memchr(text + pos, '\n', n - pos);
		size_t end = nl ? (size_t)(nl - text) : n;
		const char *s = text + pos;
		size_t k = end - pos;

		/*
		 * The window ends inside a line. A system-wide recording
		 * printed with its side-band records can open with hundreds
		 * of KiB of them before the first sample: records alone, and
		 * nothing that is not perf script, are enough.
		 */
		if (!nl && n < len)
			return record && !header;
		pos = end + 1;
		if (k && s[k - 1] == '\r')
			k--;
		if (!header) {
			if (k == 0 || s[0] == '#' || blank(s, k))
				continue;
			i = skip_spaces(s, k, 0);
			c = header_comm(s + i, k - i, &ts);
			if (sideband(s + i, k - i, c, ts)) {
				record = true;
				continue;
			}
			/* A one-line event (no -g), maybe padded, is enough. */
			if (c && (j = oneline_frame(s + i, k - i, ts, &ev, &ev_len)) != 0)
				return oneline_has_symbol(s + i, k - i, j);
			/* The rest of a record printed on several lines. */
			if (record && i > 0)
				continue;
			if (!c || i > 0)
				return false;
			header = true;
			continue;
		}
		/* The line after the header: an indented "hex symbol". */
		if (k == 0 || !is_space((unsigned char)s[0]))
			return false;
		i = skip_spaces(s, k, 0);
		j = i;
		while (j < k && is_xdigit((unsigned char)s[j]))
			j++;
		return j > i && j < k && is_space((unsigned char)s[j]) &&
		       skip_spaces(s, k, j) < k;
	}
	return record && !header;
}
