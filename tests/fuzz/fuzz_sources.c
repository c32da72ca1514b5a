/*
 * fuzz_sources.c: libFuzzer target for what profile sources read from
 * servers and operators: the first byte chooses
 *
 *   0  Parca's gRPC-Web answer (parca_grpcweb_parse): either PR_EDATA
 *      with a reason, or a message that lies inside the input and a
 *      grpc-message of printable ASCII only;
 *   1  a Prometheus file_sd file (targets_load_file_sd, through a
 *      temporary file): either PR_EDATA/PR_EIO with the list unchanged,
 *      or targets that all pass targets_address_valid and labels of
 *      printable text without quotes or backslashes;
 *   2  an error body of a Connect server (pyroscope_connect_error): one
 *      line of printable ASCII with no quote.
 *
 * Seeds (tests/fuzz/corpus/sources/): a good gRPC-Web answer with its
 * trailer, one cut short, a good file_sd file with labels, one with a
 * URL for a target, a Connect JSON error and a text error.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/utf8.h"
#include "pipeline/parca.h"
#include "pipeline/pyroscope.h"
#include "pipeline/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char file_path[] = "/tmp/profreg-fuzz-sd.XXXXXX";
static int file_fd = -1;

static void cleanup(void)
{
	if (file_fd >= 0)
		unlink(file_path);
}

static void check_printable(const char *s, int allow_quote)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e ||
		    (!allow_quote && *s == '"'))
			abort();
}

/* A release from a label is text as ingest takes it: valid UTF-8, no control, no quote. */
static void check_release(const char *s)
{
	if (!utf8_valid(s, strlen(s)))
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f || *s == '"')
			abort();
}

static void grpcweb(const uint8_t *p, size_t n)
{
	const uint8_t *msg;
	size_t len;
	int status;
	char gmsg[200], why[200];

	if (parca_grpcweb_parse(&msg, &len, &status, gmsg, sizeof(gmsg), p, n, why, sizeof(why)) <
	    0) {
		if (!why[0])
			abort();
		return;
	}
	if (msg && (msg < p || msg + len > p + n))
		abort();
	check_printable(gmsg, 1);
}

static void file_sd(const uint8_t *p, size_t n)
{
	target_labels names = {"release", "commit", "host"};
	target_list l = {0};
	pr_error err = PR_ERROR_INIT;

	if (file_fd < 0) {
		if ((file_fd = mkstemp(file_path)) < 0)
			abort();
		atexit(cleanup);
	}
	if (ftruncate(file_fd, 0) < 0 || pwrite(file_fd, p, n, 0) != (ssize_t)n)
		abort();
	if (targets_add(&l, "keep:1", &err) < 0)
		abort();
	if (targets_load_file_sd(&l, file_path, &names, &err) < 0) {
		if (l.n != 1 || !err.msg[0] || !strstr(err.msg, file_path))
			abort();
	} else {
		for (size_t i = 0; i < l.n; i++) {
			if (!targets_address_valid(l.v[i].address))
				abort();
			if (l.v[i].release)
				check_release(l.v[i].release);
		}
	}
	target_list_release(&l);
}

static void connect_error(const uint8_t *p, size_t n)
{
	buf b = BUF_INIT;
	char out[300];

	if (buf_put(&b, p, n) < 0)
		return;
	pyroscope_connect_error(out, sizeof(out), 500, &b);
	check_printable(out, 0);
	buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0: grpcweb(data + 1, size - 1); break;
	case 1: file_sd(data + 1, size - 1); break;
	default: connect_error(data + 1, size - 1); break;
	}
	return 0;
}
