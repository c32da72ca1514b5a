#!/usr/bin/env python3
"""stall_http.py: a loopback HTTP peer that takes every request and never
answers, as a hung server or a stuck proxy does, for the tests of
profreg's timeouts and budgets. Python's standard library only.

  stall_http.py --port-file F --log F [--timeout S]

Listens on 127.0.0.1 on a free port, written to the port file; reads
each request head, logs its request line, one line each, and holds the
connection open without a byte of answer. Exits by itself after
--timeout seconds (default 60).
"""
import argparse
import os
import socket
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    end = time.monotonic() + a.timeout
    lock = threading.Lock()
    held = []

    def take(conn):
        head = b""
        conn.settimeout(max(0.1, end - time.monotonic()))
        try:
            while b"\r\n" not in head and len(head) < 65536:
                got = conn.recv(4096)
                if not got:
                    break
                head += got
        except OSError:
            pass
        with lock:
            with open(a.log, "a") as f:
                f.write(head.split(b"\r\n", 1)[0].decode("latin-1") + "\n")
            held.append(conn)

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(tmp, a.port_file)
    srv.settimeout(0.2)
    while time.monotonic() < end:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=take, args=(conn,), daemon=True).start()
    with lock:
        for c in held:
            c.close()


if __name__ == "__main__":
    main()
