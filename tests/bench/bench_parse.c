/*
 * bench_parse.c: parse+summarise throughput against the decompression floor.
 *
 * Generates realistic pprof profiles (gzip-compressed, as Go writes them)
 * and the same profiles as folded text, then times, in one run:
 *   - `gzip -dc` over all the pprof files (the floor decompression sets),
 *   - profreg's read + gunzip + parse + summarise of the same files,
 *   - the same for the folded files.
 * Prints profiles/s, MB/s and the ratio to the floor. Writes a manifest of
 * the files so tests/bench/run can time a full ingest into PostgreSQL.
 *
 * usage: bench_parse DIR [PROFILES]
 */
#define _POSIX_C_SOURCE 200809L
#include "common/fileio.h"
#include "pipeline/format.h"
#include "pipeline/profile.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define NFUNCS 2000
#define NLOCS 6000
#define NSAMPLES 20000
#define MAXDEPTH 40

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long rng_state = 88172645463325252ULL;
static unsigned long long rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int gzip_to(const char *path, const void *data, size_t len)
{
	gzFile f = gzopen(path, "wb6");
	int ok;

	if (!f)
		return -1;
	ok = gzwrite(f, data, (unsigned)len) == (int)len;
	return gzclose(f) == Z_OK && ok ? 0 : -1;
}

/* One synthetic service profile: Zipf-like leaf weights over a call tree. */
static int make_profile(const char *pb_path, const char *folded_path)
{
	static char names[NFUNCS][48];
	static Perftools__Profiles__Function funcs[NFUNCS], *funcp[NFUNCS];
	static Perftools__Profiles__Location locs[NLOCS], *locp[NLOCS];
	static Perftools__Profiles__Line lines[NLOCS], *linep[NLOCS];
	static Perftools__Profiles__Sample samples[NSAMPLES], *samplep[NSAMPLES];
	static uint64_t stacks[NSAMPLES][MAXDEPTH];
	static int64_t values[NSAMPLES][2];
	static ProtobufCBinaryData strings[NFUNCS + 8];
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
	Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
	Perftools__Profiles__ValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	const char *fixed[] = {"", "samples", "count", "cpu", "nanoseconds", "main.go"};
	size_t nstr = 0, len;
	uint8_t *packed;
	FILE *folded;
	int rc;

	for (size_t i = 0; i < 6; i++)
		strings[nstr++] = (ProtobufCBinaryData){strlen(fixed[i]), (uint8_t *)fixed[i]};
	for (size_t i = 0; i < NFUNCS; i++) {
		snprintf(names[i], sizeof(names[i]), "github.com/acme/svc/pkg%zu.(*T).Method%zu",
			 i % 97, i);
		strings[nstr] = (ProtobufCBinaryData){strlen(names[i]), (uint8_t *)names[i]};
		perftools__profiles__function__init(&funcs[i]);
		funcs[i].id = i + 1;
		funcs[i].name = (int64_t)nstr++;
		funcs[i].filename = 5;
		funcp[i] = &funcs[i];
	}
	for (size_t i = 0; i < NLOCS; i++) {
		perftools__profiles__location__init(&locs[i]);
		perftools__profiles__line__init(&lines[i]);
		locs[i].id = i + 1;
		locs[i].address = 0x400000 + i * 16;
		lines[i].function_id = rnd() % NFUNCS + 1;
		lines[i].line = (int64_t)(rnd() % 900 + 1);
		linep[i] = &lines[i];
		locs[i].n_line = 1;
		locs[i].line = &linep[i];
		locp[i] = &locs[i];
	}
	if (!(folded = fopen(folded_path, "w")))
		return -1;
	for (size_t s = 0; s < NSAMPLES; s++) {
		size_t depth = 5 + rnd() % (MAXDEPTH - 5);
		perftools__profiles__sample__init(&samples[s]);
		for (size_t d = 0; d < depth; d++) /* leaf first; a skewed leaf choice */
			stacks[s][d] =
				d == 0 ? (rnd() % (rnd() % NLOCS + 1)) + 1 : rnd() % NLOCS + 1;
		values[s][0] = (int64_t)(rnd() % 20 + 1);
		values[s][1] = values[s][0] * 10000000;
		samples[s].n_location_id = depth;
		samples[s].location_id = stacks[s];
		samples[s].n_value = 2;
		samples[s].value = values[s];
		samplep[s] = &samples[s];
		for (size_t d = depth; d-- > 0;)
			fprintf(folded, "%s%s", names[lines[stacks[s][d] - 1].function_id - 1],
				d ? ";" : "");
		fprintf(folded, " %lld\n", (long long)values[s][0]);
	}
	if (fclose(folded) != 0)
		return -1;
	vt[0].type = 1, vt[0].unit = 2, vt[1].type = 3, vt[1].unit = 4;
	period.type = 3, period.unit = 4;
	prof.n_sample_type = 2, prof.sample_type = vtp;
	prof.n_sample = NSAMPLES, prof.sample = samplep;
	prof.n_location = NLOCS, prof.location = locp;
	prof.n_function = NFUNCS, prof.function = funcp;
	prof.n_string_table = nstr, prof.string_table = strings;
	prof.period_type = &period, prof.period = 10000000;
	prof.duration_nanos = 10000000000LL;
	len = perftools__profiles__profile__get_packed_size(&prof);
	if (!(packed = malloc(len)))
		return -1;
	perftools__profiles__profile__pack(&prof, packed);
	rc = gzip_to(pb_path, packed, len);
	free(packed);
	return rc;
}

