#!/usr/bin/env python3
"""A hostile synchat server: speaks enough of docs/server.md for `synchat bot` and the TUI to
join, then misbehaves in one MODE (docs/testing.md#the-client-against-a-hostile-server).
Loopback only, stdlib only, and bounded: every endless answer stops after 64 MiB.

    python3 TestData/conformance/hostile_server.py MODE    # prints "port N", serves until killed

Modes:
  endless-join     the join's answer declares a gigabyte and never ends
  endless-answers  joins fine; every indexer answer is chunked and never ends
  escapes          joins fine; names, the address, txIds, close reasons and frames carry
                   ESC, OSC 52 (clipboard), OSC 0 (title), BEL and bidi controls
  absurd-clock     the join's answer says speed 1e300
  silent-sockets   joins fine; the node's and the relay's upgrades are never answered
  endless-pages    joins fine; payments say "nextPage": n + 1 forever
  contacts-flood   joins fine; the relay sends 5 000 contactsChanged frames (stdout says
                   "world N" at each GET /v1/world: a client that coalesces asks a few times)
  directives       joins fine; the relay asks the client to send as its user, rename a
                   contact and quit, and sends documents that are no directive
"""
import asyncio
import base64
import hashlib
import json
import signal
import sys

ESC = "\x1b"
EVIL = f"{ESC}]52;c;cHduZWQ={chr(7)}{ESC}]0;pwned{chr(7)}\u202e{chr(7)}{ESC}[2J"
LIMIT = 64 << 20  # the most any endless answer writes
WORLD_ASKED = 0  # GET /v1/world requests, each said on stdout ("world N") for the test to count

MODE = sys.argv[1] if len(sys.argv) > 1 else "escapes"
ADDRESS = "kaspa:qme" + (EVIL if MODE == "escapes" else "")
CONTACTS = [{"handle": "alice", "address": "kaspa:qalice", "displayName": "Alice" + (EVIL if MODE == "escapes" else ""), "person": 0},
            {"handle": "bob", "address": "kaspa:qbob", "displayName": "Bob", "person": 0}]


def join_answer(user):
    speed = "1e300" if MODE == "absurd-clock" else "1"
    return {"user": user, "address": ADDRESS, "secret": "0" * 32, "protocol": 2, "clock": 1000, "speed": speed, "contacts": CONTACTS}


def message(txid, ms, kind="contextual"):
    return {"txId": txid, "sender": "kaspa:qalice", "recipient": ADDRESS, "kind": kind, "blockTime": ms, "payload": "hi " + EVIL}


async def write_json(writer, status, document, close=False):
    body = json.dumps(document).encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head += "Connection: close\r\n\r\n" if close else "\r\n"
    writer.write(head.encode() + body)
    await writer.drain()


async def endless(writer, declared):
    head = "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n" if declared else "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    writer.write(head.encode())
    block = b"[" * 65536
    sent = 0
    try:
        while sent < LIMIT:
            writer.write(block if declared else b"10000\r\n" + block + b"\r\n")
            await writer.drain()
            sent += len(block)
    except (ConnectionError, OSError):
        pass
    writer.close()


def frame(text):
    data = text.encode()
    n = len(data)
    if n < 126:
        head = bytes([0x81, n])
    elif n < 65536:
        head = bytes([0x81, 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x81, 127]) + n.to_bytes(8, "big")
    return head + data


def close_frame(code, reason):
    data = code.to_bytes(2, "big") + reason.encode()[:120]
    return bytes([0x88, len(data)]) + data


async def read_frame(reader):
    """One client frame's text (masked), or None at the end."""
    try:
        b0, b1 = await reader.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(await reader.readexactly(2), "big")
        elif n == 127:
            n = int.from_bytes(await reader.readexactly(8), "big")
        if n > 1 << 20:
            return None
        mask = await reader.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
        data = bytes(c ^ mask[i % 4] for i, c in enumerate(await reader.readexactly(n)))
        if b0 & 0x0F == 0x8:
            return None
        return data.decode("utf-8", "replace")
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        return None


