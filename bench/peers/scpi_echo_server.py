#!/usr/bin/env python3
"""A minimal SCPI-flavoured echo server on loopback, the reference for target 6 of
bench/compare.sh: what pyvisa-py's SOCKET session reaches against a server that does
nothing but answer.

Lines end with NL; one answer per query:
  *IDN?      -> SIMULATED,SCPI-DMM,0,1.0   (the answer our simulated instrument gives)
  BLOCK? n   -> a definite-length block of n bytes (0, 1, ... 255, 0, ...) and NL
  anything else that ends with '?' -> echoed back
Prints "PORT n" when listening; stops when stdin closes (so its parent takes it down).
"""
import socket
import sys
import threading

IDN = b"SIMULATED,SCPI-DMM,0,1.0\n"
MAX_BLOCK = 64 << 20
PATTERN = bytes(range(256)) * 4096  # 1 MiB


def block(n):
    n = max(0, min(n, MAX_BLOCK))
    body = (PATTERN * (n // len(PATTERN) + 1))[:n]
    digits = str(n).encode()
    return b"#" + str(len(digits)).encode() + digits + body + b"\n"


def serve(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    f = conn.makefile("rb")
    try:
        for line in f:
            cmd = line.strip()
            if cmd == b"*IDN?":
                conn.sendall(IDN)
            elif cmd.startswith(b"BLOCK? "):
                try:
                    conn.sendall(block(int(cmd[7:])))
                except ValueError:
                    conn.sendall(b"-1\n")
            elif cmd.endswith(b"?"):
                conn.sendall(cmd + b"\n")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    print(f"PORT {s.getsockname()[1]}", flush=True)

    def accept():
        while True:
            conn, _ = s.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
