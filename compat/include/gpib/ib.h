/*
 * gpib/ib.h -- linux-gpib compatible C API of the simulated GPIB bus.
 *
 * Declares the interface of linux-gpib's <gpib/ib.h> (user library 4.3.x,
 * libgpib.so.0) with the same identifiers, types and constant values, so
 * that C programs and Rust bindings generated from this header
 * (linux-gpib-sys 0.1.4 runs bindgen over <gpib/ib.h>) work unchanged
 * against our libgpib.so.0 built on the simulator.
 *
 * Written for this project from the linux-gpib documentation and the
 * bindings shipped in linux-gpib-sys 0.1.4 (src/prebind/linux_gpib.rs);
 * compat/SYMBOLS.md lists every symbol and constant and where it came from.
 *
 * Notes on the layout:
 *  - Enumerations keep linux-gpib's tag names (ibsta_bit_numbers,
 *    ibsta_bits, iberr_code, gpib_timeout, ...): bindgen names the Rust
 *    constants "<tag>_<enumerator>" and linux-gpib-rs refers to some of
 *    them by that name (e.g. ibsta_bit_numbers_ERR_NUM).
 *  - linux-gpib 4.3.x spells enumerators in upper case (IBA_PAD, VALID_DAV,
 *    EVENT_DEV_CLR...) and keeps the historical CamelCase spellings
 *    (IbaPAD, ValidDAV, EventDevClr...) as macros.  Both are provided.
 *  - Descriptors: board descriptors 0..GPIB_MAX_NUM_BOARDS-1 are the board
 *    indices; the 488.2 functions take a board descriptor/index.
 *  - Secondary addresses follow the NI convention everywhere (ibdev, ibsad,
 *    ibln, MakeAddr): 0 = none, 0x60..0x7f = secondary address 0..31.
 */
#ifndef _PUBLIC_GPIB_H
#define _PUBLIC_GPIB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Limits and version (gpib.h / gpib_version.h)                       */
/* ------------------------------------------------------------------ */

#define GPIB_MAX_NUM_BOARDS      16
#define GPIB_MAX_NUM_DESCRIPTORS 0x1000

/* API level this header mirrors (linux-gpib 4.3.7). */
#define GPIB_MAJOR_VERSION 4
#define GPIB_MINOR_VERSION 3
#define GPIB_MICRO_VERSION 7

/* ------------------------------------------------------------------ */
/* ibsta                                                              */
/* ------------------------------------------------------------------ */

enum ibsta_bit_numbers {
	DCAS_NUM  = 0,
	DTAS_NUM  = 1,
	LACS_NUM  = 2,
	TACS_NUM  = 3,
	ATN_NUM   = 4,
	CIC_NUM   = 5,
	REM_NUM   = 6,
	LOK_NUM   = 7,
	CMPL_NUM  = 8,
	EVENT_NUM = 9,
	SPOLL_NUM = 10,
	RQS_NUM   = 11,
	SRQI_NUM  = 12,
	END_NUM   = 13,
	TIMO_NUM  = 14,
	ERR_NUM   = 15
};

/* Status word returned by every traditional call and left in ibsta. */
enum ibsta_bits {
	DCAS  = 1 << DCAS_NUM,   /* 0x0001 device clear received          */
	DTAS  = 1 << DTAS_NUM,   /* 0x0002 device trigger received        */
	LACS  = 1 << LACS_NUM,   /* 0x0004 board addressed as listener    */
	TACS  = 1 << TACS_NUM,   /* 0x0008 board addressed as talker      */
	ATN   = 1 << ATN_NUM,    /* 0x0010 ATN asserted                   */
	CIC   = 1 << CIC_NUM,    /* 0x0020 board is controller-in-charge  */
	REM   = 1 << REM_NUM,    /* 0x0040 remote state                   */
	LOK   = 1 << LOK_NUM,    /* 0x0080 lockout state                  */
	CMPL  = 1 << CMPL_NUM,   /* 0x0100 I/O complete                   */
	EVENT = 1 << EVENT_NUM,  /* 0x0200 DCAS/DTAS/IFC event queued     */
	SPOLL = 1 << SPOLL_NUM,  /* 0x0400 board was serial polled        */
	RQS   = 1 << RQS_NUM,    /* 0x0800 device requesting service      */
	SRQI  = 1 << SRQI_NUM,   /* 0x1000 SRQ line asserted              */
	END   = 1 << END_NUM,    /* 0x2000 EOI or EOS seen                */
	TIMO  = 1 << TIMO_NUM,   /* 0x4000 timed out                      */
	ERR   = 1 << ERR_NUM,    /* 0x8000 call failed, see iberr         */

