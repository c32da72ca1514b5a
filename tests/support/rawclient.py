#!/usr/bin/env python3
"""rawclient.py: a hostile HTTP client on a raw socket, for the tests of
profreg serve and its agent (tests/cli/serve_hostile.sh, serve_agent_guard.sh,
serve_guard.sh). Python's standard library only.

  rawclient.py chunked --port P --token T --bytes N --seconds S [--path P]
      POST /v1/captures (or --path) with a chunked body of N bytes in chunks of 4 KiB,
      then its last chunk; stops early when the server closes.
  rawclient.py slow --port P --token T --what head|body --gap G --seconds S
      POST /v1/captures sending one byte every G seconds, of the head or of
      a body of 64 bytes (the head then goes at once).
  rawclient.py hold --port P --conns N --gap G --seconds S [--path P]
      Open N connections, each sending a request head that never ends, a
      header line every G seconds; print "connected N", then "closed C"
      each time the server has closed more of them, until all are closed
      or S seconds pass, and at the end "closed C of N in T s".
  rawclient.py raw --port P --data D --seconds S [--wait W]
      Send D as it is (Python escapes such as \\r\\n are read, and {token}
      is replaced with --token), W seconds after connecting (0), and print
      whatever the server answers until it closes or S seconds pass.

Prints "connected" once connected, "sent N bytes in S s" and then "closed by the server" when the
server closed the connection before the request was sent, else what the
server answered (status line, headers, body). Every wait is bounded by
--seconds; exit 0 unless the arguments are wrong.
"""
import argparse
import select
import socket
import sys
import time


def head(token, extra, path="/v1/captures"):
    return ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Authorization: Bearer %s\r\nContent-Type: application/json\r\n%s\r\n"
            % (path, token, extra)).encode()


def closed(sock):
    """Whether the server has closed (or reset) the connection."""
    r, _, _ = select.select([sock], [], [], 0)
    if not r:
        return False
    try:
        return sock.recv(65536, socket.MSG_PEEK) == b""
    except OSError:
        return True


def answer(sock, deadline):
    data = b""
    while time.monotonic() < deadline:
        r, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        try:
            d = sock.recv(65536)
        except OSError:
            break
        if not d:
            break
        data += d
    return data.decode("utf-8", "replace")


def hold(a, start, deadline):
    socks = [socket.create_connection(("127.0.0.1", a.port), timeout=a.seconds)
             for _ in range(a.conns)]
    print("connected %d" % len(socks), flush=True)
    line = 0
    shut = set()
    next_line = start
    while time.monotonic() < deadline and len(shut) < len(socks):
        before = len(shut)
        for i, sock in enumerate(socks):
            if i not in shut and closed(sock):
                shut.add(i)
        if time.monotonic() >= next_line:
            for i, sock in enumerate(socks):
                if i in shut:
                    continue
                data = ("POST %s HTTP/1.1\r\n" % a.path if line == 0
                        else "X-Pad-%d: x\r\n" % line)
                try:
                    sock.sendall(data.encode())
                except OSError:
                    shut.add(i)
            line += 1
            next_line += a.gap
        if len(shut) != before:
            print("closed %d" % len(shut), flush=True)
        time.sleep(0.1)
    print("closed %d of %d in %.1f s" % (len(shut), len(socks), time.monotonic() - start))
    for sock in socks:
        sock.close()
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["chunked", "slow", "raw", "hold"])
    ap.add_argument("--conns", type=int, default=1)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token", default="")
    ap.add_argument("--data", default="")
    ap.add_argument("--bytes", type=int, default=0)
    ap.add_argument("--what", choices=["head", "body"], default="body")
    ap.add_argument("--gap", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--path", default="/v1/captures")
    ap.add_argument("--wait", type=float, default=0.0)
    a = ap.parse_args()

    start = time.monotonic()
    deadline = start + a.seconds
    if a.mode == "hold":
        return hold(a, start, deadline)
    sock = socket.create_connection(("127.0.0.1", a.port), timeout=a.seconds)
    print("connected", flush=True)
    sent = 0
    cut = False
    if a.mode == "raw":
        data = a.data.encode().decode("unicode_escape").replace("{token}", a.token)
        time.sleep(min(a.wait, a.seconds))
        sock.sendall(data.encode("latin-1"))
        print(answer(sock, deadline))
        sock.close()
        return 0
    try:
        if a.mode == "chunked":
            sock.sendall(head(a.token, "Transfer-Encoding: chunked\r\n", a.path))
            chunk = b"1000\r\n" + b"a" * 4096 + b"\r\n"
            while sent < a.bytes and time.monotonic() < deadline:
                if closed(sock):
                    cut = True
                    break
                sock.sendall(chunk)
                sent += 4096
            if not cut:
                sock.sendall(b"0\r\n\r\n")
        else:
            body = b'{"service": "checkout", "hosts": ["127.0.0.2"], "reason": "slow..."}'[:64]
            h = head(a.token, "Content-Length: %d\r\n" % len(body), a.path)
            slow = h if a.what == "head" else body
            if a.what == "body":
                sock.sendall(h)
            for i in range(len(slow)):
                if closed(sock) or time.monotonic() >= deadline:
                    cut = closed(sock)
                    break
                sock.sendall(slow[i:i + 1])
                sent += 1
                time.sleep(a.gap)
            else:
                if a.what == "head":
                    sock.sendall(body)
    except OSError:
        cut = True
    print("sent %d bytes in %.1f s" % (sent, time.monotonic() - start))
    if cut:
        print("closed by the server")
    else:
        print(answer(sock, deadline))
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
