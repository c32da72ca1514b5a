// Two lambdas called through std::function: each call goes through
// std::_Function_handler<long (long), LAMBDA>::_M_invoke, whose name
// holds a '(' inside its template arguments.
#include <cstdlib>
#include <functional>
volatile long sink;
__attribute__((noinline)) long drive(const std::function<long(long)> &f, long n) { return f(n); }
int main(int argc, char **argv)
{
	std::function<long(long)> a = [](long n) { long s = 0; for (long i = 0; i < n; i++) s += i % 7; return s; };
	std::function<long(long)> b = [](long n) { long s = 0; for (long i = 0; i < n; i++) s ^= i * 3; return s; };
	for (int k = 0; k < atoi(argv[1]); k++)
		sink += drive(a, 100000) + drive(b, 100000);
}
