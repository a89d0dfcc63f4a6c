/// How the program says a number of things, in one place: `1 line`, `2 lines`, `0 hits`.
public enum Words {
    /// `n` and the noun, plural unless `n` is 1 (`plural` when it is not the noun and an s).
    public static func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? noun : plural ?? noun + "s")
    }
}
