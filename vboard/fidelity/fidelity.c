/*
 * Differential fidelity of compat's libgpib against linux-gpib's own libgpib (issue 29).
 *
 * Compiled once against compat/include/gpib/ib.h and linked -lgpib; the library under test
 * is chosen at run time by LD_LIBRARY_PATH.  Every sequence of calls runs in a fork()ed
 * child, so each starts on a fresh library and a fresh simulated bus; the parent makes no
 * gpib call at all.  One canonical line is printed per call.
 *
 *   fidelity gen SEED FIRST COUNT   run sequences FIRST .. FIRST+COUNT-1 of SEED
 *   fidelity list SEED INDEX        print the call list of one sequence (no gpib calls)
 *   fidelity run FILE               run the call list in FILE (one call a line) as a sequence
 *
 * A call line is "op arg...": integers, or sN for the descriptor kept in slot N (ibdev and
 * ibfind store their result in the slot given as their first argument).
 *
 * With FIDELITY_STATE_COPY=1 and GPIB_VBOARD_STATE set (linux-gpib's library over the
 * virtual board), each child works on its own copy of the board state files that
 * gpib_config left there, so that a sequence taking a board offline does not leak into
 * the next one.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <gpib/ib.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CALLS 64
#define MAX_ARGS 7
#define NSLOTS 4
#define SLOT_BASE 1000

/* Strings written to the instruments (by index).  Not an empty one: linux-gpib's ibwrt of
 * 0 bytes returns a variable it never set (lib/ibWrt.c:128-160, my_ibwrt's retval when
 * the loop does not run and send_unt_unl is off), so its answer is undefined. */
static const char *const texts[] = {
	"*IDN?\n", "*SRE 16\n", "*SRE 32;*ESE 1;*OPC\n", "*CLS\n", "*STB?\n",
	"*ESR?\n", "MEAS:VOLT?\n", "*RST\n", "*OPC?\n", "BOGUS\n",
	"*IDN?", "NEW 4\n", "NEW?\n", "ERR?\n", "RBLD 1,3\n",
	"*SRE 16;*IDN?\n", "*TRG\n", "*ESE 60\n", "\n", "*IDN?\r\n",
	"*SRE 48;*ESE 255;*OPC;*IDN?\n",
};
#define NTEXTS ((int)(sizeof texts / sizeof texts[0]))

/* Command byte strings for ibcmd (by index), with their lengths. */
static const struct {
	const char *b;
	int n;
} cmds[] = {
	{"\x3f\x5f", 2},             /* UNL UNT */
	{"\x3f\x5f\x40\x36", 4},     /* UNL UNT MTA0 MLA22 */
	{"\x3f\x5f\x56\x20", 4},     /* UNL UNT MTA22 MLA0 */
	{"\x14", 1},                 /* DCL */
	{"\x3f\x36\x08", 3},         /* UNL MLA22 GET */
	{"\x3f\x36\x04", 3},         /* UNL MLA22 SDC */
	{"\x3f\x36\x01", 3},         /* UNL MLA22 GTL */
	{"\x11", 1},                 /* LLO */
	{"\x3f\x5f\x40\x2b", 4},     /* UNL UNT MTA0 MLA11 */
	{"\x3f\x5f\x4b\x20", 4},     /* UNL UNT MTA11 MLA0 */
	{"\x18\x56", 2},             /* SPE MTA22 */
	{"\x19\x5f", 2},             /* SPD UNT */
	{"", 0},                     /* nothing */
	{"\x3f\x5f\x40\x21", 4},     /* UNL UNT MTA0 MLA1 (nobody) */
};
#define NCMDS ((int)(sizeof cmds / sizeof cmds[0]))

static const char *const names[] = {"gpib0", "voltmeter", "hp3565", "nosuch", "gpib1", ""};
#define NNAMES ((int)(sizeof names / sizeof names[0]))

