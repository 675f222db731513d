// snowdrift/seal: the shared sealed-ID vectors (tests/vectors/sealed.json, from the
// Python FF1 over `cryptography`'s AES), a cross-check against @noble/ciphers' FF1 on the
// same inputs, the errors, both module systems and the command.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { FF1 } from "@noble/ciphers/ff1.js";
import { Sealer } from "snowdrift/seal";
import { layoutInfo } from "snowdrift";

const cases = JSON.parse(readFileSync(new URL("../vectors/sealed.json", import.meta.url)));
const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (b) => Number.parseInt(b, 16));

test("every ID seals and opens as the shared vectors say", () => {
  assert.ok(cases.length >= 150);
  for (const c of cases) {
    const sealer = new Sealer(c.key, { layout: c.layout, tweak: c.tweak });
    assert.equal(sealer.bits, c.bits);
    const id = BigInt(c.id);
    const sealed = BigInt(c.sealed);
    assert.equal(sealer.seal(id), sealed, JSON.stringify(c));
    assert.equal(sealer.open(sealed), id);
    assert.equal(sealer.sealString(id, "base32"), c.base32);
    assert.equal(sealer.sealString(id), c.base62);
    assert.equal(sealer.openString(c.base62), id);
    assert.equal(sealer.openString(c.base32.toLowerCase(), "base32"), id);
    sealer.free();
  }
});

/** `x` as `bits` binary numerals, most significant first: FF1's view of an ID. */
const toBits = (x, bits) => Array.from({ length: bits }, (_, i) => Number((x >> BigInt(bits - 1 - i)) & 1n));
const fromBits = (digits) => digits.reduce((v, d) => (v << 1n) | BigInt(d), 0n);

test("sealing agrees with @noble/ciphers' FF1 (radix 2) on the same keys, tweaks and IDs", () => {
  let state = 0x2545f4914f6cdd1dn;
  const next = () => {
    state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return state;
  };
  const bytes = (n) => Uint8Array.from({ length: n }, () => Number(next() >> 56n));
  let checked = 0;
  for (const keyLen of [16, 24, 32]) {
    for (const tweakLen of [0, 2, 11, 12, 30]) {
      for (const layout of ["default", "discord"]) {
        const key = bytes(keyLen);
        const tweak = bytes(tweakLen);
        const sealer = new Sealer(key, { layout, tweak });
        const noble = FF1(2, key, tweak);
        const bits = sealer.bits;
        const max = (1n << BigInt(bits)) - 1n;
        for (const id of [0n, 1n, max, max >> 1n, next() & max, next() & max]) {
          const sealed = fromBits(noble.encrypt(toBits(id, bits)));
          assert.equal(sealer.seal(id), sealed, `key ${keyLen} B, tweak ${tweakLen} B, ${layout}, id ${id}`);
          assert.equal(fromBits(noble.decrypt(toBits(sealed, bits))), id);
          checked++;
        }
        sealer.free();
      }
    }
  }
  assert.equal(checked, 180);
});

test("a custom layout seals over 63 or 64 bits as layoutInfo says it fits i64", () => {
  const key = "000102030405060708090a0b0c0d0e0f";
  const narrow = new Sealer(key, {
    layout: { fitsI64: layoutInfo({ timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: 0 }).fitsI64 },
  });
  assert.equal(narrow.bits, 63);
  assert.equal(narrow.seal(5n), new Sealer(key, { layout: "twitter" }).seal(5n));
  assert.equal(new Sealer(key, { layout: { fitsI64: false } }).bits, 64);
});

