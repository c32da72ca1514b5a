/*
 * error.c: the error record (see error.h).
 */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pr_error_set(pr_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != 0)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* One line only: a message may quote input that contains newlines. */
	for (char *p = err->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

char *pr_json_reason(char *text)
{
	char *near = strstr(text, " near '");

	if (near)
		*near = '\0';
	return text;
}

void pr_error_clear(pr_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

const char *pr_error_name(int code)
{
	switch (code) {
	case PR_OK: return "ok";
	case PR_EUSAGE: return "usage error";
	case PR_EDATA: return "bad input";
	case PR_ELIMIT: return "limit exceeded";
	case PR_ENOTFOUND: return "not found";
	case PR_EEXISTS: return "already exists";
	case PR_EDB: return "database error";
	case PR_EIO: return "i/o error";
	case PR_ENOMEM: return "out of memory";
	case PR_ELOCKED: return "locked";
	case PR_EREFUSED: return "refused";
	default: return "error";
	}
}