/* Run `gzip -dc` over every file once, output to /dev/null. */
static double time_gzip(char **paths, int n)
{
	char **argv = calloc((size_t)n + 3, sizeof(*argv));
	double t0 = now();
	pid_t pid;
	int status;

	argv[0] = "gzip";
	argv[1] = "-dc";
	memcpy(argv + 2, paths, (size_t)n * sizeof(*argv));
	if ((pid = fork()) == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execvp("gzip", argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	free(argv);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: gzip -dc failed\n");
		exit(3);
	}
	return now() - t0;
}

/* Read, parse and summarise every file; returns seconds, adds bytes read. */
static double time_parse(char **paths, int n, size_t *bytes)
{
	double t0 = now();

	*bytes = 0;
	for (int i = 0; i < n; i++) {
		pr_error err = PR_ERROR_INIT;
		buf raw = BUF_INIT;
		profile *p = NULL;
		profile_summary s;

		if (fileio_read(&raw, paths[i], SIZE_MAX, &err) < 0 ||
		    format_parse(&p, (const uint8_t *)raw.ptr, raw.len, PROFILE_FMT_AUTO, paths[i],
				 NULL, &err) < 0 ||
		    profile_summarize(&s, p, (profile_pick_primary(p, NULL), p->primary), &err) <
			    0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			exit(3);
		}
		*bytes += raw.len;
		profile_summary_release(&s);
		profile_free(p);
		buf_release(&raw);
	}
	return now() - t0;
}

static double best_of(int reps, double (*fn)(char **, int, size_t *), char **paths,
		      int n, size_t *bytes)
{
	double best = 1e30;

	for (int r = 0; r < reps; r++) {
		double t = fn(paths, n, bytes);
		if (t < best)
			best = t;
	}
	return best;
}

static double gzip_adapter(char **paths, int n, size_t *bytes)
{
	(void)bytes;
	return time_gzip(paths, n);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 40;
	char **pb, **folded, path[4096];
	size_t pb_bytes = 0, folded_bytes = 0, ignore;
	double t_gzip, t_pb, t_folded;
	FILE *manifest;

	if (argc < 2 || n <= 0 || n > 10000) {
		fprintf(stderr, "usage: bench_parse DIR [PROFILES]\n");
		return 2;
	}
	pb = calloc((size_t)n, sizeof(*pb));
	folded = calloc((size_t)n, sizeof(*folded));
	snprintf(path, sizeof(path), "%s/manifest.jsonl", argv[1]);
	if (!pb || !folded || !(manifest = fopen(path, "w"))) {
		fprintf(stderr, "bench: cannot write in '%s'\n", argv[1]);
		return 3;
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/p%03d.pb.gz", argv[1], i);
		pb[i] = strdup(path);
		snprintf(path, sizeof(path), "%s/p%03d.folded", argv[1], i);
		folded[i] = strdup(path);
		if (make_profile(pb[i], folded[i]) < 0) {
			fprintf(stderr, "bench: cannot write '%s'\n", pb[i]);
			return 3;
		}
		fprintf(manifest,
			"{\"path\":\"p%03d.pb.gz\",\"service\":\"bench\",\"release\":\"r1\"}\n"
			"{\"path\":\"p%03d.folded\",\"service\":\"bench\",\"release\":\"r1\"}\n",
			i, i);
	}
	fclose(manifest);

	/* Warm the page cache, then take the best of three of each. */
	time_gzip(pb, n);
	t_gzip = best_of(3, gzip_adapter, pb, n, &ignore);
	t_pb = best_of(3, time_parse, pb, n, &pb_bytes);
	t_folded = best_of(3, time_parse, folded, n, &folded_bytes);

	printf("parse+summarise, %d profiles of %d samples, %d functions each (best of 3)\n",
	       n, NSAMPLES, NFUNCS);
	printf("  gzip -dc (floor)    %8.3f s\n", t_gzip);
	printf("  pprof               %8.3f s  %8.1f profiles/s  %7.1f MB/s compressed"
	       "  ratio to gzip -dc %.2fx\n",
	       t_pb, n / t_pb, (double)pb_bytes / 1e6 / t_pb, t_pb / t_gzip);
	printf("  folded              %8.3f s  %8.1f profiles/s  %7.1f MB/s\n", t_folded,
	       n / t_folded, (double)folded_bytes / 1e6 / t_folded);
	for (int i = 0; i < n; i++) {
		free(pb[i]);
		free(folded[i]);
	}
	free(pb);
	free(folded);
	return 0;
}
