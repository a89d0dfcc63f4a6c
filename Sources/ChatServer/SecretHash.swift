import COpenSSL
import Foundation

/// What the server keeps of a user's secret: `sha256:` and the hex of its
/// SHA-256, never the secret. Secrets are 128 random bits the server made
/// (`WorldServer.newToken`), so a plain hash is enough: nobody can guess one to hash, and a
/// stolen `world.sqlite` opens no user. SHA-256 is OpenSSL's (`EVP_Digest`).
public enum SecretHash {
    public static let prefix = "sha256:"

    public static func of(_ secret: String) -> String {
        let bytes = Array(secret.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "SHA-256 failed in OpenSSL")
        return prefix + digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a stored value is already a hash (a store written before hashes holds secrets).
    public static func isHash(_ stored: String) -> Bool {
        stored.hasPrefix(prefix) && stored.utf8.count == prefix.utf8.count + 64
    }
}