enum op {
	OP_IBDEV, OP_IBFIND, OP_IBWRT, OP_IBRD, OP_IBCMD, OP_IBCLR, OP_IBTRG, OP_IBRSP,
	OP_IBWAIT, OP_IBCONFIG, OP_IBASK, OP_IBEOS, OP_IBEOT, OP_IBTMO, OP_IBLN, OP_IBLINES,
	OP_IBSIC, OP_IBSRE, OP_IBLOC, OP_IBONL, OP_IBGTS, OP_IBCAC, OP_IBPAD, OP_IBSAD,
	OP_IBRPP, OP_IBSTOP, OP_SENDIFC, OP_FINDLSTN, OP_SEND, OP_RECEIVE, OP_READSTATUSBYTE,
	OP_DEVCLEAR, OP_TRIGGER, OP_ENABLEREMOTE, OP_ENABLELOCAL, OP_TESTSRQ, OP_SENDLLO,
	OP_RESETSYS, OP_SENDCMDS, OP_FINDRQS, OP_WAITSRQ, OP_COUNT
};

static const struct {
	const char *name;
	int nargs;
} ops[OP_COUNT] = {
	[OP_IBDEV] = {"ibdev", 7},      [OP_IBFIND] = {"ibfind", 2},
	[OP_IBWRT] = {"ibwrt", 2},      [OP_IBRD] = {"ibrd", 2},
	[OP_IBCMD] = {"ibcmd", 2},      [OP_IBCLR] = {"ibclr", 1},
	[OP_IBTRG] = {"ibtrg", 1},      [OP_IBRSP] = {"ibrsp", 1},
	[OP_IBWAIT] = {"ibwait", 2},    [OP_IBCONFIG] = {"ibconfig", 3},
	[OP_IBASK] = {"ibask", 2},      [OP_IBEOS] = {"ibeos", 2},
	[OP_IBEOT] = {"ibeot", 2},      [OP_IBTMO] = {"ibtmo", 2},
	[OP_IBLN] = {"ibln", 3},        [OP_IBLINES] = {"iblines", 1},
	[OP_IBSIC] = {"ibsic", 1},      [OP_IBSRE] = {"ibsre", 2},
	[OP_IBLOC] = {"ibloc", 1},      [OP_IBONL] = {"ibonl", 2},
	[OP_IBGTS] = {"ibgts", 2},      [OP_IBCAC] = {"ibcac", 2},
	[OP_IBPAD] = {"ibpad", 2},      [OP_IBSAD] = {"ibsad", 2},
	[OP_IBRPP] = {"ibrpp", 1},      [OP_IBSTOP] = {"ibstop", 1},
	[OP_SENDIFC] = {"SendIFC", 1},  [OP_FINDLSTN] = {"FindLstn", 2},
	[OP_SEND] = {"Send", 4},        [OP_RECEIVE] = {"Receive", 4},
	[OP_READSTATUSBYTE] = {"ReadStatusByte", 2},
	[OP_DEVCLEAR] = {"DevClear", 2}, [OP_TRIGGER] = {"Trigger", 2},
	[OP_ENABLEREMOTE] = {"EnableRemote", 2},
	[OP_ENABLELOCAL] = {"EnableLocal", 2},
	[OP_TESTSRQ] = {"TestSRQ", 1},  [OP_SENDLLO] = {"SendLLO", 1},
	[OP_RESETSYS] = {"ResetSys", 2}, [OP_SENDCMDS] = {"SendCmds", 2},
	[OP_FINDRQS] = {"FindRQS", 2},  [OP_WAITSRQ] = {"WaitSRQ", 1},
};

struct call {
	int op;
	int a[MAX_ARGS];
};

/* ---------------------------------------------------------------- generation */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int rnd(int n) { return (int)(rng_next() % (uint64_t)n); }

static int pick(const int *v, int n) { return v[rnd(n)]; }

/* A descriptor argument: mostly the device in slot 0, sometimes the others, the board
 * index, or a descriptor that is not open.  Not one outside 0 .. 4095: linux-gpib's
 * library checks it, then indexes its table with it anyway on the way out
 * (ibutil.c:457, general_exit_library) and may crash. */
static int gen_desc(void)
{
	static const int bad[] = {1, 3, 40, 100, 4095, 2};
	int r = rnd(100);
	if (r < 50) return SLOT_BASE + 0;
	if (r < 62) return SLOT_BASE + 1;
	if (r < 68) return SLOT_BASE + 2;
	if (r < 94) return 0;
	return pick(bad, 6);
}

/* A board index: 0, or 1 and 2 that the bench does not have.  Not a negative one:
 * linux-gpib's library asserts on it (ib_internal.h, interfaceBoard) and aborts. */
static int gen_board(void)
{
	return rnd(10) < 9 ? 0 : 1 + rnd(2);
}

