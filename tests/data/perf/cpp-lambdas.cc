#include <functional>
#include <cstdio>
#include <cstdlib>
volatile long sink;
__attribute__((noinline)) long drive(const std::function<long(int)> &f, int n) { return f(n); }
int main(int argc, char **argv) {
	auto a = [](int n) __attribute__((noinline)) { long s = 0; for (int i = 0; i < n; i++) s += i % 7; return s; };
	auto b = [](int n) __attribute__((noinline)) { long s = 0; for (int i = 0; i < n; i++) s ^= i * 3; return s; };
	for (int k = 0; k < atoi(argv[1]); k++) sink += drive(a, 100000) + drive(b, 100000);
}
