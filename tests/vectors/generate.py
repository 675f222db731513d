#!/usr/bin/env python3
"""Writes snowdrift's shared test vectors: tests/vectors/{ids,objectid,text_errors}.json.

This is an independent implementation of the layouts, the bit packing and the text forms,
written from the layout definitions alone (plain integers, no snowdrift code), so that
every frontend that agrees with these files agrees with a second implementation, not just
with itself. Every frontend's tests read the same files: the Rust core
(core/tests/vectors.rs), the wasm crate and the npm package's JS tests.

    python3 tests/vectors/generate.py          # rewrite the files
    python3 tests/vectors/generate.py --check  # fail if the files are not what this writes

The IDs are deterministic: fixed edge cases (zero and all-ones fields) plus values from a
fixed-seed linear congruential generator, plus anchors published elsewhere (Discord's
documentation ID, a MongoDB ObjectId) whose decoded values are asserted below by hand.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name: (time bits, datacenter bits, worker bits, sequence bits, unit ms, epoch ms, order)
LAYOUTS = {
    "default": (41, 0, 10, 12, 1, 1_704_067_200_000, "node-sequence"),  # 2024-01-01T00:00:00Z
    "twitter": (41, 5, 5, 12, 1, 1_288_834_974_657, "node-sequence"),
    "discord": (42, 5, 5, 12, 1, 1_420_070_400_000, "node-sequence"),  # 2015-01-01T00:00:00Z
    "sonyflake": (39, 0, 16, 8, 10, 1_409_529_600_000, "sequence-node"),  # 2014-09-01T00:00:00Z
    "instagram": (41, 0, 13, 10, 1, 1_314_220_021_721, "node-sequence"),
    "baidu": (28, 0, 22, 13, 1000, 1_463_702_400_000, "node-sequence"),  # 2016-05-20T00:00:00Z
}

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def layout_json(spec):
    t, d, w, s, unit, epoch, order = spec
    return {
        "timeBits": t,
        "datacenterBits": d,
        "workerBits": w,
        "nodeBits": d + w,
        "sequenceBits": s,
        "unitMs": unit,
        "epochMs": epoch,
        "order": order,
    }


def compose(spec, tick, node, seq):
    t, d, w, s, _unit, _epoch, order = spec
    n = d + w
    assert 0 <= tick < 1 << t and 0 <= node < 1 << n and 0 <= seq < 1 << s
    if order == "node-sequence":
        return (tick << (n + s)) | (node << s) | seq
    return (tick << (n + s)) | (seq << n) | node


def base_n(value, alphabet, width):
    digits = []
    for _ in range(width):
        value, r = divmod(value, len(alphabet))
        digits.append(alphabet[r])
    assert value == 0
    return "".join(reversed(digits))


def text_forms(i):
    return {
        "decimal": str(i),
        "hex": format(i, "016x"),
        "base32": base_n(i, CROCKFORD, 13),
        "base62": base_n(i, BASE62, 11),
    }


def id_vector(name, tick, node, seq):
    spec = LAYOUTS[name]
    t, d, w, s, unit, epoch, _order = spec
    i = compose(spec, tick, node, seq)
    split = d > 0
    return {
        "layout": name,
        "id": str(i),
        "timeMs": epoch + tick * unit,
        "node": node,
        "datacenter": node >> w if split else None,
        "worker": node & ((1 << w) - 1) if split else None,
        "sequence": seq,
        "text": text_forms(i),
    }


def lcg(seed):
    state = seed
    while True:
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield state >> 11


def ids():
    out = []
    rand = lcg(20240101)
    for name, (t, d, w, s, _unit, _epoch, _order) in LAYOUTS.items():
        n = d + w
        out.append(id_vector(name, 0, 0, 0))
        out.append(id_vector(name, (1 << t) - 1, (1 << n) - 1, (1 << s) - 1))
        out.append(id_vector(name, 1, 1, 1))
        out.append(id_vector(name, (1 << t) - 1, 0, 0))
        out.append(id_vector(name, 0, (1 << n) - 1, 0))
        out.append(id_vector(name, 0, 0, (1 << s) - 1))
        for _ in range(6):
            out.append(
                id_vector(name, next(rand) % (1 << t), next(rand) % (1 << n), next(rand) % (1 << s))
            )
    # Discord's documentation: 175928847299117063 is 2016-04-30T11:18:25.796Z, internal
    # worker 1, process 0, increment 7.
    discord = id_vector("discord", 1_462_015_105_796 - 1_420_070_400_000, (1 << 5) | 0, 7)
    assert discord["id"] == "175928847299117063"
    assert (discord["datacenter"], discord["worker"], discord["sequence"]) == (1, 0, 7)
    out.append(discord)
    return out


def objectids():
    rows = []
    anchor = "5c4a7fcc0ed0240001a79289"
    rand = lcg(5)
    hexes = [anchor, "000000000000000000000000", "ffffffffffffffffffffffff"]
    hexes += [format(next(rand) << 43 | next(rand), "024x")[-24:] for _ in range(4)]
    for h in hexes:
        b = bytes.fromhex(h)
        rows.append(
            {
                "hex": h,
                "timestamp": int.from_bytes(b[0:4], "big"),
                "process": b[4:9].hex(),
                "counter": int.from_bytes(b[9:12], "big"),
            }
        )
    assert rows[0]["timestamp"] == 1548386252  # 2019-01-25T03:17:32Z
    return rows


# Characters a text form may have: fixed-width forms need exactly this many, decimal and
# hex at most this many.
WIDTHS = {"decimal": 20, "hex": 16, "base32": 13, "base62": 11}
FIXED = {"base32", "base62"}
ESCAPES = {"'": "\\'", "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def quoted(c):
    """A character as the messages show it: in single quotes, ASCII controls escaped,
    anything beyond ASCII followed by its code point."""
    if c in ESCAPES:
        return f"'{ESCAPES[c]}'"
    if " " <= c <= "~":
        return f"'{c}'"
    if ord(c) < 0x80:
        return f"'\\u{{{ord(c):X}}}'"
    return f"'{c}' (U+{ord(c):04X})"


def parse_message(form, text, kind, position):
    """The error message for a rejected text form; `position` is a byte offset."""
    found = len(text)  # every input that gets a length error is ASCII
    if kind == "empty":
        return "empty input"
    if kind == "invalid-char":
        c = text.encode()[position:].decode()[0]
        return f"invalid character {quoted(c)} at position {position}"
    if kind == "overflow":
        return f"value does not fit in 64 bits (at position {position})"
    if kind == "wrong-length":
        assert form in FIXED
        return f"wrong length: {found} characters (expected {WIDTHS[form]})"
    if kind == "too-long":
        assert form not in FIXED and position == WIDTHS[form]
        return f"too long: {found} characters (max {WIDTHS[form]})"
    raise ValueError(kind)


def text_errors():
    # (form, input, kind, position): written by hand from the text-form rules. The length
    # is checked before the characters (a text of the wrong length is reported as such,
    # unless it holds a non-ASCII character), and every character before overflow.
    cases = [
        ("decimal", "", "empty", 0),
        ("decimal", "12a4", "invalid-char", 2),
        ("decimal", "-1", "invalid-char", 0),
        ("decimal", " 1", "invalid-char", 0),
        ("decimal", "18446744073709551616", "overflow", 19),
        ("decimal", "99999999999999999999", "overflow", 19),
        ("decimal", "100000000000000000000", "too-long", 20),
        ("decimal", "000000000000000000001", "too-long", 20),
        ("decimal", "0" * 100, "too-long", 20),
        ("decimal", "1234567890123456789x0", "too-long", 20),
        ("decimal", "000000000000000000000\u00e9", "invalid-char", 21),
        ("hex", "", "empty", 0),
        ("hex", "0x10", "invalid-char", 1),
        ("hex", "12345678123456781", "too-long", 16),
        ("hex", "1234567812345678x", "too-long", 16),
        ("base32", "", "empty", 0),
        ("base32", "04W86BB0G400", "wrong-length", 0),
        ("base32", "04W86BB0G40077", "wrong-length", 0),
        ("base32", "04W86BB0G400U", "invalid-char", 12),
        ("base32", "G000000000000", "overflow", 0),
        ("base32", "G000000000U00", "invalid-char", 10),
        ("base32", "Z00000000000!", "invalid-char", 12),
        ("base62", "", "empty", 0),
        ("base62", "0Czks0tP37", "wrong-length", 0),
        ("base62", "0Czks0tP3-X", "invalid-char", 9),
        ("base62", "LygHa16AHYG", "overflow", 10),
        ("base62", "zzzzzzzzzzz", "overflow", 10),
    ]
    return [
        {"form": f, "input": i, "kind": k, "position": p, "message": parse_message(f, i, k, p)}
        for f, i, k, p in cases
    ]


def files():
    layouts = {name: layout_json(spec) for name, spec in LAYOUTS.items()}
    return {
        "ids.json": {"layouts": layouts, "ids": ids()},
        "objectid.json": objectids(),
        "text_errors.json": text_errors(),
    }


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name, content in files().items():
        text = json.dumps(content, indent=1) + "\n"
        path = HERE / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(HERE.parent.parent)}")
    if stale:
        sys.exit(f"stale vectors: {', '.join(stale)}; run `cargo xtask vectors`")
    if check:
        print("vectors are current")


if __name__ == "__main__":
    main()
