#!/usr/bin/env python3
"""Judges a screenshot of synchat in foot (tools/foot-judge/run.sh): PNG [SENTINELS]

1. The conversation list's border is one straight line: a column that is not the background
   on nearly every pixel row of the panes. (The adapter puts its cursor back after each
   sequence it writes whole, so a width wrongly counted does not move the border: it wipes
   what follows the sequence instead, which 2. sees.)
2. Every sentinel `│` written after a sequence is still drawn: foot draws `│` from edge to
   edge of its cell, a run of ink as tall as a cell, which no letter or emoji makes. A
   sequence the terminal advances further than the layout gave it wipes its sentinel.

Reads the PNG (8-bit RGB or RGBA, as grim writes it) with the standard library alone.
Exit 0 when both hold.
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks = 8, {}
    idat = b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            chunks["ihdr"] = (w, h, depth, colour, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, colour, interlace = chunks["ihdr"]
    assert depth == 8 and colour in (2, 6) and interlace == 0, "expected 8-bit RGB(A), not interlaced"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def ink(p, q):
    return sum(abs(a - b) for a, b in zip(p, q)) > 60


def main(path, sentinels):
    w, h, bpp, rows = read_png(path)
    def px(x, y):
        r = rows[y]
        return tuple(r[x * bpp:x * bpp + 3])
    background = px(w - 2, h // 2)
    top, bottom = int(h * 0.06), int(h * 0.5)
    best = (0.0, -1)
    for x in range(0, w // 2):
        lit = sum(1 for y in range(top, bottom) if ink(px(x, y), background))
        best = max(best, (lit / (bottom - top), x))
    share, border = best
    straight = share >= 0.98
    print(f"foot-judge: the list's border: column x={border} px drawn on {share:.1%} of the pane's pixel rows"
          + (" (one straight line)" if straight else " (broken: a row's border is elsewhere)"))
    # The message pane ends at the sync log's title, a rule across the screen.
    pane_bottom = next((y for y in range(h // 4, h) if sum(1 for x in range(border + 4, w, 4) if ink(px(x, y), background)) > (w - border) / 8), h)
    # Sentinels: the `│` foot draws from edge to edge of its cell, so a vertical run of ink as
    # tall as a cell (the tallest runs right of the border; letters are shorter, and emoji
    # change colour along any line through them), above the sync log. A run drawn two pixels
    # wide counts once.
    runs = []
    for x in range(border + 3, w):
        run, colour, start = 0, None, 0
        for y in range(top, pane_bottom + 1):
            p = px(x, y) if y < pane_bottom else background
            if ink(p, background) and (colour is None or not ink(p, colour)):
                if colour is None:
                    colour, start = p, y
                run += 1
            else:
                if run >= 12:
                    runs.append((x, start, run))
                run, colour, start = (1, p, y) if ink(p, background) else (0, None, 0)
    # A cell's height: the title row's band, filled in its colour from the top.
    title = px(w // 2, h // 100)
    cell = next(y for y in range(h // 100, h) if ink(px(w // 2, y), title)) - 0
    # Sentinels of rows one above the other make one run: a run counts a sentinel a cell.
    tall = [(x, y, round(r / cell)) for x, y, r in runs if r >= cell - 2]
    strokes = sum(n for x, y, n in tall if not any(x2 == x - 1 and abs(y2 - y) <= 1 for x2, y2, _ in tall))
    print(f"foot-judge: sentinels after the sequences: {strokes} of {sentinels} still drawn (cells {cell} px tall)")
    whole = sentinels is None or strokes == sentinels
    if not whole:
        print("foot-judge: a sequence wiped what followed it (the terminal advanced further than the layout gave it)")
    return 0 if straight and whole else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None))