static int gen_tmo(void)
{
	static const int t[] = {T10us, T100us, T1ms, T3ms, T10ms, T10ms, T30ms, T30ms};
	return pick(t, 8);
}

static int gen_eos(void)
{
	/* Not XEOS: linux-gpib's ibwrt then loops for ever on a buffer holding the EOS
	 * byte (lib/ibWrt.c:145-154: find_eos finds it at offset 0 of the rest, so each
	 * turn sends 0 bytes). */
	static const int e[] = {0, 0x0a, REOS | 0x0a, REOS | 0x0d, BIN | 0x0a,
				REOS | BIN | 0x0a, REOS | 0x0a, REOS | 0x8a, REOS | BIN | 0x8a,
				REOS | 0x2c};
	return pick(e, 10);
}

static int gen_addr(void)
{
	static const int a[] = {22, 22, 22, 11, 11, 5, 0, 22 | (0x60 << 8), 31, 0xffff};
	return pick(a, 10);
}

static void gen_option(int *opt, int *val)
{
	static const int o[] = {IbcPAD, IbcSAD, IbcTMO, IbcEOT, IbcPPC, IbcREADDR, IbcAUTOPOLL,
				IbcCICPROT, IbcIRQ, IbcSC, IbcSRE, IbcEOSrd, IbcEOSwrt, IbcEOScmp,
				IbcEOSchar, IbcPP2, IbcTIMING, IbcDMA, IbcReadAdjust,
				IbcWriteAdjust, IbcEventQueue, IbcSPollBit, IbcSendLLO,
				IbcSPollTime, IbcPPollTime, IbcEndBitIsNormal, IbcUnAddr,
				IbcHSCableLength, IbcIst, IbcRsv, IbaBNA, Iba7BitEOS, 0x40};
	static const int v[] = {0, 1, 1, 2, 10, 0x0a, 0x60, 0x61, 31, 32, 255, -1};
	*opt = pick(o, (int)(sizeof o / sizeof o[0]));
	*val = pick(v, (int)(sizeof v / sizeof v[0]));
	/* XEOS through IbcEOSwrt: see gen_eos. */
	if (*opt == IbcEOSwrt) *val = 0;
	if (*opt == IbcTMO || *opt == IbcSPollTime || *opt == IbcPPollTime)
		*val = rnd(8) == 0 ? 20 : gen_tmo();
}

