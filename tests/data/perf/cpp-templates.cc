#include <map>
#include <vector>
#include <string>
#include <thread>
#include <functional>
#include <algorithm>
#include <unistd.h>
#include <sys/wait.h>

template <typename K, typename V, typename Cmp = std::less<K>>
struct Table {
	std::map<K, std::vector<std::pair<K, V>>, Cmp> m;
	template <typename F>
	__attribute__((noinline)) long visit(F f) const {
		long s = 0;
		for (auto &kv : m)
			for (auto &p : kv.second)
				s += f(p.first, p.second);
		return s;
	}
};

__attribute__((noinline, noipa)) long deep(int n, long acc) {
	if (n == 0) {
		for (int i = 0; i < 20000; i++) acc += (acc * 31) ^ i;
		return acc;
	}
	long r = deep(n - 1, acc + n);
	asm volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

volatile long sink;

static void work(int kind, int rounds) {
	Table<std::string, std::vector<int>> t;
	for (int i = 0; i < 200; i++)
		t.m[std::to_string(i)].push_back({std::to_string(i * 7), std::vector<int>(50, i)});
	for (int r = 0; r < rounds; r++) {
		if (kind == 0)
			sink += t.visit([](const std::string &k, const std::vector<int> &v) {
				long s = 0; for (int x : v) s += x * (long)k.size(); return s; });
		else
			sink += deep(1200, r);
	}
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	pid_t pid = fork();
	std::vector<std::thread> ts;
	for (int i = 0; i < 3; i++)
		ts.emplace_back(work, i % 2, rounds);
	for (auto &t : ts) t.join();
	if (pid > 0) waitpid(pid, nullptr, 0);
	return 0;
}
