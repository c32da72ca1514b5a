/*
 * netaddr.c: the listening address of profreg's servers (see netaddr.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/netaddr.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int netaddr_parse_listen(struct sockaddr_storage *ss, const char *listen, pr_error *err)
{
	char host[128];
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	struct addrinfo hints, *ai = NULL;
	size_t n;
	int g;

	memset(ss, 0, sizeof(*ss));
	if (!colon || colon == listen)
		return pr_error_set(err, PR_EUSAGE, "listen address '%.100s' is not ADDR:PORT",
				    listen ? listen : "");
	/*
	 * getaddrinfo takes a port modulo 65536: a mistyped 80800 would
	 * listen on 15264, and 65536 on a port of the kernel's choosing.
	 */
	n = strspn(colon + 1, "0123456789");
	if (n == 0 || n > 5 || colon[1 + n] || strtoul(colon + 1, NULL, 10) > 65535)
		return pr_error_set(err, PR_EUSAGE,
				    "listen address '%.100s': the port must be a number "
				    "from 0 to 65535", listen);
	n = (size_t)(colon - listen);
	if (listen[0] == '[' && n >= 2 && listen[n - 1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(n - 2), listen + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)n, listen);
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	if ((g = getaddrinfo(host, colon + 1, &hints, &ai)) != 0 || !ai)
		return pr_error_set(err, PR_EUSAGE,
				    "listen address '%.100s' is not a numeric ADDR:PORT: %s",
				    listen, gai_strerror(g));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}
