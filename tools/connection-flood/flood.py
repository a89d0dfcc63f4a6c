#!/usr/bin/env python3
"""One address opening and dropping connections as fast as it can, beside a user who asks.

Used by `synchat-bench hostile handshakes` (docs/benchmarks.md). Against a running
`synchat server --open` on loopback:

  flood.py --port P [--ca CA.pem] [--seconds 4] [--flood hello|connect|none]

- the user joins as `calm` (or rejoins with --secret) and asks `GET /v1/world` one request at a
  time on one keep-alive connection from 127.0.0.2, over TLS when --ca is given (Python's ssl
  module: OpenSSL, none of synchat's code);
- meanwhile `--workers` processes (2), from 127.0.0.3, opens connections and drops them: `hello` sends a
  TLS ClientHello (made once, replayed: the attacker does no crypto) then closes; `connect`
  closes at once; `none` is the baseline.

`--print-hello` prints the ClientHello's bytes in hex, for a flood written in another
language (the bench's own, in Swift, opens several times as many connections a second as
Python can). Otherwise prints one JSON object: the user's answers, their p50, p95 and max in milliseconds, failures,
and the flood's connections opened.
"""
import argparse
import json
import multiprocessing
import socket
import ssl
import time


def client_hello():
    """The bytes of a ClientHello, as Python's OpenSSL would start a handshake."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def flood(port, kind, source, stop, opened):
    hello = client_hello() if kind == "hello" else b""
    n = 0
    while not stop.is_set():
        try:
            s = socket.socket()
            s.bind((source, 0))
            s.settimeout(1)
            s.connect(("127.0.0.1", port))
            if hello:
                s.sendall(hello)
            s.close()
            n += 1
        except OSError:
            time.sleep(0.001)
    opened.value = n


class User:
    """One keep-alive connection, one request at a time."""

    def __init__(self, port, ca, source):
        self.port, self.ca, self.source = port, ca, source
        self.s = None
        self.buffer = b""

    def connect(self):
        raw = socket.socket()
        raw.bind((self.source, 0))
        raw.settimeout(5)
        raw.connect(("127.0.0.1", self.port))
        if self.ca:
            ctx = ssl.create_default_context(cafile=self.ca)
            raw = ctx.wrap_socket(raw, server_hostname="localhost")
        self.s, self.buffer = raw, b""

    def ask(self, method, path, body=b"", token=None):
        if self.s is None:
            self.connect()
        head = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nSynchat-Protocol: 2\r\nContent-Length: {len(body)}\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        self.s.sendall(head.encode() + b"\r\n" + body)
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.s.recv(65536)
            if not chunk:
                raise OSError("closed")
            self.buffer += chunk
        headers, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status = int(headers.split(b" ")[1])
        length = 0
        for line in headers.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(self.buffer) < length:
            chunk = self.s.recv(65536)
            if not chunk:
                raise OSError("closed")
            self.buffer += chunk
        answer, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, answer


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else None


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--port", type=int)
    a.add_argument("--print-hello", action="store_true", help="print a ClientHello's bytes in hex, and nothing else")
    a.add_argument("--ca")
    a.add_argument("--seconds", type=float, default=4)
    a.add_argument("--flood", choices=["hello", "connect", "none"], default="hello")
    a.add_argument("--secret")
    a.add_argument("--workers", type=int, default=2, help="processes flooding, all from 127.0.0.3")
    args = a.parse_args()
    if args.print_hello:
        print(client_hello().hex())
        return 0
    if args.port is None:
        a.error("--port is needed")

    user = User(args.port, args.ca, "127.0.0.2")
    secret = args.secret
    if secret is None:
        status, body = user.ask("POST", "/v1/join", json.dumps({"user": "calm"}).encode())
        if status not in (200, 201):
            print(json.dumps({"error": f"join answered {status}: {body[:200]!r}"}))
            return 1
        secret = json.loads(body)["secret"]

    stop = multiprocessing.Event()
    counts = [multiprocessing.Value("l", 0) for _ in range(args.workers if args.flood != "none" else 0)]
    attackers = [multiprocessing.Process(target=flood, args=(args.port, args.flood, "127.0.0.3", stop, c)) for c in counts]
    for p in attackers:
        p.start()
    if attackers:
        time.sleep(0.3)  # the flood under way
    latencies, failures = [], 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            status, _ = user.ask("GET", "/v1/world", token=secret)
            if status != 200:
                failures += 1
            else:
                latencies.append((time.monotonic() - t0) * 1000)
        except OSError:
            failures += 1
            user.s = None
        time.sleep(0.02)
    stop.set()
    for p in attackers:
        p.join(10)
    print(json.dumps({"answers": len(latencies), "failures": failures, "p50": percentile(latencies, 0.5),
                      "p95": percentile(latencies, 0.95), "max": max(latencies) if latencies else None,
                      "flood": args.flood, "opened": sum(c.value for c in counts), "workers": len(attackers), "secret": secret}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
