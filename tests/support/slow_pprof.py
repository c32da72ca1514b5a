#!/usr/bin/env python3
"""A loopback stand-in for a Go service's net/http/pprof endpoints that
answers slowly, for the tests of on-demand captures and their leases.

  slow_pprof.py --port-file F --log F [--delay S] [--bind ADDR] [--timeout S]

Every GET of /debug/pprof/profile (a CPU profile), /heap, /allocs or
/goroutine is held --delay seconds (default 0) and answered with a real
pprof profile from tests/data/pprof, gzipped as Go sends it, its
time_nanos made unique so that no two answers are the same bytes (profreg
stores the same bytes only once). Each request
is logged as one line "<path> <unix time it came in>" when it comes in,
so a test counts the profiles asked for. It listens on --bind (default
127.0.0.1) on a free port, written to the port file, and exits by itself
after --timeout seconds (default 60).
"""
import argparse
import gzip
import itertools
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pprof")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    with gzip.open(os.path.join(DATA, "go-cpu.pb.gz"), "rb") as f:
        cpu = f.read()
    with gzip.open(os.path.join(DATA, "go-heap.pb.gz"), "rb") as f:
        heap = f.read()
    lock = threading.Lock()
    serial = itertools.count(1)

    def unique(profile):
        # Field 9, time_nanos, appended: the last value of a field wins.
        n = time.time_ns() + next(serial)
        out = bytearray(b"\x48")
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        return gzip.compress(profile + bytes(out))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            with lock, open(a.log, "a") as log:
                log.write("%s %.3f\n" % (self.path, time.time()))
            path = self.path.split("?")[0]
            if path == "/debug/pprof/profile":
                body = cpu
            elif path in ("/debug/pprof/heap", "/debug/pprof/allocs",
                          "/debug/pprof/goroutine"):
                body = heap
            else:
                self.send_error(404)
                return
            body = unique(body)
            time.sleep(a.delay)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer((a.bind, 0), Handler)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    threading.Timer(a.timeout, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
