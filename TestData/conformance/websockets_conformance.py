#!/usr/bin/env python3
"""The node and push WebSockets of `synchat server`, held against an independent client:
Python's `websockets` (PyPI), which shares no code with the server (swift-nio). Run by
.ci/run after the build:

    python3 TestData/conformance/websockets_conformance.py .build/debug/synchat

It starts the server on a free loopback port, joins two users, and checks the handshake,
protocol pings, the JSON-RPC methods, notifications of a message one user publishes to the
other on both the node and the push relay, the keepalive a stale node does not answer, a
node that goes down closing the socket with 1011 and its reason, bad text frames answered with
an error and the socket kept, a binary frame closed with 1003, and an oversize frame closed with 1009. Exit code 0 when all hold.
"""
import asyncio
import json
import re
import subprocess
import sys
import time
import urllib.request

import websockets

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/synchat"
DEADLINE = 20.0  # seconds of wall time for anything awaited
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


# The protocol's version header, on every request and socket opening (docs/server.md#one-protocol).
VERSION = {"Synchat-Protocol": "2"}


def http(port, method, path, body=None, token=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                     data=None if body is None else body.encode(), headers=VERSION)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


async def frame_where(ws, predicate, what):
    """The first frame that satisfies predicate, within the deadline."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            raw = await asyncio.wait_for(ws.recv(), timeout=end - time.monotonic())
        except asyncio.TimeoutError:
            break
        message = json.loads(raw)
        if predicate(message):
            return message
    check(False, what + ": nothing came within the deadline")
    return None


async def main():
    server = subprocess.Popen([BINARY, "server", "--port", "0", "--speed", "20", "--contacts", "2", "--traffic", "0/h", "--open"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        admin = re.search(r"admin token ([0-9a-f]{32})", line).group(1)
        status, taken = http(port, "POST", "/v1/join", json.dumps({"user": "alice"}))
        check(status == 409 and "simulated contact" in taken["error"], "join as a simulated contact's name: 409")
        status, alice = http(port, "POST", "/v1/join", json.dumps({"user": "ada"}))
        check(status == 201 and "secret" in alice, "join ada: 201 and a secret")
        status, bob = http(port, "POST", "/v1/join", json.dumps({"user": "bo"}))
        check(status == 201, "join bo: 201")
        status, again = http(port, "POST", "/v1/join", json.dumps({"user": "ada"}))
        check(status == 401 and "secret" not in again, "join ada again without the secret: 401, no secret")
        headers = {"Authorization": "Bearer " + alice["secret"], **VERSION}
        node_url = f"ws://127.0.0.1:{port}/v1/node"
        push_url = f"ws://127.0.0.1:{port}/v1/push"

        # No secret, no socket; no version, no socket, in words that say which to run.
        try:
            async with websockets.connect(node_url, additional_headers=VERSION):
                check(False, "node without a secret: refused")
        except websockets.exceptions.InvalidStatus as e:
            check(e.response.status_code == 401, f"node without a secret: refused with 401 ({e.response.status_code})")
        for url in [node_url, push_url]:
            try:
                async with websockets.connect(url, additional_headers={"Authorization": headers["Authorization"]}):
                    check(False, f"{url} without the version header: refused")
            except websockets.exceptions.InvalidStatus as e:
                said = json.loads(e.response.body or b"{}").get("error", "")
                check(e.response.status_code == 400 and "send the header Synchat-Protocol: 2" in said,
                      f"{url} without the version header: refused with 400 saying which to run ({e.response.status_code} {said})")

        async with websockets.connect(node_url, additional_headers=headers) as node, \
                websockets.connect(push_url, additional_headers=headers) as push:
            pong = await node.ping()
            await asyncio.wait_for(pong, DEADLINE)
            check(True, "protocol ping answered with a pong")
            await push.send(json.dumps({"id": 1, "method": "registerToken", "params": {}}))
            await frame_where(push, lambda m: m.get("method") == "tokenStatus" and m["params"]["status"] == "active",
                              "push: the token becomes active")
            await node.send(json.dumps({"id": 7, "method": "subscribeUtxosChanged", "params": {"addresses": ["kaspa:qsomeoneelse"]}}))
            m = await frame_where(node, lambda m: m.get("id") == 7, "subscribe to another address")
            check(m is not None and "error" in m, "subscribing to someone else's address: an error")
            await node.send(json.dumps({"id": 8, "method": "subscribeUtxosChanged", "params": {"addresses": [alice["address"]]}}))
            m = await frame_where(node, lambda m: m.get("id") == 8, "subscribe")
            check(m is not None and m.get("method") == "subscribeUtxosChanged" and "error" not in m, "subscribe: answered")
            await node.send(json.dumps({"id": 9, "method": "ping", "params": {}}))
            m = await frame_where(node, lambda m: m.get("id") == 9, "application ping")
            check(m is not None and m.get("method") == "ping", "application ping: answered by a live node")
            # Bad frames: an error each, the socket stays.
            await node.send("not json")
            m = await frame_where(node, lambda m: "error" in m, "a frame that is not JSON")
            check(m is not None and "JSON" in m["error"]["message"], "not JSON: an error naming it")
            async with websockets.connect(node_url, additional_headers=headers) as other:
                # A binary frame is refused with 1003 on its own socket (RFC 6455 §7.4.1); this one stays.
                await other.send(b"\x00\x01")
                try:
                    await asyncio.wait_for(other.recv(), timeout=DEADLINE)
                    check(False, "binary frame: closed with 1003")
                except websockets.exceptions.ConnectionClosed as e:
                    check(e.rcvd is not None and e.rcvd.code == 1003 and "binary" in e.rcvd.reason, "binary frame: closed with 1003, naming it")
            await node.send(json.dumps({"id": 10, "method": "dance"}))
            m = await frame_where(node, lambda m: m.get("id") == 10, "an unknown method")
            check(m is not None and "unknown method" in m["error"]["message"], "unknown method: an error naming it")

            # Bob writes to Alice: the node notifies it, the push relay pushes it.
            status, sent = http(port, "POST", "/v1/publish", json.dumps({"to": alice["address"], "body": "hello from bob ✓"}), bob["secret"])
            check(status == 200, f"bob publishes to alice: 200 ({status})")
            tx = sent["message"]["txId"]
            m = await frame_where(node, lambda m: m.get("method") == "utxosChangedNotification", "alice's node notification")
            check(m is not None and m["params"]["transaction"]["txId"] == tx and m["params"]["transaction"]["payload"] == "hello from bob ✓",
                  "node: the same transaction, its text intact")
            m = await frame_where(push, lambda m: m.get("method") == "push", "alice's push")
            check(m is not None and json.loads(m["params"]["payload"])["synchat"]["txId"] == tx, "push relay: the same transaction")
            await node.send(json.dumps({"id": 11, "method": "getUtxosByAddresses", "params": {"addresses": [alice["address"]]}}))
            m = await frame_where(node, lambda m: m.get("id") == 11, "the UTXO set")
            check(m is not None and tx in m["params"]["entries"], "getUtxosByAddresses: the new output is in the set")

            # Stale: the socket stays open, pings go unanswered.
            status, _ = http(port, "POST", "/admin/fault?user=ada", "realtime stale", admin)
            check(status == 200, "fault realtime stale: 200")
            await node.send(json.dumps({"id": 12, "method": "ping", "params": {}}))
            try:
                raw = await asyncio.wait_for(node.recv(), timeout=2.0)
                check(False, f"stale: the ping was answered ({raw[:80]})")
            except asyncio.TimeoutError:
                check(node.state == websockets.protocol.State.OPEN, "stale: no answer to the keepalive, the socket still open")

        # Down: a live subscription is closed with 1011 and the reason.
        status, _ = http(port, "POST", "/admin/fault?user=ada", "realtime up", admin)
        async with websockets.connect(node_url, additional_headers=headers) as node:
            await node.send(json.dumps({"id": 1, "method": "subscribeUtxosChanged", "params": {"addresses": [alice["address"]]}}))
            await frame_where(node, lambda m: m.get("id") == 1, "subscribe again")
            http(port, "POST", "/admin/fault?user=ada", "realtime down", admin)
            try:
                while True:
                    await asyncio.wait_for(node.recv(), timeout=DEADLINE)
            except websockets.exceptions.ConnectionClosed as e:
                check(e.rcvd is not None and e.rcvd.code == 1011 and "down" in e.rcvd.reason,
                      f"down: closed with 1011 and the reason ({e.rcvd})")

        # An oversize frame: closed with 1009 (message too big).
        async with websockets.connect(push_url, additional_headers=headers, max_size=None) as push:
            await push.send("x" * 70_000)
            try:
                while True:  # the token's status may come first
                    await asyncio.wait_for(push.recv(), timeout=DEADLINE)
            except websockets.exceptions.ConnectionClosed as e:
                check(e.rcvd is not None and e.rcvd.code == 1009, f"oversize frame: closed with 1009 ({e.rcvd})")
        status, _ = http(port, "GET", "/v1/world", token=alice["secret"])
        check(status == 200, "the server goes on serving")
    finally:
        server.terminate()
        server.wait(timeout=DEADLINE)
    print(f"{len(failures)} failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


asyncio.run(main())