	/* bits meaningful for a device descriptor: 0xe900 */
	device_status_mask = ERR | TIMO | END | CMPL | RQS,
	/* bits meaningful for a board descriptor: 0xf7ff */
	board_status_mask = ERR | TIMO | END | CMPL | SPOLL | EVENT | LOK |
		REM | CIC | ATN | TACS | LACS | DTAS | DCAS | SRQI
};

/* ------------------------------------------------------------------ */
/* iberr                                                              */
/* ------------------------------------------------------------------ */

enum iberr_code {
	EDVR = 0,   /* system error; ibcntl holds errno                    */
	ECIC = 1,   /* board is not controller-in-charge                   */
	ENOL = 2,   /* no listeners on write                               */
	EADR = 3,   /* board not addressed correctly                       */
	EARG = 4,   /* invalid argument                                    */
	ESAC = 5,   /* board is not system controller                      */
	EABO = 6,   /* I/O aborted (timeout, device clear)                 */
	ENEB = 7,   /* non-existent / offline board                        */
	EDMA = 8,   /* DMA error (unused)                                  */
	EOIP = 10,  /* asynchronous I/O in progress                        */
	ECAP = 11,  /* capability missing or disabled                      */
	EFSO = 12,  /* file system error; ibcntl holds errno               */
	EBUS = 14,  /* command bytes could not be sent (bus error)         */
	ESTB = 15,  /* serial poll status bytes lost                       */
	ESRQ = 16,  /* SRQ stuck on                                        */
	ECNF = 17,  /* configuration file error                            */
	ETAB = 20   /* table overflow / not found (ibevent, FindLstn,
	               FindRQS)                                            */
};

/* ------------------------------------------------------------------ */
/* Timeouts (ibdev timo, ibtmo, IbcTMO)                               */
/* ------------------------------------------------------------------ */

enum gpib_timeout {
	TNONE  = 0,   /* never time out */
	T10us  = 1,
	T30us  = 2,
	T100us = 3,
	T300us = 4,
	T1ms   = 5,
	T3ms   = 6,
	T10ms  = 7,
	T30ms  = 8,
	T100ms = 9,
	T300ms = 10,
	T1s    = 11,
	T3s    = 12,
	T10s   = 13,
	T30s   = 14,
	T100s  = 15,
	T300s  = 16,
	T1000s = 17
};

/* ------------------------------------------------------------------ */
/* End-of-string mode (ibdev eosmode, ibeos): flags | eos byte        */
/* ------------------------------------------------------------------ */

enum eos_flags {
	EOS_MASK = 0x1c00,
	REOS     = 0x0400,  /* end reads on the EOS byte              */
	XEOS     = 0x0800,  /* assert EOI when the EOS byte is sent   */
	BIN      = 0x1000   /* compare all 8 bits of the EOS byte     */
};

/* ------------------------------------------------------------------ */
/* Bus lines reported by iblines: VALID_x says line x could be read,  */
/* BUS_x says it is asserted.                                          */
/* ------------------------------------------------------------------ */

enum bus_control_line {
	VALID_DAV  = 0x01,
	VALID_NDAC = 0x02,
	VALID_NRFD = 0x04,
	VALID_IFC  = 0x08,
	VALID_REN  = 0x10,
	VALID_SRQ  = 0x20,
	VALID_ATN  = 0x40,
	VALID_EOI  = 0x80,
	VALID_ALL  = 0xff,
	BUS_DAV    = 0x0100,
	BUS_NDAC   = 0x0200,
	BUS_NRFD   = 0x0400,
	BUS_IFC    = 0x0800,
	BUS_REN    = 0x1000,
	BUS_SRQ    = 0x2000,
	BUS_ATN    = 0x4000,
	BUS_EOI    = 0x8000
};