static void gen_call(struct call *c)
{
	static const int counts[] = {1, 3, 5, 10, 24, 25, 26, 100, 4096, 0};
	/* Without TIMO a wait for END, RQS or SRQI can last for ever, on both libraries. */
	static const int masks[] = {0, TIMO | RQS, TIMO | SRQI, TIMO | CMPL, TIMO | END, CMPL,
				    TIMO | RQS | CMPL, TIMO | SRQI | END, TIMO | END | RQS | CMPL, TIMO,
				    TIMO | 0x8000, TIMO | 0x0800 | 0x1000 | 0x0100 | 0x2000 | 0x20 | 0x10 | 0x8 | 0x4};
	static const int weights[OP_COUNT] = {
		[OP_IBDEV] = 3, [OP_IBFIND] = 3, [OP_IBWRT] = 14, [OP_IBRD] = 12,
		[OP_IBCMD] = 4, [OP_IBCLR] = 3, [OP_IBTRG] = 2, [OP_IBRSP] = 6,
		[OP_IBWAIT] = 5, [OP_IBCONFIG] = 6, [OP_IBASK] = 6, [OP_IBEOS] = 3,
		[OP_IBEOT] = 2, [OP_IBTMO] = 2, [OP_IBLN] = 2, [OP_IBLINES] = 2,
		[OP_IBSIC] = 1, [OP_IBSRE] = 1, [OP_IBLOC] = 2, [OP_IBONL] = 1,
		[OP_IBGTS] = 1, [OP_IBCAC] = 1, [OP_IBPAD] = 1, [OP_IBSAD] = 1,
		[OP_IBRPP] = 1, [OP_IBSTOP] = 1, [OP_SENDIFC] = 1, [OP_FINDLSTN] = 1,
		[OP_SEND] = 3, [OP_RECEIVE] = 3, [OP_READSTATUSBYTE] = 3,
		[OP_DEVCLEAR] = 1, [OP_TRIGGER] = 1, [OP_ENABLEREMOTE] = 1,
		[OP_ENABLELOCAL] = 1, [OP_TESTSRQ] = 2, [OP_SENDLLO] = 1,
		[OP_RESETSYS] = 1, [OP_SENDCMDS] = 1, [OP_FINDRQS] = 1, [OP_WAITSRQ] = 1,
	};
	int total = 0, r, i;
	for (i = 0; i < OP_COUNT; i++) total += weights[i];
	r = rnd(total);
	for (i = 0; i < OP_COUNT; i++) {
		if (r < weights[i]) break;
		r -= weights[i];
	}
	memset(c, 0, sizeof *c);
	c->op = i;
	switch (i) {
	case OP_IBDEV:
		c->a[0] = SLOT_BASE + 1 + rnd(NSLOTS - 1);
		c->a[1] = gen_board();
		/* Not a pad above 30: linux-gpib's ibdev then dereferences a null
		 * descriptor (ibdev.c:90, my_ibdev) and crashes. */
		c->a[2] = pick((const int[]){22, 22, 11, 5, 0, 30}, 6);
		c->a[3] = rnd(6) == 0 ? 0x60 + rnd(3) : 0;
		c->a[4] = gen_tmo();
		c->a[5] = rnd(4) != 0;
		c->a[6] = gen_eos();
		break;
	case OP_IBFIND:
		c->a[0] = SLOT_BASE + 1 + rnd(NSLOTS - 1);
		c->a[1] = rnd(NNAMES);
		break;
	case OP_IBWRT: c->a[0] = gen_desc(); c->a[1] = rnd(NTEXTS); break;
	case OP_IBRD: c->a[0] = gen_desc(); c->a[1] = pick(counts, 10); break;
	case OP_IBCMD: c->a[0] = gen_desc(); c->a[1] = rnd(NCMDS); break;
	case OP_IBWAIT: c->a[0] = gen_desc(); c->a[1] = pick(masks, 12); break;
	case OP_IBCONFIG:
		/* Not IbaBNA: linux-gpib's ibconfig of it on a device crashes. */
		c->a[0] = gen_desc();
		do gen_option(&c->a[1], &c->a[2]); while (c->a[1] == IbaBNA);
		break;
	case OP_IBASK: c->a[0] = gen_desc(); gen_option(&c->a[1], &c->a[2]); break;
	case OP_IBEOS: c->a[0] = gen_desc(); c->a[1] = gen_eos(); break;
	case OP_IBEOT: c->a[0] = gen_desc(); c->a[1] = rnd(3); break;
	case OP_IBTMO: c->a[0] = gen_desc(); c->a[1] = rnd(10) == 0 ? 18 : gen_tmo(); break;
	case OP_IBLN: c->a[0] = gen_desc(); c->a[1] = gen_addr() & 0xff; c->a[2] = rnd(3) ? 0 : 0x60 + rnd(2); break;
	case OP_IBSRE: case OP_IBONL: case OP_IBGTS: case OP_IBCAC:
		c->a[0] = rnd(3) ? 0 : gen_desc(); c->a[1] = rnd(2); break;
	case OP_IBPAD: c->a[0] = gen_desc(); c->a[1] = pick((const int[]){22, 11, 5, 31, 0}, 5); break;
	case OP_IBSAD: c->a[0] = gen_desc(); c->a[1] = pick((const int[]){0, 0x60, 0x61, 5, 0x7f}, 5); break;
	case OP_SEND: c->a[0] = gen_board(); c->a[1] = gen_addr(); c->a[2] = rnd(NTEXTS); c->a[3] = pick((const int[]){0, 1, 2, 0x100 + 0x0a}, 4); break;
	case OP_RECEIVE: c->a[0] = gen_board(); c->a[1] = gen_addr(); c->a[2] = pick(counts, 10); c->a[3] = pick((const int[]){0x100, 0x0a, 0x100, 0x2c}, 4); break;
	case OP_READSTATUSBYTE: case OP_DEVCLEAR: case OP_TRIGGER:
		c->a[0] = gen_board(); c->a[1] = gen_addr(); break;
	case OP_FINDLSTN: case OP_ENABLEREMOTE: case OP_ENABLELOCAL: case OP_RESETSYS:
	case OP_FINDRQS:
		c->a[0] = gen_board(); c->a[1] = rnd(4); break;
	case OP_SENDCMDS: c->a[0] = gen_board(); c->a[1] = rnd(NCMDS); break;
	case OP_SENDIFC: case OP_TESTSRQ: case OP_SENDLLO: case OP_WAITSRQ:
		c->a[0] = gen_board(); break;
	default: c->a[0] = gen_desc(); break;
	}
}

