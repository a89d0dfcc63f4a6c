/// How wide a line of a chart's text is drawn, in pixels: the advances of DejaVu Sans, the
/// first font the charts name (read from its `hmtx` table, in em), so that a label is placed
/// and cut by what it really takes. A character outside printable ASCII counts a whole em,
/// more than any of these, so an estimate is never short.
public enum SVGTextWidth {
    /// Advances of U+0020…U+007E, in thousandths of an em.
    static let advances: [Int] = [
        318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,  // space … /
        636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,  // 0 … ?
        1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,  // @ … O
        603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,  // P … _
        500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,  // ` … o
        635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,  // p … ~
    ]

    /// The width of `text` at font size `size` (px), bold drawn about a tenth wider.
    public static func of(_ text: String, size: Double, bold: Bool = false) -> Double {
        var thousandths = 0
        for scalar in text.unicodeScalars {
            let v = Int(scalar.value)
            thousandths += (0x20...0x7E).contains(v) ? advances[v - 0x20] : 1000
        }
        return Double(thousandths) / 1000 * size * (bold ? 1.1 : 1)
    }
}
