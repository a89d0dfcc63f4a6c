import ServerProtocol
import Testing

/// TLS or `--insecure` off loopback (the server), https for an operator's token off loopback (the
/// clients): what counts as loopback is read as an address.
@Suite("Loopback, for the server and its clients alike")
struct LoopbackTests {
    @Test("127.0.0.0/8, ::1 and localhost are loopback; a name that starts with 127., 0.0.0.0, :: and others are not")
    func loopback() {
        for (host, expected) in [("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("::1", true),
                                 ("127.example.net", false), ("0.0.0.0", false), ("::", false), ("10.0.0.1", false),
                                 ("192.168.1.5", false), ("example.org", false), ("::ffff:127.0.0.1", false)] {
            #expect(HostName.isLoopback(host) == expected, "\(host)")
        }
    }
}
