#!/usr/bin/env python3
"""Writes snowdrift's shared test vectors: tests/vectors/{ids,objectid,text_errors,sealed}.json.

This is an independent implementation of the layouts, the bit packing and the text forms,
written from the layout definitions alone (plain integers, no snowdrift code), so that
every frontend that agrees with these files agrees with a second implementation, not just
with itself. Every frontend's tests read the same files: the Rust core
(core/tests/vectors.rs), the wasm crate and the npm package's JS tests.

    python3 tests/vectors/generate.py          # rewrite the files
    python3 tests/vectors/generate.py --check  # fail if the files are not what this writes

sealed.json holds sealed IDs: NIST SP 800-38G FF1 in radix 2 over a layout's 63 or 64
bits, written here from the specification with numeral lists and Python integers, over
AES-ECB from the `cryptography` package (the block cipher alone; `cargo xtask test
vectors` installs the package when it is missing), and checked against NIST's published
FF1 samples 1 to 9 (ff1_samples.json, which the core's tests read too) before any vector
is written.

The IDs are deterministic: fixed edge cases (zero and all-ones fields) plus values from a
fixed-seed linear congruential generator, plus anchors published elsewhere (Discord's
documentation ID, a MongoDB ObjectId) whose decoded values are asserted below by hand.
"""

import json
import sys
from pathlib import Path

try:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
except ImportError:
    sys.exit("tests/vectors/generate.py needs the `cryptography` package: python3 -m pip install cryptography")

HERE = Path(__file__).resolve().parent