/* Sequence INDEX of SEED: a device on the SCPI instrument in slot 0, then 4 to 14 calls.
 * A wait that could last a descriptor's default timeout (T3s) gets a short timeout first. */
static int gen_sequence(uint64_t seed, long index, struct call *calls)
{
	int n = 0, k, len;
	int short_tmo[SLOT_BASE + NSLOTS + 1] = {0};
	rng_state = seed;
	rng_state = rng_next() ^ (uint64_t)index;
	rng_state = rng_next();
	calls[n].op = OP_IBDEV;
	memset(calls[n].a, 0, sizeof calls[n].a);
	calls[n].a[0] = SLOT_BASE;
	calls[n].a[2] = 22;
	calls[n].a[4] = rnd(2) ? T10ms : T30ms;
	calls[n].a[5] = 1;
	calls[n].a[6] = rnd(4) == 0 ? REOS | 0x0a : 0;
	n++;
	short_tmo[SLOT_BASE] = 1;
	len = 4 + rnd(11);
	for (k = 0; k < len && n < MAX_CALLS - 2; k++) {
		struct call c;
		gen_call(&c);
		if (c.op == OP_IBFIND) short_tmo[c.a[0]] = 0;
		if (c.op == OP_IBDEV) short_tmo[c.a[0]] = 1;
		if (c.op == OP_IBONL) memset(short_tmo, 0, sizeof short_tmo);
		if ((c.op == OP_IBWAIT && (c.a[1] & TIMO) &&
		     c.a[0] >= 0 && c.a[0] <= SLOT_BASE + NSLOTS && !short_tmo[c.a[0]]) ||
		    (c.op == OP_WAITSRQ && c.a[0] == 0 && !short_tmo[0])) {
			calls[n].op = OP_IBTMO;
			memset(calls[n].a, 0, sizeof calls[n].a);
			calls[n].a[0] = c.a[0];
			calls[n].a[1] = T10ms;
			n++;
			short_tmo[c.a[0]] = 1;
		}
		calls[n++] = c;
	}
	return n;
}

/* ---------------------------------------------------------------- text form */

static void format_arg(char *out, size_t size, int v)
{
	if (v >= SLOT_BASE && v < SLOT_BASE + NSLOTS)
		snprintf(out, size, "s%d", v - SLOT_BASE);
	else
		snprintf(out, size, "%d", v);
}

static void print_call(FILE *f, const struct call *c)
{
	int i;
	char buf[32];
	fputs(ops[c->op].name, f);
	for (i = 0; i < ops[c->op].nargs; i++) {
		format_arg(buf, sizeof buf, c->a[i]);
		fprintf(f, " %s", buf);
	}
}

static int parse_call(const char *line, struct call *c)
{
	char name[64];
	int off = 0, i;
	const char *p = line;
	memset(c, 0, sizeof *c);
	if (sscanf(p, "%63s%n", name, &off) != 1) return 0;
	p += off;
	for (i = 0; i < OP_COUNT; i++)
		if (strcmp(name, ops[i].name) == 0) break;
	if (i == OP_COUNT) return -1;
	c->op = i;
	for (i = 0; i < ops[c->op].nargs; i++) {
		char tok[32];
		if (sscanf(p, "%31s%n", tok, &off) != 1) return -1;
		p += off;
		if (tok[0] == 's')
			c->a[i] = SLOT_BASE + atoi(tok + 1);
		else
			c->a[i] = (int)strtol(tok, NULL, 0);
	}
	return 1;
}

/* ---------------------------------------------------------------- execution */

static int slots[NSLOTS];

static int desc(int v)
{
	if (v >= SLOT_BASE && v < SLOT_BASE + NSLOTS) return slots[v - SLOT_BASE];
	return v;
}

static void print_bytes(const unsigned char *b, long n)
{
	long i;
	putchar('"');
	for (i = 0; i < n; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\')
			putchar(b[i]);
		else
			printf("\\x%02x", b[i]);
	}
	putchar('"');
}

static void print_status(void)
{
	int sta = ThreadIbsta();
	printf(" sta=%04x", sta);
	if (sta & ERR) printf(" err=%d", ThreadIberr());
	printf(" cnt=%ld", ThreadIbcntl());
}

