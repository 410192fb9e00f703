/*
 * find_and_idn.c -- smoke test of libgpib.so.0 through the documented
 * linux-gpib C API only (compat/include/gpib/ib.h).
 *
 *   1. SendIFC(0), then FindLstn on board 0 over primary addresses 1..30.
 *   2. For every listener: ibdev(0, pad, 0, T3s, 1, 0), ibwrt "*IDN?\n",
 *      ibrd into a 256-byte buffer; prints "pad=<n> idn=<text>" with the
 *      trailing line terminator removed.
 *   3. Serial poll (ibrsp) of every listener; prints "pad=<n> stb=0x<hh>".
 *
 * Every call is followed by a check of the global ibsta for ERR; on error
 * it prints "error: <call> iberr=<n>" to stderr and exits with status 1.
 *
 * Build: gcc -Wall -Wextra -Werror -I compat/include find_and_idn.c -lgpib
 */
#include <gpib/ib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOARD       0
#define FIRST_PAD   1
#define LAST_PAD    30
#define NUM_PADS    (LAST_PAD - FIRST_PAD + 1)
#define IDN_BUFSIZE 256

static void check(const char *call)
{
	if (ibsta & ERR) {
		fprintf(stderr, "error: %s iberr=%d\n", call, iberr);
		exit(1);
	}
}

int main(void)
{
	Addr4882_t pads[NUM_PADS + 1];
	Addr4882_t found[NUM_PADS];
	int uds[NUM_PADS];
	int nfound;
	int i;

	SendIFC(BOARD);
	check("SendIFC");

	for (i = 0; i < NUM_PADS; i++)
		pads[i] = (Addr4882_t)(FIRST_PAD + i);
	pads[NUM_PADS] = NOADDR;

	FindLstn(BOARD, pads, found, NUM_PADS);
	check("FindLstn");
	nfound = ibcnt;
	if (nfound < 0 || nfound > NUM_PADS) {
		fprintf(stderr, "error: FindLstn returned ibcnt=%d\n", nfound);
		return 1;
	}

	/* Part 1: identify every listener. */
	for (i = 0; i < nfound; i++) {
		unsigned int pad = GetPAD(found[i]);
		char buf[IDN_BUFSIZE];
		long n;

		uds[i] = ibdev(BOARD, (int)pad, 0, T3s, 1, 0);
		check("ibdev");
		if (uds[i] < 0) {
			fprintf(stderr, "error: ibdev iberr=%d\n", iberr);
			return 1;
		}

		ibwrt(uds[i], "*IDN?\n", 6);
		check("ibwrt");

		/* keep one byte for the terminating NUL */
		ibrd(uds[i], buf, sizeof(buf) - 1);
		check("ibrd");
		n = ibcntl;
		if (n < 0 || n > (long)sizeof(buf) - 1) {
			fprintf(stderr, "error: ibrd returned ibcntl=%ld\n", n);
			return 1;
		}
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			n--;
		buf[n] = '\0';

		printf("pad=%u idn=%s\n", pad, buf);
	}

	/* Part 2: serial poll every listener. */
	for (i = 0; i < nfound; i++) {
		char stb = 0;

		ibrsp(uds[i], &stb);
		check("ibrsp");
		printf("pad=%u stb=0x%02x\n", GetPAD(found[i]),
			(unsigned int)(unsigned char)stb);
	}

	for (i = 0; i < nfound; i++) {
		ibonl(uds[i], 0);
		check("ibonl");
	}

	return 0;
}
