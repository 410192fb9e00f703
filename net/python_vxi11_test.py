"""python-vxi11 against `gpib-diag serve`'s VXI-11 gateway: every method of
`vxi11.InterfaceDevice` on `gpib0`, `vxi11.Instrument` on `gpib0,22` and `inst0`,
and `vxi11.list_devices`.

Usage: python_vxi11_test.py HOST PORTMAP_PORT

python-vxi11 finds the core channel through the portmapper, on port 111 (the module
constant `vxi11.rpc.PMAP_PORT`, read at each call): the server's portmapper runs on a
free port instead, and this script points the constant at it. Everything else is
python-vxi11 0.9 as released. The served bench: a board at address 0, an HP 3565 at
11 and a SCPI instrument at 22 (the `--default-device`, so also `inst0`).
Exits non-zero on the first failure.
"""
import sys
import time

import vxi11
import vxi11.rpc
from vxi11.vxi11 import Vxi11Exception

IDN = "SIMULATED,SCPI-DMM,0,1.0"
UNL, UNT = 0x3F, 0x5F
MAV, RQS = 0x10, 0x40


def check(what, ok, detail=""):
    if not ok:
        raise SystemExit(f"FAIL {what} {detail}")
    print(f"  ok  {what} {detail}".rstrip())


def raises(what, fn, code):
    """`fn()` must raise python-vxi11's exception with VXI-11 error `code`."""
    try:
        got = fn()
    except Vxi11Exception as e:
        check(what, e.err == code, f"error {e.err}: {e.msg}")
        return
    raise SystemExit(f"FAIL {what}: returned {got!r}, wanted error {code}")


def interface(host):
    print("InterfaceDevice(host, 'gpib0')")
    intf = vxi11.InterfaceDevice(host, "gpib0")
    intf.timeout = 5
    intf.open()  # create_link, then get_bus_address
    check("open: a link", intf.link is not None, f"link {intf.link}")
    check("get_bus_address", intf.get_bus_address() == 0, "0, the board's")
    check("is_system_controller", intf.is_system_controller() == 1)
    check("is_controller_in_charge", intf.is_controller_in_charge() == 1)
    check("test_srq", intf.test_srq() == 0)

    # REN: set_ren echoes its argument; test_ren reads the line.
    check("set_ren(1)", intf.set_ren(1) == 1)
    check("test_ren after set_ren(1)", intf.test_ren() == 1)
    check("set_ren(0)", intf.set_ren(0) == 0)
    check("test_ren after set_ren(0)", intf.test_ren() == 0)

    # Command bytes: UNL UNT leaves nobody addressed.
    out = intf.send_command(bytes([UNL, UNT]))
    check("send_command(UNL UNT) echoes", out == bytes([UNL, UNT]), repr(out))
    check("is_talker after UNT", intf.is_talker() == 0)
    check("is_listener", intf.is_listener() == 0)

    # create_setup / send_setup: the board talks, 22 listens.
    setup = intf.create_setup([22])
    check("create_setup([22])", setup == bytes([0x40, UNL, 0x20 | 22]), setup.hex())
    check("send_setup(22) echoes", intf.send_setup(22) == setup)
    check("is_talker after send_setup", intf.is_talker() == 1)
    # ATN released: the listener holds NDAC.
    check("set_atn(0)", intf.set_atn(0) == 0)
    check("test_ndac: 22 listens", intf.test_ndac() == 1)
    check("set_atn(1)", intf.set_atn(1) == 1)
    intf.send_command(bytes([UNL, UNT]))

    # The controller's address.
    check("set_bus_address(5)", intf.set_bus_address(5) == 5)
    check("get_bus_address after it", intf.get_bus_address() == 5)
    check("set_bus_address(0)", intf.set_bus_address(0) == 0)

    # IFC: unaddresses everything; the gateway stays in charge.
    intf.send_setup(22)
    check("send_ifc", intf.send_ifc() is None)
    check("is_talker after IFC", intf.is_talker() == 0)
    check("is_controller_in_charge after IFC", intf.is_controller_in_charge() == 1)

    # Pass control: the gateway is system controller and keeps control (error 8).
    raises("pass_control(22): operation not supported", lambda: intf.pass_control(22), 8)
    check("still in charge", intf.is_controller_in_charge() == 1)

    # find_listeners: locks the interface, addresses each listener in turn, reads NDAC.
    t = time.perf_counter()
    found = intf.find_listeners()
    check("find_listeners()", found == [11, 22], f"{found} in {time.perf_counter() - t:.2f} s")
    check("find_listeners([5, 22])", intf.find_listeners([5, 22]) == [22])
    # find_listeners released its lock: another client takes it at once.
    other = vxi11.InterfaceDevice(host, "gpib0")
    other.lock_timeout = 0
    other.lock()
    check("find_listeners unlocked the interface", other.locked)
    other.unlock()
    other.close()

    # Device's methods on the interface link: lock, unlock, abort.
    intf.lock()
    check("lock", intf.locked)
    intf.unlock()
    check("unlock", not intf.locked)
    intf.abort()
    check("abort on an idle link, then the next call", intf.get_bus_address() == 0)
    intf.close()
    check("close", intf.link is None)


