/// FNV-1a over a text's UTF-8 bytes: a hash that is the same in every process and on every
/// machine, unlike `Hasher`, for what must be drawn again from words (a matrix cell's seed, a
/// contact's address, a random stream per concern, a user's world). The one copy of it.
public enum StableHash {
    public static func fnv1a(_ text: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}
