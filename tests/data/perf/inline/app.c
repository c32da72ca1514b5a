/* A small CPU-bound program: checksum_block and parse_records both call hash_key. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static uint64_t mix(uint64_t h) { return h ^ (h >> 29); }
static uint64_t hash_key(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	h = mix(h);
	return h;
}
__attribute__((noinline)) static uint64_t checksum_block(const unsigned char *p, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i + 64 <= n; i += 16)
		s += hash_key(p + i, 48) ^ (s >> 3);
	return s;
}
__attribute__((noinline)) static uint64_t parse_records(const unsigned char *p, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i + 32 <= n; i += 64)
		s ^= hash_key(p + i, 24) + (uint64_t)p[i];
	return s;
}
__attribute__((noinline)) static uint64_t other_work(const unsigned char *p, size_t n)
{
	uint64_t s = 0;
	for (size_t r = 0; r < 8; r++)
		for (size_t i = 0; i < n; i++)
			s = s * 31 + p[i] + r;
	return s;
}
int main(int argc, char **argv)
{
	size_t n = 1 << 16, rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
	unsigned char *buf = malloc(n);
	uint64_t acc = 0;
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	for (size_t r = 0; r < rounds; r++) {
		acc += checksum_block(buf, n);
		acc += parse_records(buf, n);
		acc += other_work(buf, n / 4);
		buf[r % n]++;
	}
	printf("%llu\n", (unsigned long long)acc);
	return 0;
}