static void addr_list(int kind, Addr4882_t *list)
{
	/* 0: 22; 1: 11 and 22; 2: empty; 3: 5, 22 (5 is nobody) */
	int n = 0;
	if (kind == 0) list[n++] = 22;
	if (kind == 1) { list[n++] = 11; list[n++] = 22; }
	if (kind == 3) { list[n++] = 5; list[n++] = 22; }
	list[n] = NOADDR;
}

/* What reached the bus (FIDELITY_BUS set): both libraries print the simulated bus's
 * events on stderr with GPIB_SIM_TRACE ("gpib-sim: <time> ms  board N  <event>"). The
 * child sends its stderr to a scratch file and, after each call, prints the events the
 * call caused as "bus board N  <event>" lines, without the time (the two libraries take
 * their own), so that they are compared like the calls. Other stderr lines (libgpib's
 * own messages) are left out. */
static FILE *bus_log;

static void bus_begin(void)
{
	char path[] = "/tmp/fidelity-bus.XXXXXX";
	int w, fd;
	if (!getenv("FIDELITY_BUS")) return;
	fd = mkstemp(path);
	if (fd < 0) return;
	w = open(path, O_WRONLY | O_APPEND);
	unlink(path);
	if (w < 0) {
		close(fd);
		return;
	}
	fflush(stderr);
	dup2(w, STDERR_FILENO);
	close(w);
	bus_log = fdopen(fd, "r");
}

static void bus_lines(void)
{
	char line[1024];
	if (!bus_log) return;
	clearerr(bus_log);
	while (fgets(line, sizeof line, bus_log)) {
		const char *ev;
		if (strncmp(line, "gpib-sim: ", 10) != 0) continue;
		ev = strstr(line, " ms  ");
		printf("bus %s", ev ? ev + 5 : line + 10);
		if (!strchr(line, '\n')) putchar('\n');
	}
	fflush(stdout);
}

