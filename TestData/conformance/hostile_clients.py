#!/usr/bin/env python3
"""`synchat server` against hostile and careless clients (issue 28), with raw sockets so
that every byte is ours: frames the RFC forbids, floods, lies in headers. Loopback only,
every loop bounded in count and time. Run by .ci/run after the build:

    python3 TestData/conformance/hostile_clients.py .build/debug/synchat

Each check prints `ok` or `FAIL` and what it holds; the exit code is 0 when all hold. The
figures (memory, a normal user's latency while another floods) are printed beside them.
"""
import base64
import json
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/synchat"
DEADLINE = 10.0
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


def read_head(s):
    data = b""
    end = time.monotonic() + DEADLINE
    while b"\r\n\r\n" not in data and time.monotonic() < end:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head.decode("latin-1"), rest


def http_raw(port, request, source=None):
    """Sends `request` (bytes) and returns the first response head and what followed it;
    `source`: the loopback address to come from (another peer)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=(source, 0) if source else None)
    s.sendall(request)
    head, rest = read_head(s)
    length = re.search(r"(?im)^content-length:\s*(\d+)", head)
    end = time.monotonic() + DEADLINE
    while length and len(rest) < int(length.group(1)) and time.monotonic() < end:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    s.close()
    return head, rest


# The protocol's version header, as every synchat client sends it (docs/server.md#one-protocol).
VERSION = "Synchat-Protocol"


def http(port, method, path, body=b"", token=None, scheme="Bearer", source=None, version="2"):
    """One request; `version`: the value of the protocol's header, None for no header."""
    auth = f"Authorization: {scheme} {token}\r\n" if token else ""
    said = f"{VERSION}: {version}\r\n" if version is not None else ""
    head, rest = http_raw(port, f"{method} {path} HTTP/1.1\r\nHost: x\r\n{said}Connection: close\r\n{auth}"
                                f"Content-Length: {len(body)}\r\n\r\n".encode() + body, source)
    status = int(head.split(" ")[1]) if head.startswith("HTTP/") else 0
    return status, head, rest


def frame(opcode, payload=b"", fin=True, mask=True, rsv=0):
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload)
    m = 0x80 if mask else 0
    if n < 126:
        header = bytes([b0, m | n])
    elif n < 65536:
        header = bytes([b0, m | 126]) + struct.pack(">H", n)
    else:
        header = bytes([b0, m | 127]) + struct.pack(">Q", n)
    if not mask:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class Socket:
    """A WebSocket on /v1/node or /v1/push, frames written and read by hand."""

    def __init__(self, port, path, token, source=None, version="2"):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=(source, 0) if source else None)
        key = base64.b64encode(os.urandom(16)).decode()
        said = f"{VERSION}: {version}\r\n" if version is not None else ""
        self.s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{said}Upgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
        self.head, self.buffer = read_head(self.s)
        self.upgraded = self.head.startswith("HTTP/1.1 101")

    def send(self, data):
        try:
            self.s.sendall(data)
            return True
        except OSError:
            return False

    def _read(self, n):
        end = time.monotonic() + DEADLINE
        while len(self.buffer) < n and time.monotonic() < end:
            try:
                chunk = self.s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            self.buffer += chunk
        if len(self.buffer) < n:
            return None
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def read_frame(self):
        h = self._read(2)
        if h is None:
            return None, None
        opcode, n = h[0] & 0x0F, h[1] & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return opcode, self._read(n) or b""

    def close_code(self):
        """The code of the server's close frame (None if the socket ended without one)."""
        for _ in range(10_000):
            opcode, payload = self.read_frame()
            if opcode is None:
                return None
            if opcode == 8:
                return struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
        return None


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_server(*args, host="127.0.0.1"):
    """Another server for the checks that need limits of their own: its process, port, admin token."""
    server = subprocess.Popen([BINARY, "server", "--port", "0", "--host", host, "--speed", "20", "--contacts", "1", "--traffic", "0/h",
                               "--open", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = server.stdout.readline()
    port = int(re.search(r":(\d+) \(", line).group(1))
    return server, port, re.search(r"admin token ([0-9a-f]{32})", line).group(1)


def stop(server):
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()


def join(port, name, source=None, invite=None):
    body = {"user": name} if invite is None else {"user": name, "invite": invite}
    _, _, rest = http(port, "POST", "/v1/join", json.dumps(body).encode(), source=source)
    return json.loads(rest)


def answers(port, request, source=None, wait=3):
    """Every answer to `request` (bytes, maybe several pipelined) on one connection: statuses and bodies."""
    s = socket.create_connection(("127.0.0.1", port), timeout=wait, source_address=(source, 0) if source else None)
    s.sendall(request)
    data, end = b"", time.monotonic() + wait
    while time.monotonic() < end:
        try:
            chunk = s.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    s.close()
    out = []
    while data.startswith(b"HTTP/1.1 "):
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1)) if re.search(rb"(?im)^content-length:", head) else 0
        out.append((int(head.split(b" ")[1]), rest[:n]))
        data = rest[n:]
    return out