/* ------------------------------------------------------------------ */
/* IEEE 488 command bytes (ibcmd, SendCmds)                           */
/* ------------------------------------------------------------------ */

enum cmd_byte {
	GTL = 0x01,        /* go to local                              */
	SDC = 0x04,        /* selected device clear                    */
	PP_CONFIG = 0x05,  /* parallel poll configure                  */
#ifndef PPC
	PPC = PP_CONFIG,
#endif
	GET = 0x08,        /* group execute trigger                    */
	TCT = 0x09,        /* take control                             */
	LLO = 0x11,        /* local lockout                            */
	DCL = 0x14,        /* device clear (universal)                 */
	PPU = 0x15,        /* parallel poll unconfigure                */
	SPE = 0x18,        /* serial poll enable                       */
	SPD = 0x19,        /* serial poll disable                      */
	CFE = 0x1f,        /* configure enable                         */
	LAD = 0x20,        /* listen address base (| pad)              */
	UNL = 0x3f,        /* unlisten                                 */
	TAD = 0x40,        /* talk address base (| pad)                */
	UNT = 0x5f,        /* untalk                                   */
	SAD = 0x60,        /* secondary address base (| sad)           */
	PPE = 0x60,        /* parallel poll enable base                */
	PPD = 0x70         /* parallel poll disable                    */
};

enum ppe_bits {
	PPC_DISABLE  = 0x10,
	PPC_SENSE    = 0x08,
	PPC_DIO_MASK = 0x07
};

/* bits of a command byte that matter */
enum {
	gpib_command_mask = 0x7f
};

/* ------------------------------------------------------------------ */
/* ibask / ibconfig options                                           */
/* ------------------------------------------------------------------ */

enum ibask_option {
	IBA_PAD               = 0x1,
	IBA_SAD               = 0x2,
	IBA_TMO               = 0x3,
	IBA_EOT               = 0x4,
	IBA_PPC               = 0x5,    /* board  */
	IBA_READ_DR           = 0x6,    /* device */
	IBA_AUTOPOLL          = 0x7,    /* board  */
	IBA_CICPROT           = 0x8,    /* board  */
	IBA_IRQ               = 0x9,    /* board  */
	IBA_SC                = 0xa,    /* board  */
	IBA_SRE               = 0xb,    /* board  */
	IBA_EOS_RD            = 0xc,
	IBA_EOS_WRT           = 0xd,
	IBA_EOS_CMP           = 0xe,
	IBA_EOS_CHAR          = 0xf,
	IBA_PP2               = 0x10,   /* board  */
	IBA_TIMING            = 0x11,   /* board  */
	IBA_DMA               = 0x12,   /* board  */
	IBA_READ_ADJUST       = 0x13,
	IBA_WRITE_ADJUST      = 0x14,
	IBA_EVENT_QUEUE       = 0x15,   /* board  */
	IBA_SPOLL_BIT         = 0x16,   /* board  */
	IBA_SEND_LLO          = 0x17,   /* board  */
	IBA_SPOLL_TIME        = 0x18,   /* device */
	IBA_PPOLL_TIME        = 0x19,   /* board  */
	IBA_END_BIT_IS_NORMAL = 0x1a,
	IBA_UN_ADDR           = 0x1b,   /* device */
	IBA_HS_CABLE_LENGTH   = 0x1f,   /* board  */
	IBA_IST               = 0x20,   /* board  */
	IBA_RSV               = 0x21,   /* board  */
	IBA_BNA               = 0x200,  /* device */
	/* linux-gpib extension: 1 if the board can do 7-bit EOS compares */
	IBA_7BitEOS           = 0x1000
};
#define IBA_7_BIT_EOS IBA_7BitEOS

