/*
 * timeutil.c: instants and durations (see timeutil.h).
 */
#define _DEFAULT_SOURCE
#include "common/timeutil.h"
#include "common/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int digits(const char **s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return -1;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

static int parse_epoch(int64_t *out, const char *s)
{
	char *end;
	long long v;

	if (!isdigit((unsigned char)*s) && *s != '-')
		return PR_EUSAGE;
	v = strtoll(s, &end, 10);
	if (*end || v < -62135596800LL || v > 253402300799LL)
		return PR_EUSAGE;
	*out = (int64_t)v * 1000000;
	return 0;
}

int time_parse(int64_t *out, const char *s)
{
	struct tm tm = {0};
	int y, mo, d, h = 0, mi = 0, sec = 0, frac_us = 0, off = 0;
	time_t t;

	if (!s)
		return PR_EUSAGE;
	if (*s == '@')
		return parse_epoch(out, s + 1);
	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) ||
	    *s++ != '-' || digits(&s, 2, &d))
		return PR_EUSAGE;
	if (*s == 'T' || *s == 't' || *s == ' ') {
		s++;
		if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi))
			return PR_EUSAGE;
		if (*s == ':') {
			s++;
			if (digits(&s, 2, &sec))
				return PR_EUSAGE;
			if (*s == '.' || *s == ',') {
				int scale = 100000, n = 0;
				s++;
				while (isdigit((unsigned char)*s)) {
					frac_us += (*s - '0') * scale;
					scale /= 10;
					s++;
					n++;
				}
				if (n == 0)
					return PR_EUSAGE;
			}
		}
		if (*s == 'Z' || *s == 'z') {
			s++;
		} else if (*s == '+' || *s == '-') {
			int sign = *s++ == '-' ? -1 : 1, oh, om = 0;
			if (digits(&s, 2, &oh))
				return PR_EUSAGE;
			if (*s == ':')
				s++;
			if (*s && digits(&s, 2, &om))
				return PR_EUSAGE;
			if (oh > 23 || om > 59)
				return PR_EUSAGE;
			off = sign * (oh * 3600 + om * 60);
		}
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return PR_EUSAGE;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	/* timegm normalises 31 February into March: refuse such dates. */
	if (tm.tm_mday != d || tm.tm_mon != mo - 1)
		return PR_EUSAGE;
	*out = ((int64_t)t - off) * 1000000 + frac_us;
	return 0;
}

int time_parse_duration(int64_t *out, const char *s)
{
	char *end;
	long long v;
	int64_t unit;

	if (!s || !isdigit((unsigned char)*s))
		return PR_EUSAGE;
	v = strtoll(s, &end, 10);
	if (strcmp(end, "s") == 0 || *end == '\0')
		unit = 1000000LL;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		unit = 60 * 1000000LL;
	else if (strcmp(end, "h") == 0)
		unit = 3600 * 1000000LL;
	else if (strcmp(end, "d") == 0)
		unit = 86400 * 1000000LL;
	else if (strcmp(end, "w") == 0)
		unit = 7 * 86400 * 1000000LL;
	else
		return PR_EUSAGE;
	if (v < 0 || v > TIME_MAX_DURATION_DAYS * 86400LL * 1000000LL / unit)
		return PR_EUSAGE;
	*out = (int64_t)v * unit;
	return 0;
}

int time_parse_since(int64_t *out, const char *s, int64_t now_us)
{
	int64_t d;

	if (time_parse(out, s) == 0)
		return 0;
	if (time_parse_duration(&d, s) == 0) {
		*out = now_us - d;
		return 0;
	}
	return PR_EUSAGE;
}

void time_format(char out[TIME_FMT_MAX], int64_t us)
{
	time_t t = (time_t)(us >= 0 ? us / 1000000 : (us - 999999) / 1000000);
	int64_t frac = us - (int64_t)t * 1000000;
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(out, TIME_FMT_MAX, "@%lld", (long long)(us / 1000000));
		return;
	}
	if (frac)
		snprintf(out, TIME_FMT_MAX, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec, (int)frac);
	else
		snprintf(out, TIME_FMT_MAX, "%04d-%02d-%02dT%02d:%02d:%02dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec);
}

int64_t time_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double time_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
