/*
 * pprofgen.c: writes one big Go-like CPU profile for the ingest benchmark.
 *
 * A gzip-compressed profile.proto as Go's runtime/pprof writes it: two
 * sample types (samples/count, cpu/nanoseconds), one mapping with
 * symbols, FUNCTIONS functions in 97 packages over 400 source files,
 * three locations a function (one in eight with an inlined caller), and
 * STACKS samples, each a distinct stack walked down a call tree from
 * main (so stacks share prefixes, as real ones do), 6 to 25 frames deep.
 * The same seed writes the same bytes; the function names and files are
 * the same for every seed (captures of one service), the stacks are not.
 *
 * usage: pprofgen OUT [FUNCTIONS [STACKS [SEED]]]   (5000 50000 1)
 * Prints the file's size in bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/profile.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LOCS_PER_FN 3
#define MAXDEPTH 25

static unsigned long long rng_state;
static unsigned long long rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static long arg(int argc, char **argv, int i, long def, long max)
{
	char *end;
	long v;

	if (argc <= i)
		return def;
	v = strtol(argv[i], &end, 10);
	if (*end || v <= 0 || v > max) {
		fprintf(stderr, "pprofgen: bad argument '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
	Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
	Perftools__Profiles__ValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__Mapping map = PERFTOOLS__PROFILES__MAPPING__INIT, *mapp = &map;
	const char *fixed[] = {"", "samples", "count", "cpu", "nanoseconds", "/usr/local/bin/svc"};
	enum { NFIXED = 6, NFILES = 400 };
	long nfn, nstack, nloc;
	Perftools__Profiles__Function *fns, **fnp;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Sample *smp, **smpp;
	ProtobufCBinaryData *strs;
	uint64_t *ids;
	int64_t *vals;
	size_t nstr = 0, len;
	uint8_t *packed;
	gzFile gz;
	char name[160];

	if (argc < 2) {
		fprintf(stderr, "usage: pprofgen OUT [FUNCTIONS [STACKS [SEED]]]\n");
		return 2;
	}
	nfn = arg(argc, argv, 2, 5000, 1000000);
	nstack = arg(argc, argv, 3, 50000, 10000000);
	rng_state = 0x9e3779b97f4a7c15ULL * (unsigned long long)arg(argc, argv, 4, 1, 1L << 30);
	nloc = nfn * LOCS_PER_FN;
	fns = calloc((size_t)nfn, sizeof(*fns));
	fnp = calloc((size_t)nfn, sizeof(*fnp));
	locs = calloc((size_t)nloc, sizeof(*locs));
	locp = calloc((size_t)nloc, sizeof(*locp));
	lines = calloc((size_t)nloc * 2, sizeof(*lines));
	linep = calloc((size_t)nloc * 2, sizeof(*linep));
	smp = calloc((size_t)nstack, sizeof(*smp));
	smpp = calloc((size_t)nstack, sizeof(*smpp));
	strs = calloc((size_t)(NFIXED + NFILES + nfn), sizeof(*strs));
	ids = calloc((size_t)nstack * MAXDEPTH, sizeof(*ids));
	vals = calloc((size_t)nstack * 2, sizeof(*vals));
	if (!fns || !fnp || !locs || !locp || !lines || !linep || !smp || !smpp || !strs ||
	    !ids || !vals) {
		fprintf(stderr, "pprofgen: out of memory\n");
		return 3;
	}
	for (size_t i = 0; i < NFIXED; i++)
		strs[nstr++] = (ProtobufCBinaryData){strlen(fixed[i]), (uint8_t *)fixed[i]};
	for (long i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name),
			 "/src/github.com/acme/payments/internal/pkg%02ld/file%03ld.go", i % 97, i);
		strs[nstr++] = (ProtobufCBinaryData){strlen(name), (uint8_t *)strdup(name)};
	}
	for (long i = 0; i < nfn; i++) {
		if (i == 0)
			snprintf(name, sizeof(name), "main.main");
		else
			snprintf(name, sizeof(name),
				 "github.com/acme/payments/internal/pkg%02ld.(*Type%ld).Method%ld",
				 i % 97, i % 331, i);
		strs[nstr] = (ProtobufCBinaryData){strlen(name), (uint8_t *)strdup(name)};
		perftools__profiles__function__init(&fns[i]);
		fns[i].id = (uint64_t)i + 1;
		fns[i].name = fns[i].system_name = (int64_t)nstr++;
		/* Names and files do not depend on the seed: one service's captures. */
		fns[i].filename = NFIXED + (int64_t)((i * 7919) % NFILES);
		fns[i].start_line = (int64_t)((i * 37) % 2000 + 1);
		fnp[i] = &fns[i];
	}
	for (long i = 0; i < nloc; i++) {
		long f = i / LOCS_PER_FN;
		size_t nl = rnd() % 8 == 0 ? 2 : 1;

		perftools__profiles__location__init(&locs[i]);
		locs[i].id = (uint64_t)i + 1;
		locs[i].mapping_id = 1;
		locs[i].address = 0x401000 + (uint64_t)i * 24 + rnd() % 16;
		for (size_t k = 0; k < nl; k++) {
			Perftools__Profiles__Line *l = &lines[i * 2 + (long)k];

			perftools__profiles__line__init(l);
			l->function_id = (k == 0 ? (uint64_t)f : rnd() % (uint64_t)nfn) + 1;
			l->line = fns[l->function_id - 1].start_line + (int64_t)(rnd() % 80);
			linep[i * 2 + (long)k] = l;
		}
		locs[i].n_line = nl;
		locs[i].line = &linep[i * 2];
		locp[i] = &locs[i];
	}
	for (long s = 0; s < nstack; s++) {
		size_t depth = 6 + rnd() % (MAXDEPTH - 5);
		uint64_t *st = ids + s * MAXDEPTH, at = 1;

		/*
		 * Root first: main, then each frame a child of the one above it,
		 * from a fanout of 3 near the root to any function at the leaf.
		 */
		st[depth - 1] = 1;
		for (size_t d = 1; d < depth; d++) {
			uint64_t fan = d < 4 ? 3 : d < 10 ? 12 : (uint64_t)nloc;
			at = (at * 2654435761ULL + rnd() % fan) % (uint64_t)nloc + 1;
			st[depth - 1 - d] = at;
		}
		vals[s * 2] = (int64_t)(1 + (rnd() % 1000 == 0 ? rnd() % 500 : rnd() % 4));
		vals[s * 2 + 1] = vals[s * 2] * 10000000;
		perftools__profiles__sample__init(&smp[s]);
		smp[s].n_location_id = depth;
		smp[s].location_id = st;
		smp[s].n_value = 2;
		smp[s].value = vals + s * 2;
		smpp[s] = &smp[s];
	}
	map.id = 1;
	map.memory_start = 0x400000;
	map.memory_limit = 0x400000 + (uint64_t)nloc * 24 + 0x1000;
	map.filename = 5;
	map.has_functions = map.has_filenames = map.has_line_numbers = 1;
	map.has_inline_frames = 1;
	vt[0].type = 1, vt[0].unit = 2, vt[1].type = 3, vt[1].unit = 4;
	period.type = 3, period.unit = 4;
	prof.n_sample_type = 2, prof.sample_type = vtp;
	prof.n_sample = (size_t)nstack, prof.sample = smpp;
	prof.n_mapping = 1, prof.mapping = &mapp;
	prof.n_location = (size_t)nloc, prof.location = locp;
	prof.n_function = (size_t)nfn, prof.function = fnp;
	prof.n_string_table = nstr, prof.string_table = strs;
	prof.period_type = &period, prof.period = 10000000;
	prof.time_nanos = 1764547200000000000LL;
	prof.duration_nanos = 60000000000LL;
	len = perftools__profiles__profile__get_packed_size(&prof);
	if (!(packed = malloc(len)))
		return 3;
	perftools__profiles__profile__pack(&prof, packed);
	if (!(gz = gzopen(argv[1], "wb6")) || gzwrite(gz, packed, (unsigned)len) != (int)len ||
	    gzclose(gz) != Z_OK) {
		fprintf(stderr, "pprofgen: cannot write '%s'\n", argv[1]);
		return 3;
	}
	{
		FILE *f = fopen(argv[1], "rb");
		long size = -1;

		if (f && fseek(f, 0, SEEK_END) == 0)
			size = ftell(f);
		if (f)
			fclose(f);
		printf("%ld\n", size);
	}
	for (size_t i = NFIXED; i < nstr; i++)
		free(strs[i].data);
	free(packed), free(fns), free(fnp), free(locs), free(locp), free(lines), free(linep);
	free(smp), free(smpp), free(strs), free(ids), free(vals);
	return 0;
}
