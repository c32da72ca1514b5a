/*
 * format.c: gunzip, detect and dispatch to the right parser (see format.h).
 */
#include "pipeline/format.h"
#include "pipeline/folded.h"
#include "pipeline/gunzip.h"
#include "pipeline/jfr.h"
#include "pipeline/perf.h"
#include "pipeline/pprof.h"
#include "pipeline/speedscope.h"
#include "pipeline/v8heap.h"
#include "pipeline/v8.h"

#include <string.h>

bool format_is_gzip(const uint8_t *data, size_t len)
{
	return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/*
 * V8's .heapsnapshot ({"snapshot": {"meta": ...), every object of a heap
 * at one moment: its "nodes" array made it a .cpuprofile to the
 * sniffer, refused for a reason that said nothing of what it was.
 */
static bool heap_snapshot(const uint8_t *data, size_t len)
{
	size_t i = 0, n = len < 256 ? len : 256;

	while (i < n && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
		i++;
	if (i >= n || data[i++] != '{')
		return false;
	while (i < n && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
		i++;
	return n - i >= 10 && memcmp(data + i, "\"snapshot\"", 10) == 0;
}

profile_format format_detect(const uint8_t *data, size_t len)
{
	/*
	 * Text formats first: protobuf is the permissive fallback. speedscope
	 * and V8 heap profiles before V8 .cpuprofile, whose sniffer takes any
	 * object with "nodes" in its first 4 KiB, as a speedscope file or a
	 * heap profile with a function of that name has.
	 */
	/* Binary, and never text or protobuf: its magic alone says what it is. */
	if (jfr_sniff(data, len))
		return PROFILE_FMT_JFR;
	if (speedscope_sniff(data, len))
		return PROFILE_FMT_SPEEDSCOPE;
	if (v8heap_sniff(data, len))
		return PROFILE_FMT_V8HEAP;
	if (heap_snapshot(data, len))
		return PROFILE_FMT_AUTO; /* known_other says what it is */
	if (v8_sniff(data, len))
		return PROFILE_FMT_V8;
	if (perf_sniff(data, len))
		return PROFILE_FMT_PERF;
	if (folded_sniff(data, len))
		return PROFILE_FMT_FOLDED;
	if (pprof_sniff(data, len))
		return PROFILE_FMT_PPROF;
	return PROFILE_FMT_AUTO;
}

static bool starts_with(const uint8_t *data, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(data, prefix, n) == 0;
}

/* starts_with, ignoring the case of ASCII letters; `prefix` is lower case. */
static bool ci_starts_with(const uint8_t *data, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	if (len < n)
		return false;
	for (size_t k = 0; k < n; k++) {
		uint8_t c = data[k];
		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c + ('a' - 'A'));
		if (c != (uint8_t)prefix[k])
			return false;
	}
	return true;
}

/* Does data[0..len) hold `needle` within its first `within` bytes? */
static bool holds(const uint8_t *data, size_t len, size_t within, const char *needle)
{
	size_t n = strlen(needle);

	len = len < within ? len : within;
	for (size_t i = 0; n && i + n <= len; i++)
		if (data[i] == (uint8_t)needle[0] && memcmp(data + i, needle, n) == 0)
			return true;
	return false;
}

/*
 * gperftools' CPU profile (libprofiler, CPUPROFILE=...) in its legacy
 * binary form: a header of machine words 0, 3 (words in the header), 0
 * (version), the period, 0, in 64- or 32-bit words of either byte order.
 */
static bool gperftools_cpu(const uint8_t *data, size_t len)
{
	static const uint8_t le64[24] = {[8] = 3}, be64[24] = {[15] = 3};
	static const uint8_t le32[12] = {[4] = 3}, be32[12] = {[7] = 3};

	if (len >= 24 && (memcmp(data, le64, 24) == 0 || memcmp(data, be64, 24) == 0))
		return true;
	return len >= 12 && (memcmp(data, le32, 12) == 0 || memcmp(data, be32, 12) == 0);
}

/* Does data[i..) start with `n` decimal digits or more, then `c`? Its end, or 0. */
static size_t digits_then(const uint8_t *data, size_t len, size_t i, size_t n, char c)
{
	size_t j = i;

	while (j < len && data[j] >= '0' && data[j] <= '9')
		j++;
	return j - i >= n && j < len && data[j] == c ? j + 1 : 0;
}

/*
 * `perf report --stdio`: its header ("# To display the perf.data header
 * info", "# Samples: 1K of event 'cpu-clock'", the column titles), or
 * with -q none, a first line "    62.35%  burn  burn  [.] leaf_hash".
 * `i` is past the leading whitespace.
 */
static bool perf_report(const uint8_t *data, size_t len, size_t i)
{
	size_t j, eol;

	if (starts_with(data, len, "# To display the perf.data header info") ||
	    starts_with(data, len, "# ========\n# captured on"))
		return true;
	if (data[0] == '#' && holds(data, len, 65536, "\n# Samples: ") &&
	    (holds(data, len, 65536, "\n# Overhead ") || holds(data, len, 65536, "\n# Children ")))
		return true;
	if (!(j = digits_then(data, len, i, 1, '.')) || !(j = digits_then(data, len, j, 1, '%')) ||
	    j >= len || (data[j] != ' ' && data[j] != '\t'))
		return false;
	for (eol = j; eol < len && data[eol] != '\n'; eol++)
		;
	return holds(data + j, eol - j, eol - j, "[.] ") ||
	       holds(data + j, eol - j, eol - j, "[k] ");
}

/*
 * bpftrace's map print at exit: "Attaching 2 probes..." unless -q, then
 * "@[\n    leaf+38\n    main+79\n]: 42" or "@name[key]: 42" per key; or
 * its JSON form (-f json), whose first record is {"type": "attached_probes"}
 * or a map. `i` is past the leading whitespace.
 */
static bool bpftrace_print(const uint8_t *data, size_t len, size_t i)
{
	size_t j = i + 1;

	if (starts_with(data + i, len - i, "Attaching ") && holds(data + i, len - i, 64, " probe"))
		return true;
	if (data[i] == '{')
		return holds(data + i, len - i, 64, "\"type\": \"attached_probes\"") ||
		       holds(data + i, len - i, 64, "\"type\": \"map\"");
	if (data[i] != '@')
		return false;
	while (j < len && (((data[j] | 0x20) >= 'a' && (data[j] | 0x20) <= 'z') ||
			   (data[j] >= '0' && data[j] <= '9') || data[j] == '_'))
		j++;
	return j < len && (data[j] == '[' || data[j] == ':');
}

/*
 * What the bytes are when they are something people mistake for a
 * profile profreg reads (NULL when nothing known): the reason for the
 * error, with what to fetch or run instead.
 */
static const char *known_other(const uint8_t *data, size_t len)
{
	size_t i = 0, start;

	/* A byte order mark is no content: the text readers skip it. */
	if (len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf)
		i = 3;
	start = i;
	while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' ||
			   data[i] == '\t'))
		i++;
	/*
	 * Every format could be empty: which one it was meant to be, none
	 * says. Folded stacks and perf script are the formats whose empty
	 * file is an empty capture (the others refuse it).
	 */
	if (i == len)
		return len > start
			       ? "only whitespace, no profile (give --format folded to store it as "
				 "an empty capture)"
			       : "empty, no profile (give --format folded to store it as an empty "
				 "capture)";
	/* tcmalloc's heap profile has Go's first words; its sampling is its own. */
	if (gperftools_cpu(data, len) ||
	    (starts_with(data, len, "heap profile: ") &&
	     (holds(data, len, 128, "] @ heapprofile") || holds(data, len, 128, "] @ heap_v2/"))))
		return "a gperftools profile in its legacy format; convert it with 'go tool "
		       "pprof -proto PROGRAM FILE'";
	if (starts_with(data, len, "heap profile: ") ||
	    starts_with(data, len, "goroutine profile: ") ||
	    starts_with(data, len, "threadcreate profile: ") ||
	    starts_with(data, len, "--- mutex:") || starts_with(data, len, "--- contention:"))
		return "Go's text form of a profile (?debug=1); fetch it without debug= for pprof";
	if (starts_with(data, len, "goroutine ") && holds(data, len, 64, "]:\n"))
		return "a Go goroutine dump (?debug=2); fetch /debug/pprof/goroutine without "
		       "debug= for pprof";
	if (starts_with(data, len, "go 1.") && holds(data, len, 16, " trace"))
		return "a Go execution trace, not a profile; fetch /debug/pprof/profile for CPU";
	if (heap_snapshot(data, len))
		return "a V8 heap snapshot (.heapsnapshot), every object of the heap rather "
		       "than samples of where it was allocated; take a sampling heap profile "
		       "instead (node --heap-prof, or DevTools' allocation sampling: a "
		       ".heapprofile)";
	if (starts_with(data, len, "--- symbol\n"))
		return "gperftools' 'google-pprof --raw' output; convert the profile with 'go tool "
		       "pprof -proto PROGRAM FILE'";
	if (starts_with(data, len, "v8-version,"))
		return "a V8 tick log (node --prof); record a .cpuprofile instead "
		       "(node --cpu-prof)";
	if (i < 64 && data[i] == '{' && holds(data, len, 256, "\"code\"") &&
	    holds(data, len, 65536, "\"SHARED_LIB\""))
		return "the JSON of 'node --prof-process --preprocess', ticks rather than a "
		       "profile; record a .cpuprofile instead (node --cpu-prof)";
	if (starts_with(data, len, "PERFILE2"))
		return "a perf.data file; convert it with 'perf script -i'";
	if (perf_report(data, len, i))
		return "'perf report' output, percentages rather than samples; give 'perf script' "
		       "output instead";
	if (bpftrace_print(data, len, i))
		return "a bpftrace map print, counts per key rather than stacks profreg can read; "
		       "fold its stacks first (FlameGraph's stackcollapse-bpftrace.pl)";
	/* pprofile (Python) writes callgrind's format too, of hits and time per line. */
	if (starts_with(data, len, "# callgrind format") &&
	    holds(data, len, 256, "\ncreator: pprofile"))
		return "pprofile's callgrind output (Python), hits and time per line and call "
		       "rather than sampled stacks; record with a sampler profreg reads (py-spy, "
		       "austin)";
	if (starts_with(data, len, "Command line: ") &&
	    holds(data, len, 4096, "\nTotal duration: ") && holds(data, len, 4096, "\nFile: "))
		return "pprofile's annotated source (Python), hits and time per line rather than "
		       "sampled stacks; record with a sampler profreg reads (py-spy, austin)";
	if (starts_with(data, len, "# callgrind format") ||
	    (starts_with(data, len, "version: ") && holds(data, len, 256, "\ncreator: callgrind")))
		return "a callgrind profile (valgrind --tool=callgrind), instructions counted "
		       "per function and call rather than sampled stacks; profreg does not read it";
	if (starts_with(data, len, "desc: ") && holds(data, len, 4096, "\ntime_unit: ") &&
	    holds(data, len, 4096, "\nsnapshot="))
		return "a massif profile (valgrind --tool=massif), the heap's size over time; "
		       "profreg does not read it";
	if (starts_with(data, len, "desc: ") && holds(data, len, 4096, "\nevents: "))
		return "a cachegrind profile (valgrind --tool=cachegrind), instructions "
		       "counted per line rather than sampled stacks; profreg does not read it";
	/* heaptrack writes its recordings zstd-compressed (gzip before 1.2). */
	if (len >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd)
		return "zstd-compressed, which profreg does not decompress: decompress it with "
		       "'zstd -d', or, for a heaptrack recording, print its stacks with "
		       "'heaptrack_print -F STACKS FILE' and give those";
	if (starts_with(data, len, "v ") && holds(data, len, 32, "\nX "))
		return "a heaptrack recording; print its stacks with 'heaptrack_print -F STACKS "
		       "FILE' and give those";
	/* marshal's dict of (file, line, function) tuples, as pstats.dump_stats writes it. */
	if (len >= 2 && (data[0] == '{' || data[0] == 0xfb) &&
	    (data[1] == ')' || data[1] == '(' || data[1] == 0xa9 || data[1] == 0xa8))
		return "Python's profile statistics (cProfile or profile, .pstats), time per "
		       "function rather than sampled stacks; record with a sampler profreg "
		       "reads (py-spy, austin)";
	if ((starts_with(data, len, "\x04\x08{") && holds(data, len, 64, "mode")) ||
	    (starts_with(data, len, "{\"version\":") && holds(data, len, 64, "\"mode\":") &&
	     holds(data, len, 4096, "\"frames\":{")))
		return "a stackprof profile (Ruby); fold it with 'stackprof --stackcollapse FILE' "
		       "and give that";
	/* perf's flamegraph script writes d3-flame-graph's tree: name, libtype, value, children. */
	if (i < 64 && data[i] == '{' && holds(data + i, len - i, 8, "\"n\":") &&
	    holds(data + i, len - i, 256, "\"l\":") && holds(data + i, len - i, 256, "\"c\":"))
		return "a flame graph's JSON tree ('perf script report flamegraph -f json'), "
		       "drawn from the samples; give 'perf script' output instead";
	/* 0x's flamegraph.html, perf's flamegraph and clinic's reports are pages. */
	if (i < 64 && (ci_starts_with(data + i, len - i, "<!doctype html") ||
		       ci_starts_with(data + i, len - i, "<html")))
		return "an HTML page (a flame graph or a report drawn from a profile), not a "
		       "profile; give the profile it was drawn from";
	/* i is past the leading whitespace; a trace starts within 64 bytes. */
	if (i < 64 && (data[i] == '{' || data[i] == '[') &&
	    (holds(data, len, 65536, "\"traceEvents\"") || holds(data, len, 4096, "\"ph\":")))
		return "a Chrome trace (Performance panel), not a profile; save a .cpuprofile";
	return NULL;
}