async def socket(path, headers, reader, writer):
    if MODE == "silent-sockets":
        await asyncio.sleep(3600)
        return
    key = headers.get("sec-websocket-key", "")
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    writer.write(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n".encode())
    await writer.drain()
    if path.startswith("/v1/push"):
        if MODE == "contacts-flood":
            for _ in range(5000):
                writer.write(frame(json.dumps({"method": "contactsChanged", "params": {}})))
            await writer.drain()
        if MODE == "directives":
            documents = [{"directive": "send", "handle": "alice", "text": "sent by the server, not by you"},
                         {"directive": "contact", "handle": "alice", "name": "Mallory"}, {"directive": "quit"},
                         {"directive": "dance" + EVIL}, {"directive": "fault", "change": "push-drop", "percent": 400}]
            for document in documents:
                writer.write(frame(json.dumps({"method": "directive", "params": {"directive": document}})))
            await writer.drain()
        if MODE == "escapes":
            writer.write(frame(json.dumps({"method": "tokenStatus", "params": {"status": "active" + EVIL}})))
            writer.write(frame(json.dumps({"method": "push", "params": {"payload": json.dumps({"txId": "tx" + EVIL, "from": "kaspa:qalice"})}})))
            await writer.drain()
    while True:
        text = await read_frame(reader)
        if text is None:
            break
        try:
            request = json.loads(text)
        except ValueError:
            continue
        rid, method = request.get("id"), request.get("method")
        if rid is None:
            continue
        writer.write(frame(json.dumps({"id": rid, "method": method, "params": {"entries": []} if method == "getUtxosByAddresses" else {}})))
        if MODE == "escapes" and method == "subscribeUtxosChanged":
            writer.write(frame(json.dumps({"method": "utxosChangedNotification", "params": {"transaction": message("ab" + EVIL, 2000), "at": 2000}})))
            writer.write(close_frame(4000, "closed " + EVIL))
            await writer.drain()
            break
        await writer.drain()
    writer.close()


async def handle(reader, writer):
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            method, target, _ = line.decode("latin-1").split(" ", 2)
            headers = {}
            while True:
                h = await reader.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                name, _, value = h.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
            path, _, query = target.partition("?")
            # As synchat server does: a request without the protocol's version header is
            # refused, so a client that forgets it on any request or socket is seen to.
            if headers.get("synchat-protocol") != "2":
                await write_json(writer, "400 Bad Request", {"error": "this server speaks synchat protocol 2; the request says "
                                                             + headers.get("synchat-protocol", "none")})
                continue
            if headers.get("upgrade", "").lower() == "websocket":
                await socket(path, headers, reader, writer)
                return
            if path == "/v1/join":
                if MODE == "endless-join":
                    await endless(writer, declared=True)
                    return
                user = json.loads(body or b"{}").get("user", "zed")
                await write_json(writer, "201 Created", join_answer(user))
            elif path == "/v1/world":
                global WORLD_ASKED
                WORLD_ASKED += 1
                print(f"world {WORLD_ASKED}", flush=True)
                answer = join_answer("zed")
                del answer["secret"], answer["user"]
                await write_json(writer, "200 OK", answer)
            elif path.startswith("/v1/indexer/"):
                if MODE == "endless-answers":
                    await endless(writer, declared=False)
                    return
                if path.endswith("/tip"):
                    await write_json(writer, "200 OK", {"tip": 2000, "objects": {}})
                elif MODE == "endless-pages" and path.endswith("/payments"):
                    page = int(dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("page", "0"))
                    await write_json(writer, "200 OK", {"messages": [message(f"p{page:060d}", 1000 + page, kind="payment")], "nextPage": page + 1})
                elif MODE == "escapes" and "contextual" in path and "direction=in" in query:
                    await write_json(writer, "200 OK", {"messages": [message("cd" + EVIL, 1500)], "nextPage": None})
                else:
                    await write_json(writer, "200 OK", {"messages": [], "nextPage": None})
            elif path == "/v1/publish":
                await write_json(writer, "503 Service Unavailable", {"error": "not today " + EVIL})
            else:
                await write_json(writer, "404 Not Found", {"error": "no such endpoint " + EVIL})
    except (asyncio.IncompleteReadError, ConnectionError, OSError, ValueError):
        pass
    writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    # A parent that blocked SIGTERM (a test runner) must still be able to end it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    asyncio.run(main())
