#!/usr/bin/env python3
"""pyvisa-py's sessions for target 6 of bench/compare.sh, one run: `*IDN?` queries per
second and 1 MiB block bytes per second through
  socket:   TCPIP::127.0.0.1::PORT::SOCKET against bench/peers/scpi_echo_server.py
  vxi11:    TCPIP::127.0.0.1,PORT::gpib0,N::INSTR against `gpib-diag serve`
  prologix: PRLGX-TCPIP::127.0.0.1::PORT::INTFC + GPIB0::N::INSTR against it
Prints one JSON object. Usage:
  net_pyvisa.py --echo PORT --vxi11 HOST:PORT --prologix HOST:PORT [--device 22]
                [--seconds 0.5] [--block 1048576]
"""
import argparse
import json
import time

import pyvisa


def rate(budget, op):
    t0 = time.perf_counter()
    n = 0
    while n < 3 or time.perf_counter() - t0 < budget:
        op()
        n += 1
    return n / (time.perf_counter() - t0)


def measure(inst, budget, size, nl_after_block=False):
    assert inst.query("*IDN?").startswith("SIMULATED")
    want = bytes(i % 256 for i in range(size))

    def read_block():
        data = inst.query_binary_values(f"BLOCK? {size}", datatype="B", container=bytes,
                                        expect_termination=not nl_after_block)
        if nl_after_block:
            # pyvisa-py's Prologix sessions take no read termination: the NL is apart.
            inst.read_raw()
        return data

    assert read_block() == want, "block bytes"
    q = rate(budget, lambda: inst.query("*IDN?"))
    b = rate(budget, read_block) * size
    return q, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--echo", type=int)
    ap.add_argument("--vxi11")
    ap.add_argument("--prologix")
    ap.add_argument("--device", type=int, default=22)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--block", type=int, default=1 << 20)
    a = ap.parse_args()
    rm = pyvisa.ResourceManager("@py")
    out = {"block": a.block}
    if a.echo:
        inst = rm.open_resource(f"TCPIP::127.0.0.1::{a.echo}::SOCKET",
                                read_termination="\n", write_termination="\n", timeout=10000)
        out["socket_queries_per_second"], out["socket_block_bytes_per_second"] = \
            measure(inst, a.seconds, a.block)
        inst.close()
    if a.vxi11:
        host, port = a.vxi11.rsplit(":", 1)
        inst = rm.open_resource(f"TCPIP::{host},{port}::gpib0,{a.device}::INSTR",
                                read_termination="\n", write_termination="\n", timeout=10000)
        out["vxi11_queries_per_second"], out["vxi11_block_bytes_per_second"] = \
            measure(inst, a.seconds, a.block)
        inst.close()
    if a.prologix:
        host, port = a.prologix.rsplit(":", 1)
        intfc = rm.open_resource(f"PRLGX-TCPIP::{host}::{port}::INTFC")
        inst = rm.open_resource(f"GPIB0::{a.device}::INSTR")
        for attr, value in (("timeout", 10000), ("read_termination", "\n"),
                            ("write_termination", "\n")):
            try:
                setattr(inst, attr, value)
            except pyvisa.errors.VisaIOError:
                pass
        out["prologix_queries_per_second"], out["prologix_block_bytes_per_second"] = \
            measure(inst, a.seconds, a.block, nl_after_block=True)
        inst.close()
        intfc.close()
    rm.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