test("errors name the value and what is allowed, and never show the key", () => {
  const sealer = new Sealer(hex("2b7e151628aed2a6abf7158809cf4f3c"));
  assert.throws(() => new Sealer("00112233"), {
    name: "RangeError",
    message: "key of 4 bytes: AES keys are 16, 24 or 32 bytes",
  });
  assert.throws(() => new Sealer("xyz"), { name: "RangeError", message: /hex digits in pairs/ });
  assert.throws(
    () => new Sealer(12345),
    (e) => e instanceof TypeError && !e.message.includes("12345"),
  );
  assert.throws(() => new Sealer("00".repeat(16), { layout: "tweet" }), {
    name: "RangeError",
    message: /^unknown layout "tweet" \(presets: "default", "twitter"/,
  });
  assert.throws(() => new Sealer("00".repeat(16), { tweek: "" }), /unknown Sealer option "tweek"/);
  assert.throws(() => sealer.seal(1n << 63n), {
    name: "RangeError",
    message:
      "cannot seal 9223372036854775808n: id 9223372036854775808 does not fit the layout's 63 bits (max 9223372036854775807)",
  });
  assert.throws(() => sealer.open(-1n), { name: "RangeError", message: /outside the allowed range/ });
  assert.throws(() => sealer.seal("1"), {
    name: "TypeError",
    message: 'id must be a bigint or a number, got string "1"',
  });
  // A number holds an ID exactly up to 2^53 - 1; past it, the ID may have lost precision.
  assert.equal(sealer.seal(2 ** 53 - 1), sealer.seal(2n ** 53n - 1n));
  assert.equal(sealer.open(Number(sealer.seal(1n) & 0xfffffn)), sealer.open(sealer.seal(1n) & 0xfffffn));
  assert.throws(() => sealer.seal(2 ** 53), {
    name: "RangeError",
    message:
      "id 9007199254740992 is above 2^53 - 1 (9007199254740991): a Number cannot hold it exactly, so it may have lost precision; pass the ID as a bigint or a decimal string",
  });
  assert.throws(() => sealer.sealString(-1), {
    name: "RangeError",
    message: /^id -1 is outside the allowed range 0\.\.=9007199254740991$/,
  });
  assert.throws(() => sealer.openString("LygHa16AHYF"), {
    name: "RangeError",
    message: /sealed id 18446744073709551615 does not fit the layout's 63 bits/,
  });
  assert.throws(() => sealer.openString("0000000000-"), {
    name: "RangeError",
    message: `cannot open base62 id "0000000000-": invalid character '-' at position 10`,
  });
  assert.throws(() => sealer.sealString(1n, "base64"), { name: "RangeError", message: /form "base64" is not one of/ });
  // A 64-bit space: 2^64-1 is a value like any other (wasm returns it as -1).
  const wide = new Sealer("00".repeat(32), { layout: "discord" });
  const top = wide.open(0xffffffffffffffffn);
  assert.equal(wide.seal(top), 0xffffffffffffffffn);
  wide.free();
  assert.throws(() => wide.seal(1n), /this sealer was freed/);
});

test("sealers dropped without free() never run out: a sealer per call, 1,500 times, with distinct and equal keys", () => {
  const id = 1541815603606036480n;
  const expected = new Map();
  for (let i = 0; i < 1500; i++) {
    // Half the keys repeat (a server making a sealer per request), half are new.
    const key = (i % 2 === 0 ? i : 1).toString(16).padStart(64, "0");
    const sealed = new Sealer(key, { layout: "twitter" }).seal(id);
    if (!expected.has(key)) expected.set(key, sealed);
    assert.equal(sealed, expected.get(key), `sealer ${i} sealed with another key`);
  }
});

test("sealers of one key share their work but not their lifetime: free() of one leaves the others working", () => {
  const key = "11".repeat(16);
  const a = new Sealer(key, { tweak: "01" });
  const b = new Sealer(key, { tweak: "01" });
  const other = new Sealer(key, { tweak: "02" });
  const wide = new Sealer(key, { tweak: "01", layout: "discord" });
  const sealed = a.seal(5n);
  a.free();
  a.free(); // twice changes nothing
  assert.throws(() => a.seal(5n), /this sealer was freed/);
  assert.equal(b.seal(5n), sealed);
  assert.notEqual(other.seal(5n), sealed);
  assert.equal(wide.bits, 64);
  assert.equal(b.bits, 63);
  for (const s of [b, other, wide]) s.free();
  assert.equal(new Sealer(key, { tweak: "01" }).seal(5n), sealed);
});

test("key and tweak take up to 1,024 bytes with the preset's name: a 992-byte tweak with a 32-byte key and a custom layout", () => {
  const key = "22".repeat(32);
  const custom = { fitsI64: true };
  const long = new Sealer(key, { layout: custom, tweak: "ab".repeat(992) });
  assert.equal(long.open(long.seal(77n)), 77n);
  long.free();
  assert.throws(() => new Sealer(key, { layout: custom, tweak: "ab".repeat(993) }), {
    name: "RangeError",
    message: "key and tweak of 1025 bytes (max 1024)",
  });
  assert.throws(() => new Sealer(key, { layout: "twitter", tweak: "ab".repeat(986) }), {
    name: "RangeError",
    message: "key and tweak of 1018 bytes (max 1017)",
  });
});

test("a key or tweak of the wrong type is refused without showing it", () => {
  const secret = [0x5e, 0xc7, 0x37, 0x42, 0x99, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb];
  for (const [value, kind] of [
    [secret, "an array of 16 items"],
    [123456789, "a number"],
    [123456789n, "a bigint"],
    [{ key: "00".repeat(16) }, "an object"],
    [null, "null"],
    [true, "a boolean"],
  ]) {
    for (const make of [(v) => new Sealer(v), (v) => new Sealer("00".repeat(16), { tweak: v })]) {
      assert.throws(
        () => make(value),
        (e) => {
          assert.equal(e.name, "TypeError");
          assert.match(e.message, new RegExp(`^(key|tweak) must be a Uint8Array or a hex string, got ${kind}$`));
          for (const shown of ["94", "5e", "123456789", "00000", "true"])
            assert.ok(!e.message.includes(shown), e.message);
          return true;
        },
      );
    }
  }
});

test("require() and import give the same class", () => {
  const require = createRequire(import.meta.url);
  assert.equal(require("snowdrift/seal").Sealer, Sealer);
});

test("the command seals and opens with a key file, raw or in hex", () => {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-seal-"));
  try {
    const c = cases.find((v) => v.layout === "twitter" && v.tweak !== "");
    const hexFile = join(dir, "key.hex");
    const rawFile = join(dir, "key.bin");
    writeFileSync(hexFile, `${c.key}\n`);
    writeFileSync(rawFile, hex(c.key));
    const bin = createRequire(import.meta.url)
      .resolve("snowdrift/package.json")
      .replace(/package\.json$/, "bin/snowdrift.cjs");
    const run = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" });
    for (const file of [hexFile, rawFile]) {
      const sealed = run("seal", c.id, "--key-file", file, "--layout", "twitter", "--tweak", c.tweak);
      assert.equal(sealed.stdout.trim(), c.base62, sealed.stderr);
      const opened = run(
        "open",
        c.base32,
        "--key-file",
        file,
        "--layout",
        "twitter",
        "--tweak",
        c.tweak,
        "--form",
        "base32",
        "--json",
      );
      assert.deepEqual(JSON.parse(opened.stdout), { id: c.id, sealed: c.base32, form: "base32", bits: 63 });
    }
    const bad = run("seal", "1");
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /seal and open need --key-file FILE/);
    // Text that is not a whole hex key is refused, never read as a raw key: 31 digits and a
    // newline are 32 bytes, the size of a raw AES-256 key.
    const digits = "0123456789abcdef".repeat(4);
    for (const [text, message] of [
      [`${digits.slice(0, 31)}\n`, /holds 31 hex digits: a hex key has 32, 48 or 64/],
      [digits.slice(0, 16), /holds 16 hex digits: a hex key has 32, 48 or 64/],
      [`${digits.slice(0, 63)}g`, /holds text that is not a key in hex/],
      ["correct horse battery staple!!!\n", /holds text that is not a key in hex/],
    ]) {
      const file = join(dir, "almost.hex");
      writeFileSync(file, text);
      const r = run("seal", c.id, "--key-file", file, "--layout", "twitter");
      assert.equal(r.status, 2, `${JSON.stringify(text)}: ${r.stdout}`);
      assert.match(r.stderr, message);
      assert.ok(!r.stderr.includes(digits.slice(0, 16)), "the key file's text is not shown");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