enum ibconfig_option {
	IBC_PAD               = 0x1,
	IBC_SAD               = 0x2,
	IBC_TMO               = 0x3,
	IBC_EOT               = 0x4,
	IBC_PPC               = 0x5,    /* board  */
	IBC_READDR            = 0x6,    /* device */
	IBC_AUTOPOLL          = 0x7,    /* board  */
	IBC_CICPROT           = 0x8,    /* board  */
	IBC_IRQ               = 0x9,    /* board  */
	IBC_SC                = 0xa,    /* board  */
	IBC_SRE               = 0xb,    /* board  */
	IBC_EOS_RD            = 0xc,
	IBC_EOS_WRT           = 0xd,
	IBC_EOS_CMP           = 0xe,
	IBC_EOS_CHAR          = 0xf,
	IBC_PP2               = 0x10,   /* board  */
	IBC_TIMING            = 0x11,   /* board  */
	IBC_DMA               = 0x12,   /* board  */
	IBC_READ_ADJUST       = 0x13,
	IBC_WRITE_ADJUST      = 0x14,
	IBC_EVENT_QUEUE       = 0x15,   /* board  */
	IBC_SPOLL_BIT         = 0x16,   /* board  */
	IBC_SEND_LLO          = 0x17,   /* board  */
	IBC_SPOLL_TIME        = 0x18,   /* device */
	IBC_PPOLL_TIME        = 0x19,   /* board  */
	IBC_END_BIT_IS_NORMAL = 0x1a,
	IBC_UN_ADDR           = 0x1b,   /* device */
	IBC_HS_CABLE_LENGTH   = 0x1f,   /* board  */
	IBC_IST               = 0x20,   /* board  */
	IBC_RSV               = 0x21,   /* board  */
	IBC_BNA               = 0x200   /* device */
};

/* values of IbaTIMING / IbcTIMING */
enum t1_delays {
	T1_DELAY_2000ns = 1,
	T1_DELAY_500ns  = 2,
	T1_DELAY_350ns  = 3
};

/* ------------------------------------------------------------------ */
/* Serial poll status byte, events                                    */
/* ------------------------------------------------------------------ */

enum {
	request_service_bit = 0x40
};

/* values returned by ibevent */
enum gpib_events {
	EVENT_NONE    = 0,
	EVENT_DEV_TRG = 1,
	EVENT_DEV_CLR = 2,
	EVENT_IFC     = 3
};

enum gpib_stb {
	IB_STB_RQS = 0x40,  /* IEEE 488.1 and 488.2   */
	IB_STB_ESB = 0x20,  /* IEEE 488.2 only        */
	IB_STB_MAV = 0x10   /* IEEE 488.2 only        */
};

/* ------------------------------------------------------------------ */
/* Address limits                                                     */
/* ------------------------------------------------------------------ */

static const int gpib_addr_max = 30;  /* highest primary address        */
static const int gpib_sad_max  = 31;  /* highest secondary address      */

/* ------------------------------------------------------------------ */
/* CamelCase spellings kept by linux-gpib for older programs          */
/* ------------------------------------------------------------------ */

#define ValidDAV  VALID_DAV
#define ValidNDAC VALID_NDAC
#define ValidNRFD VALID_NRFD
#define ValidIFC  VALID_IFC
#define ValidREN  VALID_REN
#define ValidSRQ  VALID_SRQ
#define ValidATN  VALID_ATN
#define ValidEOI  VALID_EOI
#define ValidALL  VALID_ALL
#define BusDAV    BUS_DAV
#define BusNDAC   BUS_NDAC
#define BusNRFD   BUS_NRFD
#define BusIFC    BUS_IFC
#define BusREN    BUS_REN
#define BusSRQ    BUS_SRQ
#define BusATN    BUS_ATN
#define BusEOI    BUS_EOI

#define PPConfig  PP_CONFIG

