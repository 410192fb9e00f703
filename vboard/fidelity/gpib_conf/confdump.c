/*
 * For each name given, ibfind() it and print ibask() of every option, or the error:
 * the settings a gpib.conf gives, read back through the library under test (chosen at
 * run time by LD_LIBRARY_PATH; compiled against compat/include/gpib/ib.h).
 * Every line starts with "= " so that the library's own chatter on stdout is told apart.
 */
#define _POSIX_C_SOURCE 200809L
#include <gpib/ib.h>
#include <stdio.h>

static const struct {
	const char *name;
	int option;
} options[] = {
	{"PAD", IbaPAD},           {"SAD", IbaSAD},
	{"TMO", IbaTMO},           {"EOT", IbaEOT},
	{"PPC", IbaPPC},           {"READDR", IbaREADDR},
	{"AUTOPOLL", IbaAUTOPOLL}, {"CICPROT", IbaCICPROT},
	{"IRQ", IbaIRQ},           {"SC", IbaSC},
	{"SRE", IbaSRE},           {"EOSrd", IbaEOSrd},
	{"EOSwrt", IbaEOSwrt},     {"EOScmp", IbaEOScmp},
	{"EOSchar", IbaEOSchar},   {"PP2", IbaPP2},
	{"TIMING", IbaTIMING},     {"DMA", IbaDMA},
	{"ReadAdjust", IbaReadAdjust}, {"WriteAdjust", IbaWriteAdjust},
	{"EventQueue", IbaEventQueue}, {"SPollBit", IbaSPollBit},
	{"SendLLO", IbaSendLLO},   {"SPollTime", IbaSPollTime},
	{"PPollTime", IbaPPollTime}, {"EndBitIsNormal", IbaEndBitIsNormal},
	{"UnAddr", IbaUnAddr},     {"HSCableLength", IbaHSCableLength},
	{"Ist", IbaIst},           {"Rsv", IbaRsv},
	{"BNA", IbaBNA},           {"7BitEOS", Iba7BitEOS},
};

int main(int argc, char **argv)
{
	int i;
	unsigned k;
	for (i = 1; i < argc; i++) {
		int ud = ibfind(argv[i]);
		if (ud < 0) {
			printf("= %s ibfind err=%d\n", argv[i], ThreadIberr());
			fflush(stdout);
			continue;
		}
		printf("= %s ibfind ok\n", argv[i]);
		for (k = 0; k < sizeof options / sizeof options[0]; k++) {
			int v = -12345;
			int sta = ibask(ud, options[k].option, &v);
			if (sta & ERR)
				printf("= %s %s err=%d\n", argv[i], options[k].name, ThreadIberr());
			else
				printf("= %s %s %d\n", argv[i], options[k].name, v);
		}
		fflush(stdout);
	}
	return 0;
}
