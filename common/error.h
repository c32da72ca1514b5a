/*
 * error.h: error codes and the error record every fallible call fills in.
 *
 * A function that can fail returns 0 or one of the negative PR_E* codes and
 * sets the message where the error is found, naming what failed, on which
 * input and why ("cannot read 'x.pb.gz': truncated gzip stream"). Callers
 * pass the code up unchanged. The first error set wins, so a caller higher
 * up cannot overwrite the precise message with a vaguer one.
 */
#ifndef PR_ERROR_H
#define PR_ERROR_H

enum {
	PR_OK = 0,
	PR_ERR = -1,       /* runtime or infrastructure failure */
	PR_EUSAGE = -2,    /* the caller asked for something invalid */
	PR_EDATA = -4,     /* the input is malformed */
	PR_ELIMIT = -5,    /* the input exceeds a configured limit */
	PR_ENOTFOUND = -6, /* the named object does not exist */
	PR_EEXISTS = -7,   /* the object already exists */
	PR_EDB = -8,       /* the database failed */
	PR_EIO = -9,       /* a file or network operation failed */
	PR_ENOMEM = -10,   /* out of memory */
	PR_ELOCKED = -11,  /* another job holds the lock */
	PR_EREFUSED = -12, /* a policy refuses the request (disabled service) */
};

#define PR_ERROR_MSG_MAX 1024

typedef struct pr_error {
	int code;
	char msg[PR_ERROR_MSG_MAX];
} pr_error;

#define PR_ERROR_INIT {0, {0}}

/*
 * Record an error and return `code`. Only the first error is kept: a
 * second call on an already set record changes nothing and still returns
 * `code`. `err` may be NULL, in which case nothing is recorded.
 */
int pr_error_set(pr_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Forget a recorded error so the record can be reused. */
void pr_error_clear(pr_error *err);

/*
 * A JSON parser's reason (jansson's json_error_t text) fit to quote: its
 * " near 'TOKEN'" tail is cut, in place, because the token is the input's
 * own bytes (a card number in a profile's description, an escape sequence
 * in a request body); the line, column or byte still say where. Returns
 * `text`.
 */
char *pr_json_reason(char *text);

/* Human name of a code ("bad input", "database error", ...). */
const char *pr_error_name(int code);

#endif
