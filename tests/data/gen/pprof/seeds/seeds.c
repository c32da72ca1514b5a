/*
 * seeds.c: writes the hand-built seeds of tests/fuzz/corpus/pprof/
 * (inline.pb, unsymbolized.pb, labels.pb, sparse-ids.pb, empty.pb): the
 * small profile of tests/unit/test_pprof.c (functions main, work, inner;
 * inner inlined into work) and variants of it. Build and run from the
 * repository root after `make`:
 *
 *   cc -I. -Ibuild/gen -o /tmp/seeds tests/data/gen/pprof/seeds/seeds.c \
 *      build/gen/pipeline/profile.pb-c.c -lprotobuf-c
 *   /tmp/seeds tests/fuzz/corpus/pprof
 */
#include "pipeline/profile.pb-c.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef Perftools__Profiles__Profile P;
static ProtobufCBinaryData S(const char *s)
{
	ProtobufCBinaryData b = {strlen(s), (uint8_t *)s};
	return b;
}
static void out(P *p, const char *path)
{
	size_t n = perftools__profiles__profile__get_packed_size(p);
	uint8_t *b = malloc(n);
	perftools__profiles__profile__pack(p, b);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	free(b);
}
int main(int argc, char **argv)
{
	const char *dir = argv[1];
	char path[512];

	if (argc != 2) {
		fprintf(stderr, "usage: seeds DIR\n");
		return 2;
	}
	ProtobufCBinaryData st[] = {S(""),
				    S("samples"),
				    S("count"),
				    S("cpu"),
				    S("nanoseconds"),
				    S("main"),
				    S("main.go"),
				    S("work"),
				    S("work.go"),
				    S("inner"),
				    S("/usr/lib/libfoo.so"),
				    S("thread"),
				    S("worker-1")};
	Perftools__Profiles__ValueType vt[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						PERFTOOLS__PROFILES__VALUE_TYPE__INIT},
				       *vtp[2] = {&vt[0], &vt[1]},
				       pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	vt[0].type = 1;
	vt[0].unit = 2;
	vt[1].type = 3;
	vt[1].unit = 4;
	pt.type = 3;
	pt.unit = 4;
	Perftools__Profiles__Function fn[3], *fnp[3];
	for (int i = 0; i < 3; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fnp[i] = &fn[i];
	}
	fn[0].name = 5;
	fn[0].filename = 6;
	fn[1].name = 7;
	fn[1].filename = 8;
	fn[2].name = 9;
	fn[2].filename = 8;
	Perftools__Profiles__Line ln[4], *lnp[4];
	for (int i = 0; i < 4; i++) {
		perftools__profiles__line__init(&ln[i]);
		lnp[i] = &ln[i];
		ln[i].line = 10 + i;
	}
	ln[0].function_id = 2;
	ln[1].function_id = 1;
	ln[2].function_id = 3;
	ln[3].function_id = 2;
	Perftools__Profiles__Location loc[5], *locp[5];
	for (int i = 0; i < 5; i++) {
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = i + 1;
		locp[i] = &loc[i];
		loc[i].address = 0x1100 + 16 * i;
	}
	loc[0].n_line = 1;
	loc[0].line = &lnp[0];
	loc[1].n_line = 1;
	loc[1].line = &lnp[1];
	loc[2].n_line = 2;
	loc[2].line = &lnp[2];
	loc[3].mapping_id = 1;
	loc[4].address = 0xdeadbeef;
	Perftools__Profiles__Mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT, *mpp = &mp;
	mp.id = 1;
	mp.memory_start = 0x1000;
	mp.memory_limit = 0x2000;
	mp.file_offset = 0x100;
	mp.filename = 10;
	uint64_t l0[] = {1, 2}, l1[] = {2}, l2[] = {3, 2}, l3[] = {4, 2},
		 l4[] = {5, 3, 2};
	int64_t v[5][2] = {{1, 10}, {2, 20}, {3, 30}, {1, 10}, {1, 10}};
	Perftools__Profiles__Sample sm[5], *smp[5];
	uint64_t *ls[5] = {l0, l1, l2, l3, l4};
	size_t nl[5] = {2, 1, 2, 2, 3};
	for (int i = 0; i < 5; i++) {
		perftools__profiles__sample__init(&sm[i]);
		sm[i].n_location_id = nl[i];
		sm[i].location_id = ls[i];
		sm[i].n_value = 2;
		sm[i].value = v[i];
		smp[i] = &sm[i];
	}
	P p = PERFTOOLS__PROFILES__PROFILE__INIT;
	p.n_string_table = 11;
	p.string_table = st;
	p.n_sample_type = 2;
	p.sample_type = vtp;
	p.n_function = 3;
	p.function = fnp;
	p.n_location = 3;
	p.location = locp;
	p.n_sample = 3;
	p.sample = smp;
	p.period_type = &pt;
	p.period = 10000000;
	p.duration_nanos = 3000000000LL;
	p.time_nanos = 1700000000000000000LL;
	snprintf(path, sizeof path, "%s/inline.pb", dir);
	out(&p, path);
	p.n_mapping = 1;
	p.mapping = &mpp;
	p.n_location = 5;
	p.n_sample = 5;
	snprintf(path, sizeof path, "%s/unsymbolized.pb", dir);
	out(&p, path);
	Perftools__Profiles__Label lab = PERFTOOLS__PROFILES__LABEL__INIT, *labp = &lab;
	lab.key = 11;
	lab.str = 12;
	Perftools__Profiles__Label nlab = PERFTOOLS__PROFILES__LABEL__INIT,
				   *labs[2] = {&lab, &nlab};
	nlab.key = 11;
	nlab.num = 42;
	nlab.num_unit = 2;
	p.n_string_table = 13;
	sm[0].n_label = 2;
	sm[0].label = labs;
	sm[1].n_label = 1;
	sm[1].label = &labp;
	p.default_sample_type = 1;
	snprintf(path, sizeof path, "%s/labels.pb", dir);
	out(&p, path);
	sm[0].n_label = sm[1].n_label = 0;
	p.default_sample_type = 0;
	p.n_string_table = 11;
	for (int i = 0; i < 3; i++)
		fn[i].id = 1000 + 77 * i;
	ln[0].function_id = 1077;
	ln[1].function_id = 1000;
	ln[2].function_id = 1154;
	ln[3].function_id = 1077;
	for (int i = 0; i < 5; i++)
		loc[i].id = 0x400000 + 0x40 * i;
	l0[0] = 0x400000;
	l0[1] = 0x400040;
	l1[0] = 0x400040;
	l2[0] = 0x400080;
	l2[1] = 0x400040;
	l3[0] = 0x4000c0;
	l3[1] = 0x400040;
	l4[0] = 0x400100;
	l4[1] = 0x400080;
	l4[2] = 0x400040;
	snprintf(path, sizeof path, "%s/sparse-ids.pb", dir);
	out(&p, path);
	p.n_sample = 0;
	snprintf(path, sizeof path, "%s/empty.pb", dir);
	out(&p, path);
	return 0;
}
