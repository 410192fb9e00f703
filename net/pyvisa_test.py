"""PyVISA + pyvisa-py against `gpib-diag serve`, through each protocol.

Usage: pyvisa_test.py PROLOGIX_HOST:PORT VXI11_HOST:PORT [ADDRESS [BOARDS [IDNS [HISLIP_HOST:PORT]]]]

For each protocol: *IDN?, a 100 KB definite-length block holding every byte value
written and read back, serial poll (MAV set after an unread query, clear after
reading), device clear and trigger. Over VXI-11 the checks run on each served board
of BOARDS (`0,1`: gpib0 and gpib1; default 0). IDNS: `DEVICE=IDN` pairs separated by
`;` (`gpib1,7=ACME,COUNTER-7,1,1.0`): the VXI-11 device's *IDN? must be that IDN.
HISLIP: the same checks through HiSLIP, on `hislip_gpib<B>_<ADDRESS>` of each board
of BOARDS and on `hislip0` (the default device), and the IDNS as `hislip_gpib<B>_<N>`. pyvisa-py's HiSLIP session has no
viAssertTrigger: the trigger checks there send `*TRG`.
Exits non-zero on the first failure.
"""
import sys
import time

import pyvisa

SCPI = int(sys.argv[3]) if len(sys.argv) > 3 else 22
IDN = "SIMULATED,SCPI-DMM,0,1.0"
MAV = 0x10


def check(what, ok, detail=""):
    if not ok:
        raise SystemExit(f"FAIL {what} {detail}")
    print(f"  ok  {what} {detail}".rstrip())


def exercise(name, inst, intfc=None, trigger=None):
    # pyvisa-py's Prologix instrument sessions take no attributes (their interface
    # session has termchar LF on and a 50 ms adapter read timeout): set what is taken.
    for attr, value in (("timeout", 5000), ("read_termination", "\n"), ("write_termination", "\n")):
        try:
            setattr(inst, attr, value)
        except pyvisa.errors.VisaIOError as e:
            print(f"  --  {attr} not settable here ({e.abbreviation})")
    t0 = time.perf_counter()
    idn = inst.query("*IDN?").strip()
    check("*IDN?", idn == IDN, repr(idn))
    n = 20
    t = time.perf_counter()
    for _ in range(n):
        inst.query("*IDN?")
    rate = n / (time.perf_counter() - t)

    # 100 KB holding every byte value (0..255 repeated), as a definite-length block.
    data = bytes(i % 256 for i in range(100_000))
    inst.write_binary_values("DATA ", list(data), datatype="B", is_big_endian=True)
    check("block written", inst.query("DATA:LEN?").strip() == "100000")
    back = inst.query_binary_values("DATA?", datatype="B", container=bytes,
                                    expect_termination=True)
    check("100 KB block read back, every byte value", back == data, f"{len(back)} bytes")
    if intfc is not None:
        # Without a read termination (not settable on pyvisa-py's Prologix sessions)
        # pyvisa leaves the block's NL terminator unread: take it.
        check("the block's NL terminator", inst.read_raw() == b"\n")

    # Serial poll: MAV after an unread query, clear after reading it.
    stb0 = inst.read_stb()
    check("status byte idle", stb0 & MAV == 0, f"stb={stb0}")
    inst.write("*IDN?")
    stb1 = inst.read_stb()
    check("MAV set after an unread query", stb1 & MAV != 0, f"stb={stb1}")
    check("the answer", inst.read().strip() == IDN)
    stb2 = inst.read_stb()
    check("MAV clear after reading", stb2 & MAV == 0, f"stb={stb2}")

    # Device clear discards a pending answer; trigger queues a reading. Over HiSLIP
    # the gateway sends a query's answer at once, and pyvisa-py's device clear reads
    # DeviceClearAcknowledge as the next message on the synchronous channel (it does
    # not drop the Data before it): the pending answer there is a triggered reading,
    # still in the device (the gateway fetches one only for a status query).
    inst.write("*IDN?" if trigger is None else trigger)
    inst.clear()
    stb3 = inst.read_stb()
    check("clear discards the answer", stb3 & MAV == 0, f"stb={stb3}")
    if trigger is None:
        inst.assert_trigger()
    else:
        inst.write(trigger)
    stb4 = inst.read_stb()
    check("trigger: MAV set", stb4 & MAV != 0, f"stb={stb4}")
    if intfc is not None:
        # pyvisa-py sends ++read only after a write to the instrument; ask on the
        # interface session for the answer the trigger queued.
        intfc.write("++read eoi")
    reading = float(inst.read().strip())
    check("trigger queues a reading", reading > 0, str(reading))
    check("usable after all that", inst.query("*OPC?").strip() == "1")
    print(f"{name}: all checks passed in {time.perf_counter() - t0:.2f} s; "
          f"*IDN? query rate {rate:.0f}/s")


def main():
    prologix, vxi11 = sys.argv[1], sys.argv[2]
    rm = pyvisa.ResourceManager("@py")
    ph, pp = prologix.rsplit(":", 1)
    intfc = rm.open_resource(f"PRLGX-TCPIP::{ph}::{pp}::INTFC")
    print(f"Prologix: PRLGX-TCPIP::{ph}::{pp}::INTFC then GPIB0::{SCPI}::INSTR")
    exercise("Prologix", rm.open_resource(f"GPIB0::{SCPI}::INSTR"), intfc=intfc)
    intfc.close()
    vh, vp = vxi11.rsplit(":", 1)
    boards = sys.argv[4].split(",") if len(sys.argv) > 4 and sys.argv[4] else ["0"]
    for board in boards:
        res = f"TCPIP::{vh},{vp}::gpib{board},{SCPI}::INSTR"
        print(f"VXI-11: {res}")
        exercise(f"VXI-11 gpib{board}", rm.open_resource(res))
    pairs = sys.argv[5].split(";") if len(sys.argv) > 5 and sys.argv[5] else []
    for pair in pairs:
        device, want = pair.split("=", 1)
        res = f"TCPIP::{vh},{vp}::{device}::INSTR"
        inst = rm.open_resource(res)
        inst.timeout = 5000
        inst.read_termination = "\n"
        got = inst.query("*IDN?").strip()
        check(res, got == want, repr(got))
        inst.close()
    hislip = sys.argv[6] if len(sys.argv) > 6 else ""
    if hislip:
        hh, hp = hislip.rsplit(":", 1)
        names = [f"hislip_gpib{board}_{SCPI}" for board in boards] + ["hislip0"]
        for name in names:
            res = f"TCPIP::{hh}::{name},{hp}::INSTR"
            print(f"HiSLIP: {res}")
            inst = rm.open_resource(res)
            exercise(f"HiSLIP {name}", inst, trigger="*TRG")
            inst.close()
        for pair in pairs:
            device, want = pair.split("=", 1)
            board, address = device.removeprefix("gpib").split(",")[:2]
            res = f"TCPIP::{hh}::hislip_gpib{board}_{address},{hp}::INSTR"
            inst = rm.open_resource(res)
            inst.timeout = 5000
            inst.read_termination = "\n"
            got = inst.query("*IDN?").strip()
            check(res, got == want, repr(got))
            inst.close()
    rm.close()


if __name__ == "__main__":
    main()