# name: (time bits, datacenter bits, worker bits, sequence bits, unit ms, epoch ms, order)
LAYOUTS = {
    "default": (41, 0, 10, 12, 1, 1_704_067_200_000, "node-sequence"),  # 2024-01-01T00:00:00Z
    "twitter": (41, 5, 5, 12, 1, 1_288_834_974_657, "node-sequence"),
    "discord": (42, 5, 5, 12, 1, 1_420_070_400_000, "node-sequence"),  # 2015-01-01T00:00:00Z
    "sonyflake": (39, 0, 16, 8, 10, 1_409_529_600_000, "sequence-node"),  # 2014-09-01T00:00:00Z
    "instagram": (41, 0, 13, 10, 1, 1_314_220_021_721, "node-sequence"),
    "baidu": (28, 0, 22, 13, 1000, 1_463_702_400_000, "node-sequence"),  # 2016-05-20T00:00:00Z
    # 53 bits: every ID is at most 2^53 - 1, a JavaScript Number's largest exact integer.
    "js53": (38, 0, 7, 8, 10, 1_704_067_200_000, "node-sequence"),  # 2024-01-01T00:00:00Z
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
    # The last js53 ID is Number.MAX_SAFE_INTEGER.
    last = LAYOUTS["js53"]
    assert compose(last, (1 << last[0]) - 1, (1 << last[2]) - 1, (1 << last[3]) - 1) == 2**53 - 1
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
        # A non-ASCII character: the first character outside the alphabet is named,
        # an ASCII one before it included, rather than the length.
        ("base32", "f!>Z?\u2c0b\U0001d146", "invalid-char", 1),
        ("base32", "fZ\u2c0b", "invalid-char", 2),
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


# --- FF1 (NIST SP 800-38G, Algorithms 7 and 8), over numeral lists ---------------------


def aes_block(key, block):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def num(numerals, radix):
    value = 0
    for x in numerals:
        value = value * radix + x
    return value


def numerals_of(value, radix, length):
    out = []
    for _ in range(length):
        value, r = divmod(value, radix)
        out.append(r)
    assert value == 0
    return out[::-1]


def ff1_prf(key, data):
    # CBC-MAC with a zero IV: the last block of AES-CBC.
    y = bytes(16)
    for k in range(0, len(data), 16):
        y = aes_block(key, bytes(a ^ b for a, b in zip(y, data[k : k + 16])))
    return y


def ff1(key, tweak, radix, x, decrypt=False):
    n, t = len(x), len(tweak)
    u = n // 2
    v = n - u
    a, b = x[:u], x[u:]
    # b = ceil(ceil(v * log2(radix)) / 8), computed exactly with integers.
    bytes_b = ((radix**v - 1).bit_length() + 7) // 8
    d = 4 * ((bytes_b + 3) // 4) + 4
    p = bytes([1, 2, 1]) + radix.to_bytes(3, "big") + bytes([10, u % 256]) + n.to_bytes(4, "big") + t.to_bytes(4, "big")

    def round_y(i, half):
        q = tweak + bytes((-t - bytes_b - 1) % 16) + bytes([i]) + num(half, radix).to_bytes(bytes_b, "big")
        r = ff1_prf(key, p + q)
        s = r
        j = 1
        while len(s) < d:
            s += aes_block(key, bytes(a ^ b for a, b in zip(r, j.to_bytes(16, "big"))))
            j += 1
        return int.from_bytes(s[:d], "big")

    rounds = range(9, -1, -1) if decrypt else range(10)
    for i in rounds:
        m = u if i % 2 == 0 else v
        if decrypt:
            c = (num(b, radix) - round_y(i, a)) % radix**m
            a, b = numerals_of(c, radix, m), a
        else:
            c = (num(a, radix) + round_y(i, b)) % radix**m
            a, b = b, numerals_of(c, radix, m)
    return a + b


def check_nist_samples():
    # NIST's FF1 samples 1-9, kept in ff1_samples.json (the core's tests read it too).
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    samples = json.loads((HERE / "ff1_samples.json").read_text())["samples"]
    for k, s in enumerate(samples):
        key, tweak, radix = bytes.fromhex(s["key"]), bytes.fromhex(s["tweak"]), s["radix"]
        x = [digits.index(c) for c in s["plaintext"]]
        got = "".join(digits[c] for c in ff1(key, tweak, radix, x))
        assert got == s["ciphertext"], f"NIST FF1 sample {k + 1}: {got} != {s['ciphertext']}"
        back = ff1(key, tweak, radix, [digits.index(c) for c in s["ciphertext"]], decrypt=True)
        assert back == x, f"NIST FF1 sample {k + 1} decrypted"


def seal(key, tweak, bits, i):
    x = [(i >> (bits - 1 - k)) & 1 for k in range(bits)]  # most significant bit first
    return num(ff1(key, tweak, 2, x), 2)


def sealed():
    check_nist_samples()
    rand = lcg(2022)
    keys = [
        "2b7e151628aed2a6abf7158809cf4f3c",
        "000102030405060708090a0b0c0d0e0f1011121314151617",
        "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
    ]
    # Empty, a key id, one that fills Q's block exactly (11 bytes), and one over two blocks.
    tweaks = ["", "6b31", "0102030405060708090a0b", "73656c6c65722d6b65792d323032362d3131"]
    cases = []
    for li, (name, (t, d, w, s, _unit, _epoch, _order)) in enumerate(LAYOUTS.items()):
        bits = 63 if t + d + w + s <= 63 else 64
        top = (1 << bits) - 1
        for ki, key in enumerate(keys):
            tweak = tweaks[(li + ki) % len(tweaks)]
            picks = [0, 1, top, top - 1, 1 << 31, (1 << 32) - 1, 1 << (bits - 1)]
            picks += [next(rand) % (top + 1) for _ in range(3)]
            for i in picks:
                out = seal(bytes.fromhex(key), bytes.fromhex(tweak), bits, i)
                assert 0 <= out <= top
                cases.append(
                    {
                        "layout": name,
                        "bits": bits,
                        "key": key,
                        "tweak": tweak,
                        "id": str(i),
                        "sealed": str(out),
                        "base32": base_n(out, CROCKFORD, 13),
                        "base62": base_n(out, BASE62, 11),
                    }
                )
    return cases


def files():
    layouts = {name: layout_json(spec) for name, spec in LAYOUTS.items()}
    return {
        "ids.json": {"layouts": layouts, "ids": ids()},
        "objectid.json": objectids(),
        "text_errors.json": text_errors(),
        "sealed.json": sealed(),
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
