import FaultProxy
import Foundation

/// `synchat-bench proxy --target PORT NAME...`: the soak's proxy by hand, to see what a client
/// does when its network stalls, resets or cuts. One listener a name on 127.0.0.1 (printed as
/// `NAME PORT`: point that client's `--server` at it); then, one a line on standard input,
/// `stall NAME`, `resume NAME`, `reset NAME`, `cut NAME`, `uncut NAME`, `quit`.
func proxyTool(_ rest: [String]) -> Never {
    guard rest.count >= 3, rest[0] == "--target", let target = Int(rest[1]), (1...65_535).contains(target) else {
        usage("proxy takes --target PORT and one name a client, not \(rest.joined(separator: " "))")
    }
    let proxy = FaultProxy(target: target)
    for name in rest.dropFirst(2) {
        guard let port = proxy.listen(for: name) else { usage("proxy: could not listen for \(name)") }
        say("\(name) \(port)")
    }
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        guard let verb = words.first else { continue }
        guard words.count == 2 || verb == "quit", verb == "quit" || proxy.port(of: words[1]) != nil else {
            say("proxy: \(line.debugDescription) is not one of stall|resume|reset|cut|uncut NAME, quit (names: \(rest.dropFirst(2).joined(separator: " ")))")
            continue
        }
        switch verb {
        case "stall": proxy.stall(words[1])
        case "resume": proxy.resume(words[1])
        case "reset": say("\(proxy.reset(words[1])) connections reset")
        case "cut": proxy.cut(words[1], armed: true)
        case "uncut": proxy.cut(words[1], armed: false)
        case "quit": proxy.shutdown(); exit(0)
        default: say("proxy: \(verb.debugDescription) is not one of stall, resume, reset, cut, uncut, quit")
        }
    }
    proxy.shutdown()
    exit(0)
}
