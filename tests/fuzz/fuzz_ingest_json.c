/*
 * fuzz_ingest_json.c: libFuzzer target for capture descriptions in JSON
 * (ingest_request_from_json): a line of an ingest manifest or a sidecar
 * in a drop folder, both written by whoever ships the profiles.
 *
 * The first byte chooses the source: even, a manifest line resolved
 * against "/spool"; odd, a sidecar of "/drop/a.pb.gz" for "checkout".
 * The rest is the JSON. A failure must be PR_EDATA with a message that
 * starts with the source's name and a zeroed description; a success must
 * give a request that ingest_validate accepts, with a path (absolute
 * in a manifest line, relative ones under "/spool", or "-", the sidecar's own for a
 * sidecar), the sidecar's service for a sidecar, and tags that are a JSON
 * object.
 *
 * Seeds (tests/fuzz/corpus/ingest_json/): descriptions from
 * tests/unit/test_ingest.c: a manifest line with every key, a sidecar
 * with a release, one with an unknown key, a bad time, a bad commit, tags
 * that are not strings, and a sidecar naming its own path.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ingest_json_source line = {"line 3 of 'm.jsonl'", "/spool", NULL, NULL};
static const ingest_json_source side = {"sidecar '/drop/a.pb.gz.json'", NULL, "/drop/a.pb.gz",
					"checkout"};

static int zeroed(const ingest_desc *d)
{
	static const ingest_desc zero;

	return memcmp(d, &zero, sizeof(zero)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const ingest_json_source *src;
	pr_error err = PR_ERROR_INIT, verr = PR_ERROR_INIT;
	ingest_desc d;
	int rc;

	if (!size)
		return 0;
	src = data[0] & 1 ? &side : &line;
	rc = ingest_request_from_json(&d, (const char *)data + 1, size - 1, src, &err);
	if (rc < 0) {
		if (rc != PR_EDATA || err.code != rc || !zeroed(&d) ||
		    strncmp(err.msg, src->name, strlen(src->name)) != 0 ||
		    strncmp(err.msg + strlen(src->name), ": ", 2) != 0)
			abort();
		return 0;
	}
	if (ingest_validate(&d.req, &verr) != 0 || !d.req.path || d.req.path != d.path ||
	    !d.json || !d.req.release)
		abort();
	if (src == &side && (strcmp(d.req.path, side.path) != 0 ||
			     strcmp(d.req.service, side.service) != 0))
		abort();
	if (src == &line && d.req.path[0] != '/' && strcmp(d.req.path, "-") != 0)
		abort();
	if (d.req.tags_json) {
		json_error_t jerr;
		json_t *t = json_loads(d.req.tags_json, 0, &jerr);
		if (!json_is_object(t))
			abort();
		json_decref(t);
	}
	ingest_desc_release(&d);
	if (!zeroed(&d))
		abort();
	return 0;
}
