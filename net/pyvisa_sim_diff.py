"""Differential test: pyvisa-sim itself against our simulator's pyvisa-sim devices.

Usage: pyvisa_sim_diff.py GPIB_DIAG YAML...

For each YAML file and each of its resources, the same queries go to pyvisa-sim
(PyVISA's @sim backend) and to ours (the same file loaded by `gpib-diag serve`, one
device per resource, reached through VXI-11 with pyvisa-py), and every answer is
compared byte for byte, termination included. The queries: every dialogue, every
getter, each setter with a valid, an out-of-range and an invalid value (each followed
by its getter), unknown commands, the status registers and error queues, and the
channels (by id in the query, or selected first). Where the files ask for RANDOM
answers, the answers are compared by shape (same number of values, same digits after
the point); where pyvisa-sim raises while answering, ours must answer nothing.
Exits non-zero on the first file with a difference.
"""
import os
import re
import string
import subprocess
import sys
import tempfile

import pyvisa
import yaml

MAX_PER_SERVER = 30  # GPIB addresses 1..30
FMT = string.Formatter()


def strip(s):
    return s.strip(" ") if isinstance(s, str) else s


def to_text(s):
    return s.replace("\\r", "\r").replace("\\n", "\n")


def value_texts(prop):
    """(valid, out of range, invalid) texts for a property's setter."""
    specs = prop.get("specs") or {}
    ty = specs.get("type", "str") if specs else "str"
    conv = {"int": int, "float": float}.get(ty, str)
    valid = specs.get("valid") or []
    lo, hi = specs.get("min"), specs.get("max")
    texts = []
    if valid:
        texts += [conv(v) for v in valid[:2]]
        texts.append(conv(99) if conv is not str else "NOPE")
    elif lo is not None or hi is not None:
        a = conv(lo) if lo is not None else conv(hi) - conv(1)
        b = conv(hi) if hi is not None else a + conv(10)
        texts.append(conv((a + b) / 2) if conv is float else conv((a + b) // 2))
        texts.append(b * 10 + conv(1))
        if lo is not None:
            texts.append(a - conv(1))
    else:
        texts += [7, 2.5, "seven"]
    texts.append("abc")
    return texts


def fill(template, value, ch_id=None):
    """The setter template with the value (and channel id) filled in as text."""
    out = []
    for lit, field, spec, _conv in FMT.parse(template):
        out.append(lit)
        if field is None:
            continue
        if field == "ch_id":
            out.append(str(ch_id))
        elif field == "_":
            out.append("x")
        else:
            t = (spec or "")[-1:]
            if isinstance(value, str):
                out.append(value)
            elif t in ("f", "F", "%"):
                out.append(f"{float(value):.3f}" + ("%" if t == "%" else ""))
            elif t in ("e", "E", "g", "G"):
                out.append(f"{float(value):.3e}".replace("e", t if t in "eE" else "e"))
            elif t in ("d", "n"):
                out.append(str(int(value)))
            elif t in ("x", "X"):
                out.append(format(int(value), t))
            else:
                out.append(str(value))
    return "".join(out)


def component_queries(comp, ch_id=None, fmt_keys=False):
    """Dialogues, getters and setters of a device or a channel group."""
    key = (lambda k: k.format(ch_id=ch_id)) if fmt_keys else (lambda k: k)
    qs = []
    for d in comp.get("dialogues") or []:
        qs.append(key(strip(d["q"])))
    for _name, p in (comp.get("properties") or {}).items():
        g, s = p.get("getter"), p.get("setter")
        if g:
            qs.append(key(strip(g["q"])))
        if s:
            for v in value_texts(p):
                qs.append(fill(strip(s["q"]), v, ch_id))
                if g:
                    qs.append(key(strip(g["q"])))
    return qs


def device_queries(dev):
    qs = component_queries(dev)
    err = dev.get("error")
    regs, queues = [], []
    if isinstance(err, dict):
        regs = [r["q"] for r in err.get("status_register") or []]
        queues = [q["q"] for q in err.get("error_queue") or []]
    qs += regs + queues
    qs += ["BOGUS_COMMAND", "*XYZ?", "", "?IDN;BOGUS"] + regs + queues * 3
    props = dev.get("properties") or {}
    for _name, ch in (dev.get("channels") or {}).items():
        ids = [str(i) for i in ch.get("ids") or []] + ["9"]
        if ch.get("can_select") == "False":
            sel = props.get("selected_channel", {}).get("setter")
            for i in ids:
                if sel:
                    qs.append(fill(strip(sel["q"]), i))
                qs += component_queries(ch)
        else:
            for i in ids:
                qs += component_queries(ch, ch_id=i, fmt_keys=True)
    qs += regs + queues * 2
    return qs


def is_random(dev, q):
    for d in dev.get("dialogues") or []:
        if strip(d["q"]) == q and "RANDOM" in (d.get("r") or ""):
            return True
    for _n, p in (dev.get("properties") or {}).items():
        g = p.get("getter") or {}
        if strip(g.get("q")) == q and "RANDOM" in (g.get("r") or ""):
            return True
    return False


def shape(b):
    return [re.sub(r"[0-9]+", "D", v.lstrip("-")) for v in b.decode("latin-1").split(", ")]


def serve(binary, config):
    p = subprocess.Popen(
        [binary, "serve", "--bus", config, "--port", "0", "--vxi11-port", "0",
         "--no-portmap", "--no-prologix", "--no-hislip"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    m = re.search(r"vxi11=(\S+)", line)
    if not m:
        p.kill()
        raise SystemExit(f"gpib-diag serve printed no ports: {line!r}")
    return p, m.group(1)


def sim_answers(sim_rm, inst, q):
    """pyvisa-sim's answers to q: every queued message, or 'raises'."""
    raised = None
    try:
        inst.write(q)
    except Exception as e:  # pyvisa-sim lets the device's exception through
        raised = e
    dev = sim_rm.visalib.sessions[inst.session].device
    out = b""
    while dev._output_buffers:
        out += inst.read_raw()
    return out, raised


def our_answers(inst, q):
    inst.write(q)
    out = b""
    while True:
        try:
            out += inst.read_raw()
        except pyvisa.errors.VisaIOError as e:
            if e.error_code != pyvisa.constants.VI_ERROR_TMO:
                raise
            return out


def diff_file(binary, path, totals):
    with open(path, encoding="utf-8") as f:
        data = yaml.load(f, Loader=yaml.loader.BaseLoader)
    resources = list((data.get("resources") or {}).items())
    sim_rm = pyvisa.ResourceManager(f"{path}@sim")
    py_rm = pyvisa.ResourceManager("@py")
    failures = 0
    counts = {"resources": 0, "queries": 0, "identical": 0, "random": 0, "raises": 0}
    for start in range(0, len(resources), MAX_PER_SERVER):
        chunk = resources[start:start + MAX_PER_SERVER]
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
            cfg.write('name = "pyvisa-sim-diff"\n[[board]]\nname = "gpib0"\naddress = 0\n')
            for i, (name, _r) in enumerate(chunk, 1):
                cfg.write(f'  [[board.device]]\n  address = {i}\n  model = "pyvisa-sim"\n'
                          f'  file = {os.path.abspath(path)!r}\n  resource = {name!r}\n')
        server, vxi = serve(binary, cfg.name)
        try:
            host, port = vxi.rsplit(":", 1)
            for i, (name, r) in enumerate(chunk, 1):
                dev = data["devices"][r["device"]]
                kind = name.split("::")[0].rstrip("0123456789").upper()
                cls = name.split("::")[-1].upper() if name.count("::") else "INSTR"
                eom = (dev.get("eom") or {}).get(f"{kind} {cls}") or {"q": "\n", "r": "\n"}
                wterm = to_text(strip(eom["q"]))
                sim = sim_rm.open_resource(name, timeout=50)
                ours = py_rm.open_resource(f"TCPIP::{host},{port}::gpib0,{i}::INSTR", timeout=2000)
                for inst in (sim, ours):
                    inst.write_termination = wterm
                    inst.read_termination = ""
                counts["resources"] += 1
                for q in device_queries(dev):
                    want, raised = sim_answers(sim_rm, sim, q)
                    got = our_answers(ours, q)
                    counts["queries"] += 1
                    if raised is not None and got == want:
                        counts["raises"] += 1
                    elif got == want:
                        counts["identical"] += 1
                    elif is_random(dev, q) and want and got and shape(got) == shape(want):
                        counts["random"] += 1
                    else:
                        failures += 1
                        print(f"  DIFF {path} {name} {q!r}: pyvisa-sim {want!r}"
                              f"{' (raised ' + repr(raised) + ')' if raised else ''}, ours {got!r}")
                sim.close()
                ours.close()
        finally:
            server.terminate()
            server.wait()
            os.unlink(cfg.name)
    sim_rm.close()
    py_rm.close()
    print(f"{os.path.basename(path)}: {counts['resources']} resources, {counts['queries']} queries: "
          f"{counts['identical']} identical, {counts['random']} RANDOM answers alike in shape, "
          f"{counts['raises']} where pyvisa-sim raises and ours answers nothing, {failures} different")
    for k, v in counts.items():
        totals[k] = totals.get(k, 0) + v
    totals["files"] = totals.get("files", 0) + 1
    totals["different"] = totals.get("different", 0) + failures
    return failures


def main():
    binary, files = sys.argv[1], sys.argv[2:]
    totals = {}
    for path in files:
        diff_file(binary, path, totals)
    print(f"pyvisa-sim {__import__('pyvisa_sim').__version__} against ours: {totals['files']} files, "
          f"{totals['resources']} resources, {totals['queries']} queries compared, "
          f"{totals['different']} different")
    if totals["different"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
