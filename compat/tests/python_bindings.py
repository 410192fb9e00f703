#!/usr/bin/env python3
"""python_bindings.py -- find_and_idn through the `gpib` module of linux-gpib's Python
bindings (linux-gpib's own extension, or gpib-ctypes standing in for it).

Prints the same lines as compat/tests/find_and_idn.c. Exits 77 when no such module can
be imported (compat/ci.sh then reports the step as skipped).
"""

import sys

try:
    import gpib  # linux-gpib's bindings
except ImportError:
    try:
        from gpib_ctypes import make_default_gpib
    except ImportError:
        sys.exit(77)
    make_default_gpib()  # installs gpib-ctypes as the `gpib` module
    import gpib

T3S = 12
pads = [pad for pad in range(1, 31) if gpib.listener(0, pad)]
uds = []
for pad in pads:
    ud = gpib.dev(0, pad, 0, T3S, 1, 0)
    uds.append((pad, ud))
    gpib.write(ud, b"*IDN?\n")
    print(f"pad={pad} idn={gpib.read(ud, 255).decode('ascii').rstrip()}")
for pad, ud in uds:
    print(f"pad={pad} stb=0x{gpib.serial_poll(ud):02x}")
for _, ud in uds:
    gpib.close(ud)
