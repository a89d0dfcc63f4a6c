import Foundation
import ServerProtocol
import Spawn

/// `synchat-bench hostile handshakes`: one address opens and drops connections as fast as it
/// can — plain HTTP connect-and-close, and a TLS ClientHello then close (the attacker does no
/// crypto; the server would answer each with a key exchange and a signature) — while a user
/// at another address asks `GET /v1/world` one request at a time on one keep-alive
/// connection. The user is `tools/connection-flood/flood.py` (Python's sockets and OpenSSL:
/// none of synchat's code), and so is the ClientHello; the flood is two threads here, on raw
/// sockets (`RawSocket`), several times as fast as Python's. Each flood runs against the server as it ships
/// (`--peer-rate` at its default) and with the limit out of reach (`--peer-rate 100000`,
/// as before the limit), the server's CPU measured over the run.
func connectionFloods(_ binary: String) {
    let script = packageRoot + "/tools/connection-flood/flood.py"
    guard FileManager.default.fileExists(atPath: script), (try? ChildProcess.run(["python3", "-c", "import ssl"]))?.status == 0 else {
        hrow("connection floods", "skipped: needs python3 and \(script)")
        return
    }
    let dir = NSTemporaryDirectory() + "synchat-bench-floods-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    guard makeTestCertificates(in: dir + "/tls") else { hrow("connection floods", "skipped: openssl could not make a certificate"); return }
    guard let hex = try? ChildProcess.run(["python3", script, "--print-hello"], captureOutput: true).out.trimmingCharacters(in: .whitespacesAndNewlines),
          hex.count > 100 else { hrow("connection floods", "skipped: no ClientHello from \(script)"); return }
    let hello: [UInt8] = stride(from: 0, to: hex.count - 1, by: 2).compactMap { i in
        UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)
    }
    say("== one address opening and dropping connections; another user's GET \(Route.world) beside it (goal: p50 ≤ 50 ms, max ≤ 1 s)")
    say(pad("flood, 4 s", 44) + pad("--peer-rate", 13) + "answers     p50        p95        max      flood opened  server CPU")
    for (name, tls, kind) in [("none (the baseline), TLS", true, "none"), ("plain HTTP: connect and close", false, "connect"),
                              ("TLS: a ClientHello, then close", true, "hello")] {
        for rate in ["100000", "default"] {
            if kind == "none" && rate == "100000" { continue }
            var args = ["--speed", "1", "--contacts", "2", "--traffic", "0/h", "--open"]
            if tls { args += ["--tls-cert", dir + "/tls/server.pem", "--tls-key", dir + "/tls/server.key"] }
            if rate != "default" { args += ["--peer-rate", rate] }
            guard let server = BenchServer.start(binary, args) else { continue }
            defer { server.stop() }
            let before = ProcessCPU(pid: "\(server.pid)")
            let t0 = now()
            let stop = StopFlag()
            let opened = Counter(), ended = Counter()
            let port = server.port
            let threads = kind == "none" ? [] : (0..<2).map { _ in
                Thread {
                    var n = 0
                    while !stop.isSet {
                        guard let s = RawSocket(port: port, from: "127.0.0.3", timeout: 1) else { usleep(1_000); continue }
                        if kind == "hello" { _ = s.send(hello) }
                        s.abort()
                        n += 1
                    }
                    opened.add(n)
                    ended.add(1)
                }
            }
            threads.forEach { $0.start() }
            if !threads.isEmpty { usleep(300_000) }  // the flood under way
            let run = try? ChildProcess.run(["python3", script, "--port", "\(server.port)", "--seconds", "4", "--flood", "none"] + (tls ? ["--ca", dir + "/tls/ca.pem"] : []),
                                            captureOutput: true, captureErrors: true)
            stop.set()
            while ended.value < threads.count { usleep(10_000) }
            let wall = Double(now() - t0) / 1e9
            let cpu = ProcessCPU(pid: "\(server.pid)").flatMap { after in before.flatMap { after.seconds(since: $0)?.seconds } }
            guard let out = run?.out, let r = (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any], r["error"] == nil else {
                hrow(name, "failed: \((run?.out ?? "") + (run?.err ?? ""))".prefix(200).description)
                continue
            }
            func ms(_ key: String) -> String { (r[key] as? Double).map { String(format: "%8.1f ms", $0) } ?? "       — ms" }
            let failed = (r["failures"] as? Int ?? 0) > 0 ? " (\(r["failures"] as? Int ?? 0) failed)" : ""
            say(pad(name, 44) + pad(rate, 13) + pad("\(r["answers"] as? Int ?? 0)\(failed)", 9) + ms("p50") + "  " + ms("p95") + "  " + ms("max")
                + String(format: "  %9d      %5.0f %%", opened.value, (cpu ?? 0) / wall * 100))
        }
    }
}