int format_parse(profile **out, const uint8_t *data, size_t len,
		 profile_format fmt, const char *name,
		 const profile_limits *lim, pr_error *err)
{
	return format_parse_where(out, NULL, data, len, fmt, name, lim, NULL, err);
}

int format_parse_where(profile **out, size_t *kept, const uint8_t *data, size_t len,
		       profile_format fmt, const char *name, const profile_limits *lim,
		       const pprof_label_filter *only, pr_error *err)
{
	profile_limits deflim;
	buf plain = BUF_INIT;
	int rc = 0;

	*out = NULL;
	if (kept)
		*kept = FORMAT_NO_LABELS; /* until a format that has labels says otherwise */
	if (!lim) {
		profile_limits_default(&deflim);
		lim = &deflim;
	}
	if (len > lim->max_input_bytes) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "cannot parse '%s': %zu bytes exceed the "
				  "input limit of %llu bytes",
				  name, len, (unsigned long long)lim->max_input_bytes);
		goto out;
	}
	if (format_is_gzip(data, len)) {
		if ((rc = gunzip_bounded(&plain, data, len, lim->max_decompressed_bytes,
					 name, err)) < 0)
			goto out;
		data = (const uint8_t *)plain.ptr;
		len = plain.len;
	} else if (len > lim->max_decompressed_bytes) {
		rc = pr_error_set(err, PR_ELIMIT,
				  "cannot parse '%s': %zu bytes exceed the "
				  "decompressed size limit of %llu bytes",
				  name, len, (unsigned long long)lim->max_decompressed_bytes);
		goto out;
	}
	if (fmt == PROFILE_FMT_AUTO && (fmt = format_detect(data, len)) == PROFILE_FMT_AUTO) {
		const char *what = known_other(data, len);

		/*
		 * Folded stacks with a bad count among their first lines: the
		 * parser's error names the line and what is wrong with it,
		 * where "not a known format" would send the user to --format.
		 */
		if (!what && folded_sniff_near(data, len) &&
		    (rc = folded_parse(out, data, len, name, lim, err)) < 0)
			goto out;
		profile_free(*out); /* the parser found nothing wrong: not taken either */
		*out = NULL;
		if (what)
			rc = pr_error_set(err, PR_EDATA, "cannot parse '%s': %s", name, what);
		else
			rc = pr_error_set(err, PR_EDATA, "cannot parse '%s': not a known profile "
					  "format (pprof, folded, V8 cpuprofile, V8 heap profile, "
					  "speedscope, perf script, JFR)", name);
		goto out;
	}
	switch (fmt) {
	case PROFILE_FMT_PPROF:
		rc = pprof_parse_where(out, kept, data, len, name, lim, only, err);
		break;
	case PROFILE_FMT_FOLDED:
		rc = folded_parse(out, data, len, name, lim, err);
		break;
	case PROFILE_FMT_V8:
		rc = v8_parse(out, data, len, name, lim, err);
		break;
	case PROFILE_FMT_PERF:
		rc = perf_parse(out, data, len, name, lim, err);
		break;
	case PROFILE_FMT_SPEEDSCOPE:
		rc = speedscope_parse(out, data, len, name, lim, err);
		break;
	case PROFILE_FMT_V8HEAP:
		rc = v8heap_parse(out, data, len, name, lim, err);
		break;
	case PROFILE_FMT_JFR:
		rc = jfr_parse(out, data, len, name, lim, err);
		break;
	default:
		rc = pr_error_set(err, PR_EUSAGE, "cannot parse '%s': unknown format", name);
		break;
	}
out:
	buf_release(&plain);
	return rc;
}