static void run_call(const struct call *c)
{
	unsigned char buf[4200];
	int ret = 0, has_ret = 1, v = 0, i;
	short s = 0;
	char ch = 0;
	long got = -1;
	Addr4882_t list[8], result[16];
	const int *a = c->a;

	memset(buf, 0, sizeof buf);
	print_call(stdout, c);
	fflush(stdout);
	switch (c->op) {
	case OP_IBDEV:
		ret = ibdev(a[1], a[2], a[3], a[4], a[5], a[6]);
		slots[a[0] - SLOT_BASE] = ret;
		break;
	case OP_IBFIND:
		ret = ibfind(names[a[1] % NNAMES]);
		slots[a[0] - SLOT_BASE] = ret;
		break;
	case OP_IBWRT: {
		const char *t = texts[a[1] % NTEXTS];
		ret = ibwrt(desc(a[0]), t, (long)strlen(t));
		break;
	}
	case OP_IBRD:
		ret = ibrd(desc(a[0]), buf, a[1]);
		got = ThreadIbcntl();
		break;
	case OP_IBCMD: ret = ibcmd(desc(a[0]), cmds[a[1] % NCMDS].b, cmds[a[1] % NCMDS].n); break;
	case OP_IBCLR: ret = ibclr(desc(a[0])); break;
	case OP_IBTRG: ret = ibtrg(desc(a[0])); break;
	case OP_IBRSP:
		ret = ibrsp(desc(a[0]), &ch);
		if (!(ThreadIbsta() & ERR)) printf(" stb=%02x", (unsigned char)ch);
		break;
	case OP_IBWAIT: ret = ibwait(desc(a[0]), a[1]); break;
	case OP_IBCONFIG: ret = ibconfig(desc(a[0]), a[1], a[2]); break;
	case OP_IBASK:
		ret = ibask(desc(a[0]), a[1], &v);
		if (!(ThreadIbsta() & ERR)) printf(" value=%d", v);
		break;
	case OP_IBEOS: ret = ibeos(desc(a[0]), a[1]); break;
	case OP_IBEOT: ret = ibeot(desc(a[0]), a[1]); break;
	case OP_IBTMO: ret = ibtmo(desc(a[0]), a[1]); break;
	case OP_IBLN:
		ret = ibln(desc(a[0]), a[1], a[2], &s);
		if (!(ThreadIbsta() & ERR)) printf(" found=%d", s);
		break;
	case OP_IBLINES:
		ret = iblines(desc(a[0]), &s);
		if (!(ThreadIbsta() & ERR)) printf(" lines=%04x", (unsigned short)s);
		break;
	case OP_IBSIC: ret = ibsic(desc(a[0])); break;
	case OP_IBSRE: ret = ibsre(desc(a[0]), a[1]); break;
	case OP_IBLOC: ret = ibloc(desc(a[0])); break;
	case OP_IBONL: ret = ibonl(desc(a[0]), a[1]); break;
	case OP_IBGTS: ret = ibgts(desc(a[0]), a[1]); break;
	case OP_IBCAC: ret = ibcac(desc(a[0]), a[1]); break;
	case OP_IBPAD: ret = ibpad(desc(a[0]), a[1]); break;
	case OP_IBSAD: ret = ibsad(desc(a[0]), a[1]); break;
	case OP_IBRPP:
		ret = ibrpp(desc(a[0]), &ch);
		if (!(ThreadIbsta() & ERR)) printf(" ppr=%02x", (unsigned char)ch);
		break;
	case OP_IBSTOP: ret = ibstop(desc(a[0])); break;
	case OP_SENDIFC: has_ret = 0; SendIFC(a[0]); break;
	case OP_FINDLSTN:
		has_ret = 0;
		{
			Addr4882_t pads[] = {5, 11, 22, 30, NOADDR};
			if (a[1] == 2) pads[0] = NOADDR;
			for (i = 0; i < 16; i++) result[i] = 0;
			FindLstn(a[0], pads, result, a[1] == 1 ? 1 : 8);
			if (!(ThreadIbsta() & ERR)) {
				printf(" found=");
				for (i = 0; i < ThreadIbcnt() && i < 16; i++) printf("%s%04x", i ? "," : "", result[i]);
			}
		}
		break;
	case OP_SEND: {
		const char *t = texts[a[2] % NTEXTS];
		has_ret = 0;
		Send(a[0], (Addr4882_t)a[1], t, (long)strlen(t), a[3]);
		break;
	}
	case OP_RECEIVE:
		has_ret = 0;
		Receive(a[0], (Addr4882_t)a[1], buf, a[2], a[3]);
		got = ThreadIbcntl();
		break;
	case OP_READSTATUSBYTE:
		has_ret = 0;
		ReadStatusByte(a[0], (Addr4882_t)a[1], &s);
		if (!(ThreadIbsta() & ERR)) printf(" stb=%02x", (unsigned short)s);
		break;
	case OP_DEVCLEAR: has_ret = 0; DevClear(a[0], (Addr4882_t)a[1]); break;
	case OP_TRIGGER: has_ret = 0; Trigger(a[0], (Addr4882_t)a[1]); break;
	case OP_ENABLEREMOTE: has_ret = 0; addr_list(a[1], list); EnableRemote(a[0], list); break;
	case OP_ENABLELOCAL: has_ret = 0; addr_list(a[1], list); EnableLocal(a[0], list); break;
	case OP_RESETSYS: has_ret = 0; addr_list(a[1], list); ResetSys(a[0], list); break;
	case OP_FINDRQS:
		has_ret = 0;
		addr_list(a[1], list);
		s = -1;
		FindRQS(a[0], list, &s);
		if (!(ThreadIbsta() & ERR)) printf(" stb=%02x", (unsigned short)s);
		break;
	case OP_TESTSRQ:
		has_ret = 0;
		TestSRQ(a[0], &s);
		if (!(ThreadIbsta() & ERR)) printf(" srq=%d", s);
		break;
	case OP_WAITSRQ:
		has_ret = 0;
		WaitSRQ(a[0], &s);
		if (!(ThreadIbsta() & ERR)) printf(" srq=%d", s);
		break;
	case OP_SENDLLO: has_ret = 0; SendLLO(a[0]); break;
	case OP_SENDCMDS: has_ret = 0; SendCmds(a[0], cmds[a[1] % NCMDS].b, cmds[a[1] % NCMDS].n); break;
	default: break;
	}
	printf(" ->");
	if (has_ret) printf(" ret=%d", ret);
	print_status();
	/* The bytes read: on success or a timeout (ibcntl holds errno after EDVR). */
	if (got > 0 && got <= (long)sizeof buf &&
	    (!(ThreadIbsta() & ERR) || ThreadIberr() == EABO)) {
		printf(" data=");
		print_bytes(buf, got);
	}
	putchar('\n');
	fflush(stdout);
	bus_lines();
}

