/*
 * timeutil.h: instants as Unix microseconds, to and from text.
 */
#ifndef PR_TIMEUTIL_H
#define PR_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse an ISO 8601 instant: "2026-11-29", "2026-11-29T10:00:00Z",
 * "2026-11-29 10:00:00.250+02:00", ... A time without a zone is UTC.
 * Also accepts "@<unix seconds>". Returns 0 or PR_EUSAGE.
 */
int time_parse(int64_t *out_us, const char *s);

/*
 * Parse a duration: "90s", "15m", "24h", "14d", "1w" (an integer and a
 * unit), at most TIME_MAX_DURATION_DAYS: longer is never meant, and
 * would overflow the timestamps it is subtracted from. Returns 0 or
 * PR_EUSAGE.
 */
#define TIME_MAX_DURATION_DAYS 36500
int time_parse_duration(int64_t *out_us, const char *s);

/*
 * Parse "--since"-style input: an instant (time_parse) or a duration
 * before `now_us` ("24h" means 24 hours ago).
 */
int time_parse_since(int64_t *out_us, const char *s, int64_t now_us);

#define TIME_FMT_MAX 96

/* Format as "2026-11-29T10:00:00Z" (microseconds shown only when set). */
void time_format(char out[TIME_FMT_MAX], int64_t us);

/* The current time. */
int64_t time_now_us(void);

/* Seconds on the monotonic clock, for measuring how long something took. */
double time_mono(void);

#endif
