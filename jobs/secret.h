/*
 * secret.h: reading a secret (a PagerDuty routing key, a bearer token)
 * from an environment variable or an owner-only file.
 *
 * A secret file must be a regular file owned by the user running
 * profreg and readable by no one else (mode 0600 or 0400): anything
 * else is refused with an error that names the file and the problem,
 * never the value. The value is never printed or put in a message by
 * this module; callers keep it out of logs, output and the database.
 */
#ifndef PR_SECRET_H
#define PR_SECRET_H

#include <stddef.h>
#include "common/error.h"

/* Longest secret read from a file or the environment, in bytes. */
#define SECRET_MAX 4096

/*
 * Read the secret named by `env_name` (an environment variable) or else
 * `file`. One trailing newline (LF or CRLF) is stripped; any other
 * control character (CR, LF, tab, DEL...) is refused as PR_EDATA naming
 * the variable or file, never the value: the secret goes into an HTTP
 * header, where a line break would inject headers of its own. *out is a new
 * string that the caller frees with secret_free; it is NULL (and 0 is
 * returned) when both names are NULL. An unset or empty variable, a
 * missing, unsafe, empty or oversized file is PR_EREFUSED (unsafe mode or
 * owner) or PR_EDATA / PR_EIO, with a one-line message.
 */
int secret_read(char **out, const char *env_name, const char *file, pr_error *err);

/*
 * What secret_read refuses of a file whatever user reads it, from its
 * lstat (or fstat) `st`: a symbolic link, anything but a regular file, a
 * mode open to group or others; PR_EREFUSED naming `path`, else 0.
 */
struct stat;
int secret_file_kind(const char *path, const struct stat *st, pr_error *err);

/*
 * Whether a secret may travel to `url`: https, or plain http to a
 * loopback host (127.0.0.0/8, [::1], localhost). Anything else would
 * carry it in cleartext over the network. 1 safe, 0 not.
 */
int secret_url_safe(const char *url);

/* Overwrite and free a secret; NULL is fine (common/wipe.h's wipe_free). */
void secret_free(char *s);

/*
 * Overwrite n bytes at p (NULL: nothing) in a way the compiler keeps
 * (common/wipe.h's wipe_mem, which pipeline/ uses directly).
 */
void secret_wipe(void *p, size_t n);

#endif
