import SimulatedWorld
@testable import ChatUI
import Testing

/// The byte-wise wrap of printable ASCII is a fast path of the character-wise one: the same
/// lines for any such text and width, checked over generated text (spaces in runs, words
/// longer than the width, empty text).
@Suite("Wrap: the ASCII fast path")
struct WrapFastPathTests {
    @Test("for 20 000 generated ASCII texts and widths 1–40, the fast path gives exactly the lines of the general one, and the row count their number")
    func sameLines() {
        var rng = RandomStream(seed: 20_000, concern: "wrap texts")  // seeded: the same texts every run
        let alphabet = Array("abcdefghij KLMNOP  0123456789 .,;:!?-_()[]{}'\"`~@#$%^&*+=|\\/<> ")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...120, using: &rng)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &rng)! })
            let width = Int.random(in: 1...40, using: &rng)
            let fast = TextWidth.wrapPrintableASCII(text, width: width)
            #expect(fast == TextWidth.wrapCharacters(text, width: width), "\(text.debugDescription) at \(width)")
            #expect(TextWidth.wrappedRowCount(text, width: width) == fast?.count, "count: \(text.debugDescription) at \(width)")
        }
        #expect(TextWidth.wrapPrintableASCII("tab\there", width: 10) == nil)
        #expect(TextWidth.wrapPrintableASCII("café", width: 10) == nil)
    }
}
