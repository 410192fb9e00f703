#!/usr/bin/env python3
"""find_and_idn.py -- compat/tests/find_and_idn.c in Python, through ctypes only.

Loads libgpib.so.0 by its soname (as Python bindings of linux-gpib do), finds the
listeners on board 0, asks each for *IDN?, serial-polls each, and prints the same
lines as the C program. The status is read the two ways bindings read it: the
exported global `ibsta` and the per-thread ThreadIbsta()/ThreadIberr()/ThreadIbcnt().

Needs only python3: LD_LIBRARY_PATH must name the directory holding libgpib.so.0.
"""

import ctypes
import sys

ERR = 0x8000
NOADDR = 0xFFFF
T3S = 12

lib = ctypes.CDLL("libgpib.so.0")
ibsta = ctypes.c_int.in_dll(lib, "ibsta")
iberr = ctypes.c_int.in_dll(lib, "iberr")
ibcnt = ctypes.c_int.in_dll(lib, "ibcnt")

Addr = ctypes.c_uint16
lib.ibdev.argtypes = [ctypes.c_int] * 6
lib.ibwrt.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_long]
lib.ibrd.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_long]
lib.ibrsp.argtypes = [ctypes.c_int, ctypes.c_char_p]
lib.ibonl.argtypes = [ctypes.c_int, ctypes.c_int]
lib.SendIFC.argtypes = [ctypes.c_int]
lib.SendIFC.restype = None
lib.FindLstn.argtypes = [ctypes.c_int, ctypes.POINTER(Addr), ctypes.POINTER(Addr), ctypes.c_int]
lib.FindLstn.restype = None
lib.ThreadIbcntl.restype = ctypes.c_long


def check(call):
    # The global and this thread's copy must agree: one thread made the last call.
    if (ibsta.value & ERR) != (lib.ThreadIbsta() & ERR):
        sys.exit(f"error: {call}: ibsta {ibsta.value:#x} but ThreadIbsta() {lib.ThreadIbsta():#x}")
    if ibsta.value & ERR:
        print(f"error: {call} iberr={iberr.value}", file=sys.stderr)
        sys.exit(1)


def main():
    lib.SendIFC(0)
    check("SendIFC")
    pads = (Addr * 31)(*range(1, 31), NOADDR)
    found = (Addr * 30)()
    lib.FindLstn(0, pads, found, 30)
    check("FindLstn")
    n = ibcnt.value
    if n != lib.ThreadIbcnt():
        sys.exit("error: ibcnt and ThreadIbcnt() differ")
    uds = []
    for i in range(n):
        pad = found[i] & 0xFF
        ud = lib.ibdev(0, pad, 0, T3S, 1, 0)
        check("ibdev")
        uds.append((pad, ud))
        lib.ibwrt(ud, b"*IDN?\n", 6)
        check("ibwrt")
        buf = ctypes.create_string_buffer(256)
        lib.ibrd(ud, buf, 255)
        check("ibrd")
        text = buf.raw[: lib.ThreadIbcntl()].decode("ascii").rstrip("\r\n")
        print(f"pad={pad} idn={text}")
    for pad, ud in uds:
        stb = ctypes.create_string_buffer(1)
        lib.ibrsp(ud, stb)
        check("ibrsp")
        print(f"pad={pad} stb=0x{stb.raw[0]:02x}")
    for _, ud in uds:
        lib.ibonl(ud, 0)
        check("ibonl")


if __name__ == "__main__":
    main()