#define IbaPAD            IBA_PAD
#define IbaSAD            IBA_SAD
#define IbaTMO            IBA_TMO
#define IbaEOT            IBA_EOT
#define IbaPPC            IBA_PPC
#define IbaREADDR         IBA_READ_DR
#define IbaAUTOPOLL       IBA_AUTOPOLL
#define IbaCICPROT        IBA_CICPROT
#define IbaIRQ            IBA_IRQ
#define IbaSC             IBA_SC
#define IbaSRE            IBA_SRE
#define IbaEOSrd          IBA_EOS_RD
#define IbaEOSwrt         IBA_EOS_WRT
#define IbaEOScmp         IBA_EOS_CMP
#define IbaEOSchar        IBA_EOS_CHAR
#define IbaPP2            IBA_PP2
#define IbaTIMING         IBA_TIMING
#define IbaDMA            IBA_DMA
#define IbaReadAdjust     IBA_READ_ADJUST
#define IbaWriteAdjust    IBA_WRITE_ADJUST
#define IbaEventQueue     IBA_EVENT_QUEUE
#define IbaSPollBit       IBA_SPOLL_BIT
#define IbaSpollBit       IBA_SPOLL_BIT
#define IbaSendLLO        IBA_SEND_LLO
#define IbaSPollTime      IBA_SPOLL_TIME
#define IbaPPollTime      IBA_PPOLL_TIME
#define IbaEndBitIsNormal IBA_END_BIT_IS_NORMAL
#define IbaUnAddr         IBA_UN_ADDR
#define IbaHSCableLength  IBA_HS_CABLE_LENGTH
#define IbaIst            IBA_IST
#define IbaRsv            IBA_RSV
#define IbaBNA            IBA_BNA
#define Iba7BitEOS        IBA_7BitEOS

#define IbcPAD            IBC_PAD
#define IbcSAD            IBC_SAD
#define IbcTMO            IBC_TMO
#define IbcEOT            IBC_EOT
#define IbcPPC            IBC_PPC
#define IbcREADDR         IBC_READDR
#define IbcAUTOPOLL       IBC_AUTOPOLL
#define IbcCICPROT        IBC_CICPROT
#define IbcIRQ            IBC_IRQ
#define IbcSC             IBC_SC
#define IbcSRE            IBC_SRE
#define IbcEOSrd          IBC_EOS_RD
#define IbcEOSwrt         IBC_EOS_WRT
#define IbcEOScmp         IBC_EOS_CMP
#define IbcEOSchar        IBC_EOS_CHAR
#define IbcPP2            IBC_PP2
#define IbcTIMING         IBC_TIMING
#define IbcDMA            IBC_DMA
#define IbcReadAdjust     IBC_READ_ADJUST
#define IbcWriteAdjust    IBC_WRITE_ADJUST
#define IbcEventQueue     IBC_EVENT_QUEUE
#define IbcSPollBit       IBC_SPOLL_BIT
#define IbcSpollBit       IBC_SPOLL_BIT
#define IbcSendLLO        IBC_SEND_LLO
#define IbcSPollTime      IBC_SPOLL_TIME
#define IbcPPollTime      IBC_PPOLL_TIME
#define IbcEndBitIsNormal IBC_END_BIT_IS_NORMAL
#define IbcUnAddr         IBC_UN_ADDR
#define IbcHSCableLength  IBC_HS_CABLE_LENGTH
#define IbcIst            IBC_IST
#define IbcRsv            IBC_RSV
#define IbcBNA            IBC_BNA

#define EventNone   EVENT_NONE
#define EventDevTrg EVENT_DEV_TRG
#define EventDevClr EVENT_DEV_CLR
#define EventIFC    EVENT_IFC

#define IbStbRQS IB_STB_RQS
#define IbStbESB IB_STB_ESB
#define IbStbMAV IB_STB_MAV

/* ------------------------------------------------------------------ */
/* IEEE 488.2 ("multidevice") addressing                              */
/* ------------------------------------------------------------------ */

/* low byte: primary address; high byte: secondary (0 or 0x60..0x7f) */
typedef uint16_t Addr4882_t;

/* terminates every address list */
static const Addr4882_t NOADDR = (Addr4882_t)0xffff;

/* termination argument of Receive/RcvRespMsg: stop on EOI only */
static const int STOPend = 0x100;

enum sad_special_address {
	NO_SAD  = 0,
	ALL_SAD = -1
};

/* eot_mode argument of Send/SendList/SendDataBytes */
enum send_eotmode {
	NULLend = 0,  /* no EOI, nothing appended          */
	DABend  = 1,  /* EOI with the last data byte       */
	NLend   = 2   /* append '\n' sent with EOI         */
};

