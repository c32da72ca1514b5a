/*
 * source.h: where a service's captures come from.
 *
 * The first source is a folder that collectors drop files into. Each
 * capture is a profile file F (any format profreg reads) with a sidecar
 * F.json holding its metadata, the keys of an ingest manifest line less
 * "path" and "service":
 *
 *   {"release": "v42", "commit": "9fceb02...", "host": "web-3",
 *    "time": "2026-11-29T02:00:00Z", "type": "cpu", "tags": {"zone": "eu"}}
 *
 * "release" is required. A sidecar is read by ingest_request_from_json,
 * like a manifest line: the same checks, the same messages, each naming
 * the sidecar. A file without its sidecar is not collected yet
 * (a collector may still be writing it): write the profile first, then
 * the sidecar. Files are taken in name order; ingest is idempotent, so
 * collecting the same folder twice stores nothing new.
 */
#ifndef PR_SOURCE_H
#define PR_SOURCE_H

#include "pipeline/ingest.h"

typedef struct source_report {
	size_t stored;      /* new captures */
	size_t already;     /* captures stored before */
	size_t waiting;     /* profile files without a sidecar yet */
	size_t failed;      /* bad files or sidecars */
	char *first_error;  /* the first failure's message, or NULL */
} source_report;

void source_report_release(source_report *r);

/*
 * Collect every capture in `dir` for `service`. Bad files and sidecars
 * are counted and the first reason kept (naming the file or sidecar),
 * never fatal; an unreadable folder is PR_EIO. When the database, the
 * blob store or memory fails, collection stops there and passes that
 * code up, the message saying at which file ("stopped at file 3 of 40
 * in '/spool/x': cannot ingest '/spool/x/c.pb.gz': database: ...").
 */
int source_collect_dir(source_report *out, db *d, blob_store *bs, const char *service,
		       const char *dir, const profile_limits *lim, pr_error *err);

#endif
