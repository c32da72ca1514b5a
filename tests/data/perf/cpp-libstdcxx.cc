// Spends its time formatting numbers in libstdc++ (std::ostringstream).
#include <cstdlib>
#include <sstream>
#include <string>
volatile size_t sink;
int main(int argc, char **argv)
{
	for (long k = 0; k < atol(argv[1]); k++) {
		std::ostringstream os;
		os << k << ' ' << (double)k / 3.0;
		sink += os.str().size();
	}
}
