import Foundation
import NIOSSL

extension WorldServer {
    /// 32 hex digits from the system's random source.
    public static func newToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &g)) }.joined()
    }

    /// TLS from a certificate chain and a private key in PEM files (`--tls-cert`, `--tls-key`):
    /// swift-nio-ssl's server context, TLS 1.2 and later. A file that cannot be read or is not
    /// PEM is one line naming it.
    public static func tls(certificate: String, key: String) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw TLSFiles(description: "--tls-cert \(certificate): not a readable PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw TLSFiles(description: "--tls-cert \(certificate): no certificate in it") }
        let privateKey: NIOSSLPrivateKey
        do { privateKey = try NIOSSLPrivateKey(file: key, format: .pem) } catch {
            throw TLSFiles(description: "--tls-key \(key): not a readable PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12  // NIOSSL's default is TLS 1.0
        configuration.cipherSuiteValues = tls12Suites
        configuration.curves = [.x25519, .secp256r1, .secp384r1]
        do { return try NIOSSLContext(configuration: configuration) } catch {
            throw TLSFiles(description: "--tls-cert \(certificate) and --tls-key \(key) do not make a TLS context (is the key the certificate's?): \(error)")
        }
    }

    /// The TLS 1.2 suites the server offers: Mozilla's "intermediate" configuration, those
    /// BoringSSL has (it has no finite-field DHE) — an ECDHE key exchange (forward secrecy)
    /// and an AEAD cipher. NIOSSL's default also offers RSA key exchange (TLS_RSA_WITH_AES_*:
    /// no forward secrecy) and CBC with SHA-1 (open to LUCKY13-style timing). TLS 1.3's
    /// suites are all AEAD and are not configurable.
    public static let tls12Suites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    public struct TLSFiles: Error, CustomStringConvertible {
        public var description: String
    }
}
