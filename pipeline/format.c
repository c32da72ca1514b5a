/*
 * format.c: gunzip, detect and dispatch to the right parser (see format.h).
 */
#include "pipeline/format.h"
#include "pipeline/folded.h"
#include "pipeline/gunzip.h"
#include "pipeline/perf.h"
#include "pipeline/pprof.h"
#include "pipeline/v8.h"

#include <string.h>

bool format_is_gzip(const uint8_t *data, size_t len)
{
	return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

profile_format format_detect(const uint8_t *data, size_t len)
{
	/* Text formats first: protobuf is the permissive fallback. */
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
		rc = pr_error_set(err, PR_EDATA,
				  "cannot parse '%s': not a known profile format (pprof, folded, "
				  "V8 cpuprofile, perf script)",
				  name);
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
	default:
		rc = pr_error_set(err, PR_EUSAGE, "cannot parse '%s': unknown format", name);
		break;
	}
out:
	buf_release(&plain);
	return rc;
}
