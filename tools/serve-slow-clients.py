#!/usr/bin/env python3
"""Slow-client probe for an HTTP server (atlas-serve's slow-client measurements, docs/fuzzing.md).

Opens N connections that each send part of a request and then stall or drip one byte per
--drip seconds, and meanwhile asks GET /health every --health-every seconds on a fresh
connection. Prints /health's latency (median, max, failures) and how long the server held each
slow connection before closing it (min, median, max, still open at the end).

  tools/serve-slow-clients.py --port 8000 --clients 500 --mode drip-headers --seconds 20

Modes: stall-headers (request line and one header, then nothing), drip-headers (then one
header byte per --drip s, forever), stall-body (headers with Content-Length 1000 and 10 body
bytes), drip-body (then one body byte per --drip s), idle (connect, send nothing).
"""
import argparse
import selectors
import socket
import statistics
import time

HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
BODY_HEAD = HEAD + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"


def health(port, timeout):
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--mode", default="drip-headers", choices=["stall-headers", "drip-headers", "stall-body", "drip-body", "idle"])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--drip", type=float, default=1.0)
    ap.add_argument("--health-every", type=float, default=0.25)
    a = ap.parse_args()

    sel = selectors.DefaultSelector()
    opened = {}
    t_start = time.monotonic()
    for i in range(a.clients):
        s = socket.create_connection(("127.0.0.1", a.port))
        s.setblocking(False)
        if a.mode in ("stall-headers", "drip-headers"):
            s.send(HEAD)
        elif a.mode in ("stall-body", "drip-body"):
            s.send(BODY_HEAD + b'{"model": "')
        opened[s] = time.monotonic()
        sel.register(s, selectors.EVENT_READ)
    t_opened = time.monotonic()
    held = []
    lat, fails = [], 0
    next_health = next_drip = time.monotonic()
    end = t_opened + a.seconds
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_health:
            ok, dt = health(a.port, 10.0)
            lat.append(dt)
            fails += not ok
            next_health = time.monotonic() + a.health_every
        if a.mode.startswith("drip") and now >= next_drip:
            for s in list(opened):
                try:
                    s.send(b"x" if a.mode == "drip-headers" else b"a")
                except OSError:
                    pass
            next_drip = now + a.drip
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                held.append(time.monotonic() - opened.pop(s))
                sel.unregister(s)
                s.close()
    print(f"{a.clients} {a.mode} clients opened in {t_opened - t_start:.2f} s; probed {a.seconds:.0f} s")
    if lat:
        print(f"/health: {len(lat)} asked, {fails} failed, median {statistics.median(lat) * 1e3:.1f} ms, max {max(lat) * 1e3:.1f} ms")
    if held:
        held.sort()
        print(f"closed by the server: {len(held)}, held min {held[0]:.2f} s, median {statistics.median(held):.2f} s, max {held[-1]:.2f} s")
    print(f"still open at the end: {len(opened)}")
    for s in opened:
        s.close()


if __name__ == "__main__":
    main()
