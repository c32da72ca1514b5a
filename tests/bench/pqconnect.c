/*
 * pqconnect.c: the floor of a command that only connects: a program that
 * links libpq alone, connects with the connection string it is given,
 * runs one statement and exits. tests/bench/ingest.sh times profreg's
 * connect-only command against it.
 *
 * usage: pqconnect CONNINFO
 */
#include <libpq-fe.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	PGconn *c;
	PGresult *r;
	int ok;

	if (argc != 2) {
		fprintf(stderr, "usage: pqconnect CONNINFO\n");
		return 2;
	}
	c = PQconnectdb(argv[1]);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "pqconnect: %s", PQerrorMessage(c));
		PQfinish(c);
		return 3;
	}
	r = PQexec(c, "select 1");
	ok = PQresultStatus(r) == PGRES_TUPLES_OK;
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : 3;
}
