import Foundation

/// A host as a server's address or a client's `--server` names it.
public enum HostName {
    /// Whether the host is the machine's own (loopback): anything else carries secrets across a
    /// network, so a server listening there needs TLS or `--insecure`, and a client sends an
    /// operator's token there only over https. One check for both sides.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        // An address, read as one: `127.example.net` is a name, not loopback.
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        if inet_pton(AF_INET6, host, &v6) == 1 { return host == "::1" || withUnsafeBytes(of: v6) { Array($0) } == Array(repeating: 0, count: 15) + [1] }
        return false
    }
}