/* ---------------------------------------------------------------- children */

#define MAX_STATE 16
static char *state_data[MAX_STATE];
static size_t state_len[MAX_STATE];
static const char *state_dir;

static void load_state(void)
{
	const char *copy = getenv("FIDELITY_STATE_COPY");
	int m;
	state_dir = getenv("GPIB_VBOARD_STATE");
	if (!copy || strcmp(copy, "1") != 0 || !state_dir) {
		state_dir = NULL;
		return;
	}
	for (m = 0; m < MAX_STATE; m++) {
		char path[4096];
		FILE *f;
		snprintf(path, sizeof path, "%s/gpib%d", state_dir, m);
		f = fopen(path, "rb");
		if (!f) continue;
		state_data[m] = malloc(4096);
		if (state_data[m]) state_len[m] = fread(state_data[m], 1, 4096, f);
		fclose(f);
	}
}

static char child_dir[4200];

static void child_state(void)
{
	int m;
	if (!state_dir) return;
	snprintf(child_dir, sizeof child_dir, "%s.%ld", state_dir, (long)getpid());
	if (mkdir(child_dir, 0700) != 0 && errno != EEXIST) return;
	for (m = 0; m < MAX_STATE; m++) {
		char path[4300];
		FILE *f;
		if (!state_data[m]) continue;
		snprintf(path, sizeof path, "%s/gpib%d", child_dir, m);
		f = fopen(path, "wb");
		if (!f) continue;
		fwrite(state_data[m], 1, state_len[m], f);
		fclose(f);
	}
	setenv("GPIB_VBOARD_STATE", child_dir, 1);
}

static void child_state_cleanup(void)
{
	int m;
	if (!state_dir || !child_dir[0]) return;
	for (m = 0; m < MAX_STATE; m++) {
		char path[4300];
		snprintf(path, sizeof path, "%s/gpib%d", child_dir, m);
		unlink(path);
	}
	rmdir(child_dir);
}

static void run_sequence(const char *label, const struct call *calls, int n)
{
	pid_t pid;
	int status, i;
	printf("## %s\n", label);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		child_state();
		bus_begin();
		/* A call that hangs ends the child (SIGALRM) after FIDELITY_ALARM seconds. */
		alarm(getenv("FIDELITY_ALARM") ? (unsigned)atoi(getenv("FIDELITY_ALARM")) : 5u);
		for (i = 0; i < NSLOTS; i++) slots[i] = -1;
		for (i = 0; i < n; i++) run_call(&calls[i]);
		fflush(stdout);
		child_state_cleanup();
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("!! child ended abnormally (%s %d)\n", WIFSIGNALED(status) ? "signal" : "status",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		fflush(stdout);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: fidelity gen SEED FIRST COUNT | list SEED INDEX | run FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct call calls[MAX_CALLS];
	int n;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc < 2) return usage();
	if (strcmp(argv[1], "gen") == 0 && argc == 5) {
		uint64_t seed = strtoull(argv[2], NULL, 0);
		long first = strtol(argv[3], NULL, 0), count = strtol(argv[4], NULL, 0), i;
		load_state();
		for (i = first; i < first + count; i++) {
			char label[64];
			n = gen_sequence(seed, i, calls);
			snprintf(label, sizeof label, "seq %ld", i);
			run_sequence(label, calls, n);
		}
		return 0;
	}
	if (strcmp(argv[1], "list") == 0 && argc == 4) {
		int i;
		n = gen_sequence(strtoull(argv[2], NULL, 0), strtol(argv[3], NULL, 0), calls);
		for (i = 0; i < n; i++) {
			print_call(stdout, &calls[i]);
			putchar('\n');
		}
		return 0;
	}
	if (strcmp(argv[1], "run") == 0 && argc == 3) {
		char line[512];
		FILE *f = strcmp(argv[2], "-") == 0 ? stdin : fopen(argv[2], "r");
		if (!f) {
			perror(argv[2]);
			return 2;
		}
		n = 0;
		while (n < MAX_CALLS && fgets(line, sizeof line, f)) {
			int r = parse_call(line, &calls[n]);
			if (r < 0) {
				fprintf(stderr, "bad call line: %s", line);
				return 2;
			}
			if (r > 0) n++;
		}
		if (f != stdin) fclose(f);
		load_state();
		run_sequence("replay", calls, n);
		return 0;
	}
	return usage();
}