def instrument(host):
    print("Instrument(host, 'gpib0,22')")
    inst = vxi11.Instrument(host, "gpib0,22")
    inst.timeout = 5
    idn = inst.ask("*IDN?")
    check("ask('*IDN?')", idn == IDN, repr(idn))
    check("read_stb idle", inst.read_stb() & MAV == 0)
    inst.write("*IDN?")
    check("read_stb: MAV after an unread query", inst.read_stb() & MAV != 0)
    inst.clear()
    check("clear discards it", inst.read_stb() & MAV == 0)
    inst.trigger()
    check("trigger queues a reading", float(inst.read()) > 0)
    inst.remote()
    inst.local()
    inst.lock()
    check("lock, ask under it", inst.ask("*IDN?") == IDN)
    inst.unlock()
    data = bytes(range(256)) * 40
    inst.write_raw(b"DATA #510240" + data + b"\n")
    check("write_raw 10 KB block", inst.ask("DATA:LEN?") == "10240")
    back = inst.ask_raw(b"DATA?\n")
    check("ask_raw: the block back", back == b"#510240" + data + b"\n", f"{len(back)} bytes")
    inst.abort()
    check("abort, then the next call", inst.ask("*OPC?") == "1")
    # SRQ seen from the interface: MAV with *SRE 16 requests service.
    intf = vxi11.InterfaceDevice(host)
    check("InterfaceDevice(host): gpib0, test_srq idle", intf.test_srq() == 0)
    inst.write("*SRE 16")
    inst.write("*IDN?")
    check("test_srq while 22 requests service", intf.test_srq() == 1)
    stb = inst.read_stb()
    check("read_stb: RQS and MAV", stb & (RQS | MAV) == RQS | MAV, f"stb={stb}")
    check("the answer", inst.read() == IDN)
    inst.write("*SRE 0")
    intf.close()
    inst.close()
    inst = vxi11.Instrument(f"TCPIP::{host}::inst0::INSTR")
    check("Instrument('TCPIP::host::inst0::INSTR')", inst.ask("*IDN?") == IDN)
    inst.close()


def listing(host):
    # A GETPORT datagram to the portmapper (a broadcast address in the field); the
    # release has no list_resources yet (python-vxi11's main branch has).
    print("list_devices")
    found = vxi11.list_devices(host, 0.3)
    check("list_devices", found == [host], repr(found))


def main():
    host, portmap = sys.argv[1], int(sys.argv[2])
    vxi11.rpc.PMAP_PORT = portmap
    t0 = time.perf_counter()
    interface(host)
    instrument(host)
    listing(host)
    print(f"python-vxi11 {vxi11.__version__}: all checks passed in "
          f"{time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
