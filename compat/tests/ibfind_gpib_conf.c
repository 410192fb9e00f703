/*
 * ibfind_gpib_conf.c -- opens the board and the named devices of a gpib.conf
 * by name (ibfind), as programs written for linux-gpib do; run with
 * IB_CONFIG=gpib/configs/gpib.conf.example (linux-gpib's example entries).
 *
 *   1. ibfind("violet"): prints the board descriptor's pad, timeout code and
 *      EOS settings (from the interface section).
 *   2. ibfind("voltmeter"), ibfind("scope"): prints each device's pad, sad,
 *      timeout code, EOS byte, and its answer to "*IDN?".
 *   3. ibfind of a name not in the file: prints ibsta's ERR bit and iberr.
 *
 * On an unexpected error it prints "error: <call> iberr=<n>" to stderr and
 * exits with status 1.
 *
 * Build: gcc -std=c99 -Wall -Wextra -Werror -I compat/include ibfind_gpib_conf.c -lgpib
 */
#include <gpib/ib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *call)
{
	if (ibsta & ERR) {
		fprintf(stderr, "error: %s iberr=%d\n", call, iberr);
		exit(1);
	}
}

static int ask(int ud, int option)
{
	int value = -1;

	ibask(ud, option, &value);
	check("ibask");
	return value;
}

static int find(const char *name)
{
	int ud = ibfind(name);

	check("ibfind");
	return ud;
}

int main(void)
{
	static const char *const devices[] = { "voltmeter", "scope" };
	char buf[256];
	size_t i;
	int ud;

	ud = find("violet");
	printf("violet: pad=%d tmo=%d eos=0x%02x reos=%d eot=%d\n",
	       ask(ud, IbaPAD), ask(ud, IbaTMO), ask(ud, IbaEOSchar),
	       ask(ud, IbaEOSrd) ? 1 : 0, ask(ud, IbaEOT));
	ibonl(ud, 0);

	for (i = 0; i < sizeof devices / sizeof devices[0]; i++) {
		ud = find(devices[i]);
		ibwrt(ud, "*IDN?\n", 6);
		check("ibwrt");
		ibrd(ud, buf, sizeof buf - 1);
		check("ibrd");
		buf[ibcnt] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		printf("%s: pad=%d sad=%d tmo=%d eos=0x%02x idn=%s\n", devices[i],
		       ask(ud, IbaPAD), ask(ud, IbaSAD), ask(ud, IbaTMO),
		       ask(ud, IbaEOSchar), buf);
		ibonl(ud, 0);
	}

	ud = ibfind("nosuch");
	printf("nosuch: ud=%d err=%d iberr=%d\n", ud, (ibsta & ERR) ? 1 : 0, iberr);
	return 0;
}
