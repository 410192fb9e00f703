#!/usr/bin/env python3
"""drive_programs.py EXAMPLES_DIR -- linux-gpib's own example programs (the interactive
ibtest and ibterm, driven through a pseudo-terminal as a person at a keyboard would, and
findlisteners) on whichever libgpib the environment selects (vboard/ci.sh runs it on compat's library and on
linux-gpib's over the virtual board, and compares what the two print).

Each session's keystrokes go to the program's terminal (echo off, so the transcript is
the program's own output); the transcript is printed with its carriage returns
dropped. A session that does not end within 60 s fails.
"""

import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import termios
import time

SESSIONS = [
    # ibtest on a device: open pad 22, write *IDN?, read the answer, serial poll,
    # trigger, time out a read with nothing to say, quit.
    ("ibtest", [], "d\n22\nw\n*IDN?\nr\n\ns\nx\nt\n9\nr\n\nq\n"),
    # ibtest on the board by name: the bus lines, interface clear, remote enable, quit.
    ("ibtest", [], "b\ngpib0\nl\ni\ne\n1\nq\n"),
    # findlisteners: every address of board 0 scanned, then the board by its name.
    ("findlisteners", [], ""),
    ("findlisteners", ["gpib0"], ""),
    # ibterm: a query per line, then end of input (Ctrl-D).
    ("ibterm", ["-d", "22"], "*IDN?\n*ESR?\n\x04"),
]


def run(program, args, keys):
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    # A terminal that takes no escape sequences (readline's bracketed paste off).
    env = dict(os.environ, TERM="dumb")
    # In a folder of its own: ibterm keeps its history in the working folder.
    p = subprocess.Popen([program] + args, stdin=slave, stdout=slave, stderr=slave,
                         start_new_session=True, env=env, cwd=tempfile.mkdtemp())
    os.close(slave)
    # One line at a time, each once the program has gone quiet (it waits at its
    # prompt): what is typed reaches the program in the mode it reads in (readline's
    # raw mode takes Ctrl-D as end of input only at its own prompt).
    pending = [l + "\n" for l in keys.split("\n")[:-1]] + ([keys.rsplit("\n", 1)[-1]] if not keys.endswith("\n") else [])
    out = b""
    deadline = time.monotonic() + 60
    quiet_since = time.monotonic()
    while True:
        if time.monotonic() > deadline:
            os.killpg(p.pid, signal.SIGKILL)
            sys.exit(f"{program} {' '.join(args)}: no end within 60 s; so far:\n{out.decode(errors='replace')}")
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the program closed its terminal
                break
            if not chunk:
                break
            out += chunk
            quiet_since = time.monotonic()
        elif p.poll() is not None:
            break
        elif pending and time.monotonic() - quiet_since > 0.3:
            os.write(master, pending.pop(0).encode())
            quiet_since = time.monotonic()
    p.wait()
    os.close(master)
    text = out.decode(errors="replace").replace("\r", "")
    return p.returncode, text


def main():
    examples = sys.argv[1]
    for name, args, keys in SESSIONS:
        code, text = run(os.path.join(examples, name), args, keys)
        print(f"=== {name} {' '.join(args)} (exit {code})")
        for line in text.split("\n"):
            # The loader's word about symbol versions (a program built against
            # linux-gpib's library, run on compat's) is not the program's output.
            if "no version information available" in line:
                continue
            print(line)


if __name__ == "__main__":
    main()
