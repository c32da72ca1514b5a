#include <stdlib.h>
#include <string.h>
char *kept[4096];
static int nkept;
__attribute__((noinline)) static void keep_big(void)
{
	kept[nkept++] = memset(malloc(96 * 1024), 1, 96 * 1024);
}
__attribute__((noinline)) static void keep_small(void)
{
	kept[nkept++] = memset(malloc(32 * 1024), 1, 32 * 1024);
}
int main(void)
{
	for (int i = 0; i < 200; i++) {
		keep_big();
		keep_small();
	}
	return nkept == 400 ? 0 : 1;
}