/* ------------------------------------------------------------------ */
/* Status of the last call.  The globals are process-wide; the        */
/* Thread* functions return the calling thread's copy, the Async*     */
/* functions the result of the last asynchronous I/O that ibwait or   */
/* ibstop completed in the calling thread.                             */
/* ------------------------------------------------------------------ */

extern volatile int ibsta;
extern volatile int ibcnt;
extern volatile int iberr;
extern volatile long ibcntl;

extern int  ThreadIbsta(void);
extern int  ThreadIberr(void);
extern int  ThreadIbcnt(void);
extern long ThreadIbcntl(void);

extern int  AsyncIbsta(void);
extern int  AsyncIberr(void);
extern int  AsyncIbcnt(void);
extern long AsyncIbcntl(void);

/* ------------------------------------------------------------------ */
/* IEEE 488.2 functions.  They return nothing: read ibsta/iberr/ibcnt */
/* (or ThreadIbsta()...) afterwards.  Address lists end with NOADDR.  */
/* ------------------------------------------------------------------ */

extern void AllSPoll(int board_desc, const Addr4882_t addressList[],
	short resultList[]);
extern void AllSpoll(int board_desc, const Addr4882_t addressList[],
	short resultList[]);
extern void DevClear(int board_desc, Addr4882_t address);
extern void DevClearList(int board_desc, const Addr4882_t addressList[]);
extern void EnableLocal(int board_desc, const Addr4882_t addressList[]);
extern void EnableRemote(int board_desc, const Addr4882_t addressList[]);
extern void FindLstn(int board_desc, const Addr4882_t padList[],
	Addr4882_t resultList[], int maxNumResults);
extern void FindRQS(int board_desc, const Addr4882_t addressList[],
	short *result);
extern void PassControl(int board_desc, Addr4882_t address);
extern void PPoll(int board_desc, short *result);
extern void PPollConfig(int board_desc, Addr4882_t address, int dataLine,
	int lineSense);
extern void PPollUnconfig(int board_desc, const Addr4882_t addressList[]);
extern void RcvRespMsg(int board_desc, void *buffer, long count,
	int termination);
extern void ReadStatusByte(int board_desc, Addr4882_t address,
	short *result);
extern void Receive(int board_desc, Addr4882_t address, void *buffer,
	long count, int termination);
extern void ReceiveSetup(int board_desc, Addr4882_t address);
extern void ResetSys(int board_desc, const Addr4882_t addressList[]);
extern void Send(int board_desc, Addr4882_t address, const void *buffer,
	long count, int eot_mode);
extern void SendCmds(int board_desc, const void *cmds, long count);
extern void SendDataBytes(int board_desc, const void *buffer, long count,
	int eotmode);
extern void SendIFC(int board_desc);
extern void SendLLO(int board_desc);
extern void SendList(int board_desc, const Addr4882_t addressList[],
	const void *buffer, long count, int eotmode);
extern void SendSetup(int board_desc, const Addr4882_t addressList[]);
extern void SetRWLS(int board_desc, const Addr4882_t addressList[]);
extern void TestSRQ(int board_desc, short *result);
extern void TestSys(int board_desc, const Addr4882_t addressList[],
	short resultList[]);
extern void Trigger(int board_desc, Addr4882_t address);
extern void TriggerList(int board_desc, const Addr4882_t addressList[]);
extern void WaitSRQ(int board_desc, short *result);

/* ------------------------------------------------------------------ */
/* Traditional functions.  Each returns the new ibsta, except ibdev   */
/* and ibfind (descriptor, or -1 with ERR set) and ibvers.            */
/* ------------------------------------------------------------------ */

extern int ibask(int ud, int option, int *value);
extern int ibbna(int ud, char *board_name);
extern int ibcac(int ud, int synchronous);
extern int ibclr(int ud);
extern int ibcmd(int ud, const void *cmd, long cnt);
extern int ibcmda(int ud, const void *cmd, long cnt);
extern int ibconfig(int ud, int option, int value);
extern int ibdev(int board_index, int pad, int sad, int timo, int send_eoi,
	int eosmode);