def more_rfc_edges(port, users, invite):
    """RFC 6455 and RFC 7230 at the edges: reserved opcodes, text that is not UTF-8, control
    frames counted, a Host missing, CONNECT, an upgrade that is not a connection's first request."""
    fresh = iter(join(port, f"edge{i}", source=f"127.0.10.{i + 1}", invite=invite)["secret"] for i in range(20))
    for op in [3, 4, 5, 6, 7, 11, 12, 13, 14, 15]:
        ws = Socket(port, "/v1/node", next(fresh))
        ws.send(frame(op, b"x"))
        got = ws.close_code()
        check(got == 1002, f"a frame of reserved opcode {op} closes the socket with 1002 ({got})")
        ws.s.close()
    for what, frames in [("a text frame that is not UTF-8", frame(0x1, b'{"id": 1, "method": "\xff"}')),
                         ("a fragmented text message whose joined bytes are not UTF-8",
                          frame(0x1, b'{"id": 1, "method": "\xc3', fin=False) + frame(0x0, b'("}')),
                         ("a close whose reason is not UTF-8", frame(0x8, struct.pack(">H", 1000) + b"bye \xff"))]:
        ws = Socket(port, "/v1/node", next(fresh))
        ws.send(frames)
        got = ws.close_code()
        check(got == 1007, f"{what}: closed with 1007 ({got})")
        ws.s.close()
    ws = Socket(port, "/v1/node", next(fresh))
    ws.send(frame(0x1, '{"id": 1, "method": "é'.encode()[:-1], fin=False) + frame(0x0, '"}'.encode().rjust(3, b"\xa9")))
    opcode, payload = ws.read_frame()
    check(opcode == 1 and b"unknown method" in payload, f"a character split across two fragments is read whole: answered ({payload[:60]!r})")
    ws.s.close()
    # Control frames count against the rate: 200 a second, bursts of 400.
    for opcode in [0x9, 0xA]:
        ws = Socket(port, "/v1/node", next(fresh))
        # 450 in one write: the server reads them all, so its close is not lost in a reset.
        ws.send(frame(opcode, b"") * 450)
        pongs, code = 0, None
        for _ in range(2000):
            op, payload = ws.read_frame()
            if op is None:
                break
            if op == 0xA:
                pongs += 1
            if op == 8:
                code = struct.unpack(">H", payload[:2])[0]
                break
        what = "pings" if opcode == 0x9 else "pongs"
        check(code == 1008 and pongs < 450, f"450 {what} at once: {pongs} answered, then close {code} (1008: the rate counts control frames)")
        ws.s.close()
    secret = users["ada"]
    key = base64.b64encode(os.urandom(16)).decode()
    upgrade = (f"GET /v1/node HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {secret}\r\n\r\n").encode()
    get = f"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {secret}\r\n\r\n".encode()
    got = answers(port, get.replace(b"Host: x\r\n", b""))
    check([a[0] for a in got] == [400] and b"Host" in got[0][1], f"HTTP/1.1 without Host: 400 saying so ({got[:1]})")
    got = answers(port, get.replace(b"Host: x\r\n", b"Host: x\r\nHost: y\r\n"))
    check([a[0] for a in got] == [400], f"two Host headers: 400 ({[a[0] for a in got]})")
    got = answers(port, b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
    check([a[0] for a in got] == [405] and got[0][1].startswith(b'{"error":"CONNECT'),
          f"CONNECT: 405 with a JSON line like every other refusal ({got[:1]})")
    got = answers(port, get + upgrade + get)
    check([a[0] for a in got] == [200, 400, 200] and b"first request" in got[1][1],
          f"an upgrade pipelined after a request is refused in words, and the request after it answered ({[(a[0], a[1][:60]) for a in got]})")
    got = answers(port, upgrade.replace(secret.encode(), b"not-a-secret") + get)
    check([a[0] for a in got] == [401, 200], f"a refused upgrade, then a request on the same connection: answered ({[a[0] for a in got]})")


def versions(port, secret, admin):
    """Every request and socket opening says the protocol's version in a header: one without
    it, with another version or with no version at all is refused, 400, in words that say which
    to run, before anything of it is read (an unknown path too), and nothing is upgraded."""
    routes = [("POST", "/v1/join", json.dumps({"user": "versionless"}).encode(), None), ("GET", "/v1/world", b"", secret),
              ("POST", "/v1/publish", json.dumps({"to": "kaspa:qx", "body": "hi"}).encode(), secret),
              ("POST", "/v1/fault", b"indexer up", secret), ("GET", "/v1/indexer/tip", b"", secret),
              ("GET", "/admin/truth", b"", admin), ("POST", "/admin/fault", b"indexer up", admin), ("GET", "/v1/nowhere", b"", secret)]
    words = {None: b"the request says none: send the header Synchat-Protocol: 2",
             "3": b"the client speaks 3: use the same version of synchat on both sides",
             "two": b"Synchat-Protocol is \\\"two\\\", not a version: send the header Synchat-Protocol: 2"}  # as JSON writes it
    for version, said in words.items():
        for method, path, body, token in routes:
            st, _, rest = http(port, method, path, body, token=token, version=version, source="127.0.11.1")
            check(st == 400 and b"this server speaks synchat protocol 2" in rest and said in rest,
                  f"{method} {path} with {version or 'no'} version: 400 saying which to run ({st} {rest[:100]!r})")
        for path in ["/v1/node", "/v1/push"]:
            ws = Socket(port, path, secret, version=version)
            body, length = ws.buffer, re.search(r"(?im)^content-length:\s*(\d+)", ws.head)
            while length and len(body) < int(length.group(1)):
                chunk = ws.s.recv(65536)
                if not chunk:
                    break
                body += chunk
            check(not ws.upgraded and ws.head.startswith("HTTP/1.1 400") and said in body,
                  f"{path} opened with {version or 'no'} version: refused 400 before switching, in words ({ws.head[:40]!r} {body[:100]!r})")
            ws.s.close()
    st, _, _ = http(port, "GET", "/v1/world", token=secret)
    check(st == 200, f"with the header, the same request is answered ({st})")


def tip_counts():
    """The tips with a count window (adaptive's looks), over real sockets: each object's count
    is what the admin truth's ledger holds, counted here; a bad window is one 400 line naming
    the parameter, and a window over all time is answered as fast as one minute's."""
    server, port, admin = start_server("--contacts", "3", "--traffic", "1200/h", "--speed", "60")
    try:
        secret = join(port, "ada")["secret"]
        time.sleep(3)  # three simulated minutes: about sixty messages
        _, _, rest = http(port, "GET", "/admin/truth?user=ada", token=admin)
        ledger = json.loads(rest)["ledger"]
        newest = max(m["blockTime"] for m in ledger)
        for after, through in [(0, newest - 30_000), (60_000, 120_000), (90_000, 90_000)]:
            st, _, rest = http(port, "GET", f"/v1/indexer/tip?after={after}&through={through}", token=secret)
            got = {name: value[1] for name, value in json.loads(rest)["objects"].items()}
            want = {}
            for m in ledger:
                name = {"handshake": "handshakes/in", "payment": "payments"}.get(m["kind"], f"contextual/{m['conversation']}/in")
                if m["direction"] == "incoming" and after < m["blockTime"] <= through:
                    want[name] = want.get(name, 0) + 1
            got = {k: v for k, v in got.items() if v}
            check(st == 200 and got == want and (sum(want.values()) > 20 or after > 0),
                  f"tip counts in ({after}, {through}] are the ledger's ({sum(want.values())} messages): {got == want}")
        for query, words in [("after=5", b"missing parameter through"), ("after=9&through=5", b"later than through"),
                             ("after=-1&through=5", b"after must be a non-negative integer"),
                             ("after=1&through=2&after=3", b"given twice"), ("since=1", b"unknown parameter since")]:
            st, _, rest = http(port, "GET", f"/v1/indexer/tip?{query}", token=secret)
            check(st == 400 and words in rest and rest.count(b"\n") <= 1, f"tip?{query}: {st} {rest[:80]!r}")
        began = time.monotonic()
        for _ in range(200):
            http(port, "GET", f"/v1/indexer/tip?after=0&through={2**62}", token=secret)
        took = time.monotonic() - began
        check(took < 20, f"200 tips counted over all time: {took:.1f} s")
    finally:
        stop(server)


def invites_guessed(port, invite):
    """Wrong invites from many addresses at once: capped for the whole server (20 a minute
    here); the right invite waits meanwhile."""
    results = []

    def guess(i):
        st, _, _ = http(port, "POST", "/v1/join", json.dumps({"user": f"guess{i}", "invite": f"{i:016x}"}).encode(),
                        source=f"127.0.4.{i + 1}")
        results.append(st)
    threads = [threading.Thread(target=guess, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    right, _, _ = http(port, "POST", "/v1/join", json.dumps({"user": "rightful", "invite": invite}).encode(), source="127.0.4.200")
    check(results.count(403) <= 20 and results.count(429) >= 19 and right == 429,
          f"40 wrong invites from 40 addresses at once: {results.count(403)} checked (403), {results.count(429)} refused unchecked (429); "
          f"the right one meanwhile {right}")
    for i in range(5):  # a second burst: the log does not say it again
        http(port, "POST", "/v1/join", json.dumps({"user": f"again{i}", "invite": f"{i:016x}"}).encode(), source=f"127.0.5.{i + 1}")


def crowd_at_the_cap():
    """A crowd of addresses each at its per-peer limit fills the server; a newcomer is served
    by shedding the largest holders (here: at most 48 connections, 16 a peer)."""
    server, port, _ = start_server("--max-connections", "48", "--peer-connections", "16")
    try:
        crowd = []
        for a in range(3):
            for u in range(2):
                secret = join(port, f"crowd{a}x{u}")["secret"]
                for _ in range(8):
                    ws = Socket(port, "/v1/node", secret, source=f"127.0.6.{a + 1}")  # one push socket a user: node sockets
                    if ws.upgraded:
                        crowd.append(ws)
        check(len(crowd) == 48, f"3 addresses × 16 upgraded sockets fill the cap of 48 ({len(crowd)} open)")
        served = []
        for n in range(5):
            ok = 0
            for _ in range(4):
                try:
                    status, _, _ = http(port, "GET", "/v1/indexer/tip", token=None, source=f"127.0.7.{n + 1}")
                    ok += status == 401  # served: answered (no secret needed to be answered)
                except OSError:
                    pass
            served.append(ok)
        gone = 0
        for ws in crowd:
            ws.s.setblocking(False)
            try:
                while ws.s.recv(65536):
                    pass
                gone += 1  # the end of the stream: shed
            except BlockingIOError:
                pass
            except OSError:
                gone += 1
        check(served == [4] * 5, f"5 fresh addresses at the cap are each served 4 of 4 times ({served}); the crowd gave way {gone} sockets")
        for ws in crowd:
            ws.s.close()
    finally:
        stop(server)


def silent_sockets():
    """A socket silent for --ping-after is pinged; one that does not answer within --pong-timeout
    is closed (1 s and 1 s here); one that answers stays."""
    server, port, _ = start_server("--ping-after", "1s", "--pong-timeout", "1s")
    try:
        secret = join(port, "quiet")["secret"]
        silent = Socket(port, "/v1/push", secret)
        while silent.read_frame()[0] == 1:  # what the relay says at opening
            break
        t0 = time.monotonic()
        ops = []
        for _ in range(10):
            op, _ = silent.read_frame()
            ops.append(op)
            if op in (8, None):
                break
        took = time.monotonic() - t0
        check(9 in ops and ops[-1] == 8 and took < 5, f"a silent socket is pinged, then closed when it does not answer ({ops}, {took:.1f} s)")
        answering = Socket(port, "/v1/node", secret)
        end, pinged = time.monotonic() + 4, 0
        answering.s.settimeout(0.2)
        while time.monotonic() < end:
            try:
                op, payload = answering.read_frame()
            except OSError:
                continue
            if op == 9:
                pinged += 1
                answering.send(frame(0xA, payload))
            if op == 8:
                break
        answering.s.settimeout(DEADLINE)
        answering.send(frame(0x1, b'{"id": 1, "method": "hello"}'))
        op, payload = answering.read_frame()
        check(pinged >= 1 and op == 1 and b"unknown method" in payload,
              f"a socket that answers its pings stays open ({pinged} pings answered in 4 s, then served)")
    finally:
        stop(server)


def until_closed(s, wait):
    """Reads `s` until the peer closes it or `wait` seconds pass with nothing: whether it was
    closed (an end of stream or a reset), and the bytes that came before."""
    s.settimeout(wait)
    got = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return True, got
            got += chunk
    except socket.timeout:
        return False, got
    except OSError:
        return True, got


def ipv6_per_64():
    """IPv6 peers count per /64 (on ::1, the loopback's own /64): its connections are held to
    --peer-connections like one address's."""
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        print("skip  no IPv6 loopback here: the /64 check did not run")
        return
    server, port, _ = start_server("--peer-connections", "4", host="::1")
    try:
        held = [socket.create_connection(("::1", port), timeout=DEADLINE) for _ in range(4)]
        extra = socket.create_connection(("::1", port), timeout=DEADLINE)
        closed, said = until_closed(extra, 3)
        check(closed and said.startswith(b"HTTP/1.1 503") and b"(--peer-connections 4)" in said,
              f"over IPv6, a /64's fifth connection is answered 503 naming --peer-connections 4, and closed at once ({said[-90:]!r})")
        for s in held + [extra]:
            s.close()
    finally:
        stop(server)


def heads_per_peer():
    """A peer holds at most --peer-heads connections that have not sent a whole first head: its
    newest closes its oldest (a crowd kept 8 192 unfinished heads, 55–58 MB); a request from
    it is still served, and another address's heads are its own."""
    server, port, _ = start_server("--peer-heads", "4")
    try:
        heads = []
        for _ in range(6):
            s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.13.1", 0))
            s.sendall(b"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\n")
            heads.append(s)
            time.sleep(0.05)
        other = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.13.2", 0))
        other.sendall(b"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\n")
        time.sleep(0.3)

        said = {}

        def ended(s):
            closed, got = until_closed(s, 0.3)
            if closed:
                said[s] = got
            return closed
        states = [ended(s) for s in heads]
        check(states == [True, True, False, False, False, False] and not ended(other),
              f"of 6 unfinished heads from one address at --peer-heads 4, the 2 oldest are closed ({states}); another address's stays")
        check(all(said.get(s, b"").startswith(b"HTTP/1.1 503") and b"(--peer-heads 4)" in said.get(s, b"")
                  and b"Synchat-Request-Not-Read: 1" in said.get(s, b"") for s in heads[:2]),
              "each is first answered 503 naming --peer-heads 4, its request not read")
        status, _, _ = http(port, "GET", "/v1/indexer/tip", source="127.0.13.1")
        check(status == 401, f"a whole request from that address is still answered ({status})")
        for s in heads + [other]:
            s.close()
    finally:
        stop(server)


def new_connections_per_peer():
    """One address opens at most --peer-rate new connections a second, in bursts of four times
    as many: past it a connection is refused as it comes, before anything is built for it (on
    plain HTTP answered 503 naming --peer-rate, its request not read; over TLS closed before a
    handshake the server would pay a key exchange and a signature for). Another address is
    unaffected, and the rate refills."""
    server, port, _ = start_server("--peer-rate", "5", "--peer-heads", "200", "--peer-connections", "200")
    try:
        t0 = time.monotonic()
        held = [socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.14.1", 0)) for _ in range(60)]
        elapsed = time.monotonic() - t0
        other = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.14.2", 0))
        time.sleep(0.3)
        said = []
        for s in held + [other]:
            closed, got = until_closed(s, 0.3)
            said.append(got if closed else b"(open)")
        kept = sum(1 for g in said[:-1] if g == b"(open)")
        refused = [g for g in said[:-1] if g.startswith(b"HTTP/1.1 503")]
        most = 20 + 5 * (elapsed + 0.3) + 1
        check(20 <= kept <= most and len(refused) == 60 - kept,
              f"60 connections at once from one address at --peer-rate 5: {kept} kept (a burst of 20, then 5 a second: at most {most:.0f}), the rest refused ({len(refused)})")
        check(all(b"(--peer-rate 5)" in g and b"Synchat-Request-Not-Read: 1" in g for g in refused),
              "each refused one is answered 503 naming --peer-rate 5, its request not read")
        check(said[-1] == b"(open)", "another address's connection at the same moment is kept")
        for s in held + [other]:
            s.close()
        time.sleep(1.2)
        status, _, _ = http(port, "GET", "/v1/indexer/tip", source="127.0.14.1")
        check(status == 401, f"a second later the rate has refilled: a request from that address is answered ({status})")
    finally:
        stop(server)
    log = server.stdout.read()
    check("connections refused past --peer-rate 5" in log and "127.0.14.1" in log,
          "the server's log names the address refused past --peer-rate")
    handshakes_per_peer()


def handshakes_per_peer():
    """Over TLS the same limit holds before the handshake: a refused connection closes without a
    ServerHello, an admitted one completes its handshake."""
    import ssl
    import tempfile
    with tempfile.TemporaryDirectory() as tls:
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", tls + "/key.pem", "-out", tls + "/cert.pem",
                               "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                              capture_output=True)
        if made.returncode != 0:
            print("skip  openssl could not make a certificate: the TLS half did not run")
            return
        server, port, _ = start_server("--peer-rate", "5", "--peer-heads", "200", "--peer-connections", "200",
                                       "--tls-cert", tls + "/cert.pem", "--tls-key", tls + "/key.pem")
        try:
            ctx = ssl.create_default_context(cafile=tls + "/cert.pem")
            done, failed = 0, 0
            t0 = time.monotonic()
            raws = [socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.14.3", 0)) for _ in range(40)]
            elapsed = time.monotonic() - t0
            kept = []
            for raw in raws:
                try:
                    kept.append(ctx.wrap_socket(raw, server_hostname="localhost"))
                    done += 1
                except (ssl.SSLError, OSError):
                    failed += 1
            most = 20 + 5 * (elapsed + 1) + 1
            check(20 <= done <= most and failed == 40 - done,
                  f"40 TLS connections at once from one address at --peer-rate 5: {done} handshakes done (at most {most:.0f}), {failed} closed before the handshake")
            for s in kept:
                s.close()
        finally:
            stop(server)


def memory_a_socket():
    """What a held connection costs the server, and that it is given back: 2 000 upgraded node
    sockets (250 users, 8 each, from 32 addresses) cost at most 6.5 KB of resident memory each
    (reads begin in 512 bytes, not in a 4 KB buffer kept for life), and once they are closed the
    server's resident size comes back to within 4 MB of before (it trims the allocator's free
    pages every 5 s)."""
    server, port, _ = start_server("--peer-joins", "100000")
    try:
        secrets = [join(port, f"held{u}", source=f"127.0.11.{u % 200 + 1}")["secret"] for u in range(250)]
        time.sleep(0.5)
        before = rss_kb(server.pid)
        held = []
        for k in range(2000):
            ws = Socket(port, "/v1/node", secrets[k // 8], source=f"127.0.12.{k // 64 + 1}")
            if ws.upgraded:
                held.append(ws)
            else:
                ws.s.close()
        time.sleep(0.5)
        each = (rss_kb(server.pid) - before) / max(len(held), 1)
        check(len(held) == 2000 and each <= 6.5,
              f"{len(held)} upgraded sockets held: {each:.1f} KB of the server's resident memory each (≤ 6.5)")
        for ws in held:
            ws.s.close()
        deadline, after = time.monotonic() + 15, rss_kb(server.pid)
        while (after - before) / 1024 > 4 and time.monotonic() < deadline:
            time.sleep(0.5)
            after = rss_kb(server.pid)
        check((after - before) / 1024 <= 4,
              f"closed, the server comes back to {(after - before) / 1024:+.1f} MB of before (within 4 MB, by 15 s)")
    finally:
        stop(server)


def slow_requests_and_quota():
    """Requests left behind by peers that hung up while their user's own slow indexer
    (indexer latency 10m) kept the answers: each costs the server no more than the world's
    entry for it; answers pending per user are bounded; a user's faults are capped; and a
    user's kept bytes have a quota (64 KiB here)."""
    server, port, admin = start_server("--pending-answers", "100000", "--user-quota", "64KiB", "--peer-joins", "1000")
    try:
        st, _, rest = http(port, "POST", "/v1/fault", b"indexer latency 11m", token=join(port, "hasty")["secret"])
        check(st == 400 and b"at most 10m" in rest, f"a user's own indexer latency of 11m is refused, saying the cap ({st} {rest[:90]!r})")
        secrets = [join(port, f"slow{i}", source=f"127.0.8.{i + 1}")["secret"] for i in range(31)]
        for secret in secrets:
            http(port, "POST", "/v1/fault", b"indexer latency 10m", token=secret)
        time.sleep(0.5)
        before = rss_kb(server.pid)
        sent = [0]

        def abandon(secret, n, source):
            request = f"GET /v1/indexer/tip HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {secret}\r\n\r\n".encode()
            for _ in range(n):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=(source, 0))
                    s.sendall(request)
                    s.close()
                    sent[0] += 1
                except OSError:
                    time.sleep(0.01)
        threads = [threading.Thread(target=abandon, args=(secret, 400, f"127.0.9.{i + 1}")) for i, secret in enumerate(secrets)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(1)
        growth = (rss_kb(server.pid) - before) / 1024
        check(sent[0] >= 12_000 and growth <= 20,
              f"{sent[0]} requests whose peers hung up, their answers due in 10 minutes: the server grew {growth:.1f} MB (≤ 20)")
    finally:
        stop(server)
    server, port, _ = start_server("--user-quota", "64KiB", "--pending-answers", "64")
    try:
        zed = join(port, "zed")
        to = zed["contacts"][0]["address"]
        statuses = []
        for i in range(5):
            st, _, rest = http(port, "POST", "/v1/publish", json.dumps({"to": to, "body": str(i) * 16384}).encode(), token=zed["secret"])
            statuses.append(st)
        check(statuses == [200, 200, 200, 200, 507] and b"quota" in rest,
              f"16 KiB publishes past a quota of 64 KiB: {statuses}, the last saying why ({rest[:100]!r})")
        http(port, "POST", "/v1/fault", b"indexer latency 10m", token=zed["secret"])
        for _ in range(64):
            s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
            s.sendall(f"GET /v1/indexer/tip HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {zed['secret']}\r\n\r\n".encode())
            s.close()
        time.sleep(0.3)
        try:
            st, _, rest = http(port, "GET", "/v1/indexer/tip", token=zed["secret"])
        except OSError as e:
            st, rest = None, str(e).encode()  # no answer: it is pending too
        check(st == 429 and b"64 indexer answers pending" in rest, f"the 65th pending indexer answer of one user: {st} {rest[:80]!r}")
    finally:
        stop(server)


def main():
    server = subprocess.Popen([BINARY, "server", "--port", "0", "--speed", "20", "--contacts", "2", "--traffic", "0/h",
                               "--peer-connections", "16", "--head-timeout", "1s", "--idle-timeout", "2s", "--peer-joins", "30",
                               "--failed-invites", "20"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        invite = re.search(r"; invite ([^;)\s]+)", line).group(1)

        def join_body(name, code=invite):
            return json.dumps({"user": name, "invite": code}).encode()

        # Joining is gated: a first join without the invite, or with another, gets 403 and
        # says why; with it, 201; a rejoin shows its secret, not the invite.
        st_none, _, rest_none = http(port, "POST", "/v1/join", json.dumps({"user": "stranger"}).encode())
        st_wrong, _, _ = http(port, "POST", "/v1/join", join_body("stranger", "0" * 32))
        check(st_none == 403 and b"invite" in rest_none and st_wrong == 403,
              f"a first join without the invite ({st_none}) or with a wrong one ({st_wrong}) is refused, 403, naming the invite")
        admin = re.search(r"admin token ([0-9a-f]{32})", line).group(1)
        users, users_address = {}, {}
        for name in ["ada", "bo", "cy", "di"]:
            status, _, rest = http(port, "POST", "/v1/join", join_body(name))
            users[name] = json.loads(rest)["secret"]
            users_address[name] = json.loads(rest)["address"]
        st_rejoin, _, _ = http(port, "POST", "/v1/join", json.dumps({"user": "ada"}).encode(), token=users["ada"])
        check(st_rejoin == 200, f"a rejoin with its secret needs no invite ({st_rejoin})")
        st_contact, _, _ = http(port, "POST", "/v1/join", json.dumps({"user": "alice"}).encode())
        st_badname, _, _ = http(port, "POST", "/v1/join", json.dumps({"user": "Ada Lovelace"}).encode())
        check(st_contact == 409 and st_badname == 400,
              f"a name no user may take is told so before the invite is asked: a contact's {st_contact}, a bad name {st_badname}")

        # A directive is text anyone may send: durations past ten years are refused, not
        # overflowed (indexer latency 9999999999999999 stopped the server).
        for line in [b"indexer latency 9999999999999999", b"indexer latency 999999999d999999999d", b"push delay 4000d"]:
            st, _, rest = http(port, "POST", "/v1/fault", line, token=users["ada"])
            check(st == 400 and b"too long" in rest, f"{line.decode()}: {st} {rest[:80]!r}")
        st, _, _ = http(port, "GET", "/v1/world", token=users["ada"])
        check(st == 200, "the server is still serving after them")

        # Joins are rate-limited per peer address (30 a minute here): a flood gets 429, and
        # another address still joins.
        statuses = []
        for i in range(40):
            st, _, _ = http(port, "POST", "/v1/join", join_body(f"flood{i}"), source="127.0.0.5")
            statuses.append(st)
        st, _, _ = http(port, "POST", "/v1/join", join_body("calm"), source="127.0.0.6")
        check(429 in statuses and statuses.count(201) <= 30 and st == 201,
              f"a join flood from one address gets 429 past the limit ({statuses.count(201)} of 40 joined), another address joins")

        # The rate limit weighs what an answer costs: one request, and one more each 4 KB. With
        # about 110 users, /v1/world is about 11 KB; a user who pipelines 400 of them (its whole
        # burst, counted in requests) gets far fewer before 429.
        for i in range(75):
            http(port, "POST", "/v1/join", join_body(f"crowd{i}"), source=f"127.0.1.{i // 15 + 1}")
        _, _, rest = http(port, "POST", "/v1/join", join_body("weigh"), source="127.0.1.9")
        weigh = json.loads(rest)["secret"]
        _, _, one = http(port, "GET", "/v1/world", token=weigh)
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.0.9", 0))
        s.sendall(f"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {weigh}\r\n\r\n".encode() * 400)
        received, end = b"", time.monotonic() + 30
        while received.count(b"HTTP/1.1 ") < 400 and time.monotonic() < end:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            received += chunk
        s.close()
        statuses = re.findall(rb"HTTP/1\.1 (\d{3})", received)
        served = statuses.count(b"200")
        check(len(one) > 8192 and served < 300 and b"429" in statuses,
              f"the rate limit weighs answers: of 400 pipelined /v1/world of {len(one) / 1024:.1f} KB, {served} served, then 429 (by count: 400)")

        # RFC 6455 at the edges of the protocol.
        ws = Socket(port, "/v1/node", users["ada"])
        check(ws.upgraded, "the node socket upgrades (101)")
        refused = Socket(port, "/v1/node", "not-a-secret")
        check(refused.head.startswith("HTTP/1.1 401"), "an upgrade with a wrong secret gets 401 saying why, not a silent close")
        ws.send(frame(0x2, b"\x00\x01"))
        check(ws.close_code() == 1003, "a binary frame is refused with close 1003")
        for sent, expected, what in [(4000, 4000, "an application's code 4000 is echoed"), (1001, 1001, "1001 is echoed"),
                                     (999, 1002, "code 999 (no peer may send it) is a protocol error, 1002"),
                                     (1005, 1002, "code 1005 (never on the wire) is 1002")]:
            ws = Socket(port, "/v1/node", users["ada"])
            ws.send(frame(0x8, struct.pack(">H", sent)))
            got = ws.close_code()
            check(got == expected, f"a close with {sent}: answered {got}; {what}")
        ws = Socket(port, "/v1/node", users["ada"])
        ws.send(frame(0x1, b"{", fin=False) + b"".join(frame(0x0, b" ", fin=False) for _ in range(70)))
        check(ws.close_code() == 1009, "a message of more than 64 fragments is closed with 1009, not dropped in silence")
        ws = Socket(port, "/v1/node", users["ada"])
        ws.send(frame(0x1, b" " * 40_000, fin=False) + frame(0x0, b" " * 40_000, fin=True))
        check(ws.close_code() == 1009, "a fragmented message over 64 KiB is closed with 1009")
        ws = Socket(port, "/v1/node", users["ada"])
        ws.send(frame(0x1, b"{", fin=False) + frame(0x1, b"{}", fin=True))
        check(ws.close_code() == 1002, "a text frame inside a fragmented message is a protocol error, 1002")

        # RFC 6455 §5.1, §5.2: a client's frame must be masked, and no extension was agreed,
        # so a set RSV bit is a protocol error; each closes the socket with 1002.
        ws = Socket(port, "/v1/node", users["ada"])
        ws.send(frame(0x1, b'{"id":1,"method":"ping"}', mask=False))
        got = ws.close_code()
        check(got == 1002, f"an unmasked client frame is a protocol error: 1002 ({got})")
        ws = Socket(port, "/v1/node", users["ada"])
        ws.send(frame(0x1, b'{"id":1,"method":"ping"}', rsv=4))
        got = ws.close_code()
        check(got == 1002, f"a frame with RSV1 set (no extension agreed) is a protocol error: 1002 ({got})")

        # RFC 6455 §4.2.1: an upgrade is a GET with Connection: Upgrade, Upgrade: websocket,
        # a 16-byte base64 key and version 13; anything else is not upgraded.
        def upgrade(method="GET", connection="Upgrade", key=None, version="13"):
            key = key if key is not None else base64.b64encode(os.urandom(16)).decode()
            lines = [f"{method} /v1/node HTTP/1.1", "Host: 127.0.0.1", "Synchat-Protocol: 2", "Upgrade: websocket", f"Authorization: Bearer {users['ada']}",
                     "Content-Length: 0", f"Sec-WebSocket-Key: {key}", f"Sec-WebSocket-Version: {version}"]
            if connection:
                lines.append(f"Connection: {connection}")
            head, _ = http_raw(port, ("\r\n".join(lines) + "\r\n\r\n").encode())
            return head.split("\r\n")[0]
        for what, line in [("a POST", upgrade(method="POST")), ("no Connection: Upgrade", upgrade(connection=None)),
                           ("a key that is not 16 bytes of base64", upgrade(key="short")), ("version 8", upgrade(version="8"))]:
            check(line.startswith("HTTP/1.1 4"), f"an upgrade with {what} is refused, not upgraded ({line})")

        # A node socket that subscribes again replaces its subscription, and a closed socket
        # leaves none behind (each left one, about 4.5 KB, issue 28 #8).
        def subscriptions(user):
            _, _, rest = http(port, "GET", f"/admin/truth?user={user}", token=admin)
            return json.loads(rest)["nodeSubscriptions"]
        sub = frame(0x1, json.dumps({"id": 1, "method": "subscribeUtxosChanged",
                                     "params": {"addresses": [users_address["di"]]}}).encode())
        ws = Socket(port, "/v1/node", users["di"])
        for _ in range(3):
            ws.send(sub)
        time.sleep(0.5)
        held = subscriptions("di")
        ws.send(frame(0x8, struct.pack(">H", 1000)))
        ws.close_code()
        ws.s.close()
        time.sleep(0.3)
        check(held == 1 and subscriptions("di") == 0,
              f"a node socket that subscribes three times holds one subscription ({held}); closed, none ({subscriptions('di')})")

        # JSON-RPC ids go back exactly as they came (JSON-RPC 2.0 §5).
        ws = Socket(port, "/v1/node", users["ada"])
        for raw in ['7', '"abc"', '9007199254740993', 'true', 'null', '-5e2', '"\\u00e9\\""']:
            ws.send(frame(0x1, ('{"id": ' + raw + ', "method": "dance"}').encode()))
            opcode, payload = ws.read_frame()
            check(opcode == 1 and payload.startswith(b'{"id":' + raw.encode() + b','), f"the id {raw} is echoed exactly ({payload[:60]!r})")
        ws.send(frame(0x1, b'{"id": {"a": 1}, "method": "dance"}'))
        opcode, payload = ws.read_frame()
        check(opcode == 1 and payload.startswith(b'{"id":null,') and b"string, a number or null" in payload, "an object as id is refused, with id null")
        ws.s.close()

        # Two users who join at about the same moment see each other: one joins while the
        # other's client has joined but not yet opened its push relay.
        _, _, rest = http(port, "POST", "/v1/join", join_body("ev"))
        ev = json.loads(rest)
        _, _, rest = http(port, "POST", "/v1/join", join_body("fi"))
        fi = json.loads(rest)
        relay = Socket(port, "/v1/push", ev["secret"])
        told = False
        for _ in range(10):
            opcode, payload = relay.read_frame()
            if opcode == 1 and b'"contactsChanged"' in payload:
                told = True
                break
        status, _, rest = http(port, "GET", "/v1/world", token=ev["secret"])
        sees = fi["address"] in rest.decode()
        check(told and sees and not any(c["address"] == fi["address"] for c in ev["contacts"]),
              "a user who joined before this client's push relay opened is announced on it (contactsChanged), and /v1/world has it")
        relay.s.close()

        # setMuted keeps only a contact of the user's.
        ws = Socket(port, "/v1/push", users["ada"])
        ws.send(frame(0x1, json.dumps({"id": 1, "method": "setMuted", "params": {"contact": "x" * 60_000, "muted": True}}).encode()))
        answer = None
        for _ in range(20):
            opcode, payload = ws.read_frame()
            if opcode == 1 and b'"id":1' in payload.replace(b" ", b""):
                answer = json.loads(payload)
                break
        check(answer is not None and "not a contact" in answer.get("error", {}).get("message", ""),
              "setMuted with a 60 KB name is refused (not a contact), not kept")
        ws.s.close()

        # HTTP: the scheme's case, an early 413, 100-continue.
        status, _, _ = http(port, "GET", "/v1/world", token=users["ada"], scheme="bearer")
        check(status == 200, "a lower-case 'bearer' scheme is accepted (RFC 7235: case-insensitive)")
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        s.sendall(f"POST /v1/publish HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {users['ada']}\r\nContent-Length: 1000000000\r\n\r\n".encode())
        t0 = time.monotonic()
        head, _ = read_head(s)
        check(head.startswith("HTTP/1.1 413") and "connection: close" in head.lower(),
              f"a declared 1 GB body gets 413 at once ({(time.monotonic() - t0) * 1000:.0f} ms), before a byte of it, and the socket closes")
        s.close()
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        body = json.dumps({"user": "ada"}).encode()
        s.sendall(f"POST /v1/join HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nExpect: 100-continue\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        head, _ = read_head(s)
        check(head.startswith("HTTP/1.1 100"), "Expect: 100-continue is answered 100 Continue before the body")
        s.close()

        # Connections that never finish, or never end: timed out (head 1 s, idle 2 s here).
        def closed_within(s, seconds):
            s.settimeout(seconds)
            t0 = time.monotonic()
            try:
                while s.recv(4096):
                    pass
            except socket.timeout:
                return None
            except OSError:
                pass
            return time.monotonic() - t0
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        s.sendall(b"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\n")  # a head that never completes
        took = closed_within(s, 5)
        check(took is not None and took < 3, f"a request head that never completes is closed by the head timeout ({took and round(took, 1)} s)")
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        s.sendall(f"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {users['ada']}\r\n\r\n".encode())
        head, _ = read_head(s)
        took = closed_within(s, 6)
        check(head.startswith("HTTP/1.1 200") and took is not None and took < 4, f"an idle keep-alive connection is closed by the idle timeout ({took and round(took, 1)} s)")
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        s.sendall(f"POST /v1/publish HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {users['ada']}\r\nContent-Length: 100\r\n\r\n{{".encode())
        took = closed_within(s, 6)
        check(took is not None and took < 4, f"a declared body that never comes is closed ({took and round(took, 1)} s)")
        head, rest = http_raw(port, b"HELLO THERE\r\n\r\n")
        check(head.startswith("HTTP/1.1 400") and "connection: close" in head.lower() and b'"error"' in rest,
              f"a request the parser cannot read gets 400 with a JSON line ({rest[:80]!r}) and the socket closes")
        status, head, _ = http(port, "GET", "/v1/world", token=users["ada"])
        check(status == 200 and "connection: close" in head.lower(), "Connection: close is honoured")
        held = [socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) for _ in range(16)]
        extra = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        took = closed_within(extra, 3)
        check(took is not None and took < 1, "one peer's 17th connection is closed at once (--peer-connections 16)")
        other = socket.socket()
        other.bind(("127.0.0.2", 0))
        other.settimeout(DEADLINE)
        other.connect(("127.0.0.1", port))
        other.sendall(f"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nConnection: close\r\nAuthorization: Bearer {users['bo']}\r\n\r\n".encode())
        head, _ = read_head(other)
        check(head.startswith("HTTP/1.1 200"), "while one peer holds all it may, another peer address is served")
        for h in held:
            h.close()
        other.close()
        time.sleep(0.2)

        # Floods: the socket goes, the server's memory stays, another user is served.
        pid = server.pid
        before = rss_kb(pid)
        ws = Socket(port, "/v1/node", users["bo"])
        sent = 0
        for _ in range(200_000):
            if not ws.send(frame(0x2, b"x")):
                break
            sent += 1
        # (Under a flood the close frame may be lost in the reset; a single binary frame's 1003 is checked above.)
        check(sent < 200_000, f"a flood of binary frames ends the socket at once ({sent} of 200 000 sent before it went)")
        ws = Socket(port, "/v1/node", users["cy"])
        flood = frame(0x1, b'{"method":"ping"}') * 200
        for _ in range(50):
            if not ws.send(flood):
                break
        check(ws.close_code() == 1008, "text frames past the rate limit close the socket with 1008, no error frame each")
        # Pipelined requests whose answers are never read: the server stops reading the
        # socket past its high-water mark, then the idle timeout closes it.
        at_pipelining = rss_kb(pid)
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.0.4", 0))
        s.setblocking(False)
        request = f"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {users['ada']}\r\n\r\n".encode() * 1000
        pipelined, end = 0, time.monotonic() + 8
        while time.monotonic() < end and pipelined < 820_000:
            try:
                sent = s.send(request)
                pipelined += sent // (len(request) // 1000)
            except BlockingIOError:
                time.sleep(0.05)  # the server stopped reading: it holds what it owes
            except OSError:
                break  # closed by the server
        growth_pipelined = (rss_kb(pid) - at_pipelining) / 1024
        # Without the high-water mark the server kept reading and queued every answer: 27.6 MB
        # in these 8 s on this machine (and 600 MB for 820 000 requests); with it, ~0.1 MB.
        check(growth_pipelined <= 10, f"a peer that never reads its answers stops being read: {pipelined} pipelined requests "
                                      f"in 8 s cost the server {growth_pipelined:.1f} MB (≤ 10)")
        s.close()
        growth = (rss_kb(pid) - before) / 1024
        check(growth <= 50, f"the server grew {growth:.1f} MB through the floods (goal ≤ 50 MB)")

        # A normal user's latency while another floods the same server.
        stop = time.monotonic() + 5
        def abuse():
            while time.monotonic() < stop:
                try:
                    w = Socket(port, "/v1/node", users["di"])
                    for _ in range(100):
                        if not w.send(frame(0x1, b'{"method":"ping"}') * 50):
                            break
                    w.s.close()
                except OSError:
                    time.sleep(0.01)  # over its own connection cap: it tries again
        threading.Thread(target=abuse, daemon=True).start()
        latencies = []
        while time.monotonic() < stop and len(latencies) < 200:
            t0 = time.monotonic()
            status, _, _ = http(port, "GET", "/v1/world", token=users["ada"], source="127.0.0.2")  # another peer
            latencies.append((time.monotonic() - t0) * 1000)
            time.sleep(0.02)
        latencies.sort()
        p95 = latencies[int(len(latencies) * 0.95) - 1] if latencies else 1e9
        print(f"      a normal user's GET /v1/world while another floods: {len(latencies)} answers, p50 {latencies[len(latencies) // 2]:.1f} ms, p95 {p95:.1f} ms")
        check(p95 <= 250, f"a normal user is served while another floods (p95 {p95:.1f} ms; goal 50 ms on a quiet machine)")

        # Rate limits are said as 429, for upgrades too. The bucket refills 200 a second (a token
        # each 5 ms): one connection keeps it empty — pipelined requests, sent and read on, until
        # the upgrades are answered — while other connections ask for upgrades (a WebSocket opens
        # with the first request of its own connection). A token may refill between two of the
        # flood's requests, and an upgrade that comes then takes it (101, closed at once): the
        # check is that the upgrades refused say 429, never 426, and that some are refused.
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE, source_address=("127.0.0.3", 0))
        get = f"GET /v1/world HTTP/1.1\r\nHost: x\r\nSynchat-Protocol: 2\r\nAuthorization: Bearer {users['ada']}\r\n\r\n".encode()
        limited, done = threading.Event(), threading.Event()

        def flood():
            tail, end = b"", time.monotonic() + 60
            while not done.is_set() and time.monotonic() < end:
                try:
                    s.sendall(get * 100)
                    while select.select([s], [], [], 0)[0]:  # what has come, without waiting
                        chunk = s.recv(1 << 16)
                        if not chunk:
                            return
                        tail = (tail + chunk)[-4096:]
                        if b"HTTP/1.1 429" in tail:
                            limited.set()
                except OSError:
                    return
        flooding = threading.Thread(target=flood, daemon=True)
        flooding.start()
        limited.wait(30)
        answers = []
        for _ in range(20):
            upgrade = Socket(port, "/v1/node", users["ada"], source="127.0.0.7")
            answers.append(upgrade.head.split("\r\n")[0].split(" ")[1] if upgrade.head else "none")
            upgrade.s.close()
        done.set()
        flooding.join(10)
        s.close()
        check(limited.is_set() and "429" in answers and all(a in ("429", "101") for a in answers),
              f"rate-limited upgrades get 429, not 426 ({' '.join(answers)})")

        more_rfc_edges(port, users, invite)
        versions(port, users["cy"], admin)
        invites_guessed(port, invite)
        check(server.poll() is None, "the server is still running")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    said = server.stdout.read().count("wrong invites a minute")
    check(said == 1, f"the server's log says once that invites are being guessed ({said} times, after two bursts)")
    tip_counts()
    crowd_at_the_cap()
    silent_sockets()
    ipv6_per_64()
    slow_requests_and_quota()
    memory_a_socket()
    heads_per_peer()
    new_connections_per_peer()
    print(f"{len(failures)} failed" if failures else "all hold")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