extern int ibdma(int ud, int v);
extern int ibeot(int ud, int v);
extern int ibeos(int ud, int v);
extern int ibevent(int ud, short *event);
extern int ibfind(const char *dev);
extern int ibgts(int ud, int shadow_handshake);
extern int ibist(int ud, int ist);
extern int iblines(int ud, short *line_status);
extern int ibln(int ud, int pad, int sad, short *found_listener);
extern int ibloc(int ud);
extern int ibonl(int ud, int onl);
extern int ibpad(int ud, int v);
extern int ibpct(int ud);
extern int ibppc(int ud, int v);
extern int ibrd(int ud, void *buf, long count);
extern int ibrda(int ud, void *buf, long count);
extern int ibrdf(int ud, const char *file_path);
extern int ibrpp(int ud, char *ppr);
extern int ibrsc(int ud, int v);
extern int ibrsp(int ud, char *spr);
extern int ibrsv(int ud, int status_byte);
extern int ibrsv2(int ud, int status_byte, int new_reason_for_service);
extern int ibsad(int ud, int v);
extern int ibsic(int ud);
extern int ibspb(int ud, short *sp_bytes);
extern int ibsre(int ud, int v);
extern int ibstop(int ud);
extern int ibtmo(int ud, int v);
extern int ibtrg(int ud);
extern void ibvers(char **version);
extern int ibwait(int ud, int mask);
extern int ibwrt(int ud, const void *buf, long count);
extern int ibwrta(int ud, const void *buf, long count);
extern int ibwrtf(int ud, const char *file_path);

extern const char *gpib_error_string(int iberr);

/* ------------------------------------------------------------------ */
/* Inline helpers (header only, never exported by the library)        */
/* ------------------------------------------------------------------ */

static inline Addr4882_t MakeAddr(unsigned int pad, unsigned int sad)
{
	return (Addr4882_t)((pad & 0xffu) | ((sad << 8) & 0xff00u));
}

static inline unsigned int GetPAD(Addr4882_t address)
{
	return address & 0xffu;
}

static inline unsigned int GetSAD(Addr4882_t address)
{
	return (address >> 8) & 0xffu;
}

/* primary address confined to 0..30 (31 maps to 0) */
static inline unsigned int gpib_address_restrict(unsigned int addr)
{
	addr &= 0x1fu;
	return addr == 0x1fu ? 0u : addr;
}

/* my listen / talk / secondary address command bytes */
static inline uint8_t MLA(unsigned int addr)
{
	return (uint8_t)(gpib_address_restrict(addr) | LAD);
}

static inline uint8_t MTA(unsigned int addr)
{
	return (uint8_t)(gpib_address_restrict(addr) | TAD);
}

static inline uint8_t MSA(unsigned int addr)
{
	return (uint8_t)((addr & 0x1fu) | SAD);
}

/* parallel poll enable byte for dio_line 1..8 */
static inline uint8_t PPE_byte(unsigned int dio_line, int sense)
{
	uint8_t cmd = PPE;

	if (sense)
		cmd |= PPC_SENSE;
	cmd |= (uint8_t)((dio_line - 1) & PPC_DIO_MASK);
	return cmd;
}

static inline int is_PPE(uint8_t command)
{
	return (command & 0x70) == 0x60;
}

static inline int is_PPD(uint8_t command)
{
	return (command & 0x70) == 0x70;
}

static inline int in_addressed_command_group(uint8_t command)
{
	return (command & 0x70) == 0x00;
}

static inline int in_universal_command_group(uint8_t command)
{
	return (command & 0x70) == 0x10;
}

static inline int in_listen_address_group(uint8_t command)
{
	return (command & 0x60) == 0x20;
}

static inline int in_talk_address_group(uint8_t command)
{
	return (command & 0x60) == 0x40;
}

static inline int in_primary_command_group(uint8_t command)
{
	return in_addressed_command_group(command) ||
		in_universal_command_group(command) ||
		in_listen_address_group(command) ||
		in_talk_address_group(command);
}

static inline int gpib_address_equal(unsigned int pad1, int sad1,
	unsigned int pad2, int sad2)
{
	if (pad1 != pad2)
		return 0;
	return sad1 == sad2 || (sad1 < 0 && sad2 < 0);
}

#ifdef __cplusplus
}
#endif

#endif /* _PUBLIC_GPIB_H */
