// Error codes: every error kind of the core (core/src/error.rs) is a `code` the package
// knows and its types list, and the errors of each part of the package carry theirs, with
// the class and message they have without it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Snowdrift, compose, decode, errorCodes, fromBase32, layoutInfo, parseId } from "snowdrift";
import { Sealer } from "snowdrift/seal";

const T0 = 1_750_000_000_000;
const root = new URL("../../", import.meta.url);

/** The variant names of the fieldless `pub enum name` in core/src/error.rs. */
function rustKinds(name) {
  const source = readFileSync(new URL("core/src/error.rs", root), "utf8");
  const body = source.match(new RegExp(`pub enum ${name} \\{\\n([\\s\\S]*?)\\n\\}`));
  assert.ok(body, `core/src/error.rs has no enum ${name}`);
  const kinds = body[1]
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("//") && !l.startsWith("#["))
    .map((l) => l.replace(/,$/, ""));
  assert.ok(kinds.length > 0);
  return kinds;
}

/** The error `fn` throws; it must throw. */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail("expected a throw");
}

/** Asserts that `fn` throws exactly `type` with `code` and a message containing `piece`. */
function throwsCode(fn, type, code, piece) {
  const e = thrown(fn);
  assert.equal(e.constructor, type, `${e}`);
  assert.equal(e.code, code, `${e}`);
  assert.ok(e.message.includes(piece), `${JSON.stringify(e.message)} lacks ${JSON.stringify(piece)}`);
  return e;
}

test("every error kind and parse error kind of the core is a code, and nothing else is", () => {
  const kinds = [...rustKinds("ErrorKind"), ...rustKinds("ParseErrorKind")];
  for (const kind of kinds) assert.ok(errorCodes.includes(kind), `the core's ${kind} has no code`);
  assert.deepEqual([...errorCodes].sort(), [...kinds].sort());
  assert.ok(Object.isFrozen(errorCodes));
  // The types list the same codes.
  const types = readFileSync(new URL("wasm/pkg/index.d.ts", root), "utf8");
  const union = types.match(/export type ErrorCode = ([^;]*);/);
  assert.ok(union, "index.d.ts has no ErrorCode");
  assert.deepEqual(
    union[1].split(" | ").map((s) => JSON.parse(s)),
    kinds,
  );
});

test("a generator at its fence throws an Error with code PastFence", () => {
  const gen = new Snowdrift({ clock: () => T0, onClockBackwards: "fail" });
  gen.setFenceMs(T0);
  const e = throwsCode(() => gen.next(), Error, "PastFence", "is not before the fence at");
  assert.match(e.message, /^next ID at \d+ ms is not before the fence at \d+ ms$/);
  throwsCode(() => gen.nextBatch(3), Error, "PastFence", "fence");
  gen.setFenceMs(T0 + 1);
  assert.equal(typeof gen.next(), "bigint");
});

test("a clock stepping back under fail throws an Error with code ClockBackwards", () => {
  let now = T0;
  const gen = new Snowdrift({ clock: () => now, onClockBackwards: "fail" });
  gen.next();
  now -= 37;
  throwsCode(() => gen.next(), Error, "ClockBackwards", "clock moved backwards by 37 ms (limit 0 ms)");
  throwsCode(() => gen.nextBatch(2), Error, "ClockBackwards", "backwards");
  // tryNext throws it too; only WouldBlock is its undefined.
  throwsCode(() => gen.tryNext(), Error, "ClockBackwards", "backwards");
});

test("a value outside its range is a RangeError with code OutOfRange, from the checks and the core", () => {
  // Checked in JS, before the wasm.
  throwsCode(() => new Snowdrift({ node: 1024 }), RangeError, "OutOfRange", "0..=1023");
  throwsCode(() => new Snowdrift({ node: 1.5 }), RangeError, "OutOfRange", "not an integer");
  throwsCode(() => decode(2 ** 60), RangeError, "OutOfRange", "lost precision");
  throwsCode(() => decode(-1n), RangeError, "OutOfRange", "0..=18446744073709551615");
  // Found by the core: a time before the layout's epoch, a split node's halves.
  throwsCode(() => compose({ timeMs: 1000 }), RangeError, "OutOfRange", "outside the layout's range");
  throwsCode(() => new Snowdrift({ clock: () => 1000 }).next(), RangeError, "OutOfRange", "time 1000 ms");
  throwsCode(() => parseId("-9223372036854775809"), RangeError, "OutOfRange", "smallest signed");
});

test("a wrong type and an unknown option carry no code", () => {
  assert.equal(thrown(() => new Snowdrift({ node: "3" })).code, undefined);
  assert.equal(thrown(() => new Snowdrift({ nod: 3 })).code, undefined);
});

test("a rejected text form carries the core's parse error kind, as the vectors name it", () => {
  let checked = 0;
  const vectors = JSON.parse(readFileSync(new URL("tests/vectors/text_errors.json", root)));
  for (const v of vectors) {
    const call = { base32: () => fromBase32(v.input), decimal: () => decode(v.input) }[v.form];
    if (!call) continue; // hex and base62 are not part of the main API
    const code = v.kind.replace(/(^|-)(.)/g, (_, _dash, c) => c.toUpperCase()); // "invalid-char" -> "InvalidChar"
    const e = throwsCode(call, RangeError, code, `invalid ${v.form} id `);
    assert.ok(e.message.endsWith(`: ${v.message}`), e.message);
    checked++;
  }
  assert.ok(checked >= 4, `only ${checked} vectors apply`);
});

test("a layout the core rejects carries the kind of its fault", () => {
  const wide = { timeBits: 43, nodeBits: 10, sequenceBits: 12, epochMs: 0 };
  throwsCode(() => layoutInfo(wide), RangeError, "LayoutTooWide", "65 bits");
  throwsCode(() => layoutInfo({ ...wide, timeBits: 41, sequenceBits: 0 }), RangeError, "NoSequenceBits", "sequence");
  // An unknown preset name is the JS layer's own check: no code.
  assert.equal(thrown(() => layoutInfo("nope")).code, undefined);
});

test("snowdrift/seal errors carry the core's codes", () => {
  throwsCode(() => new Sealer(new Uint8Array(20)), RangeError, "KeyLength", "20 bytes");
  const sealer = new Sealer(new Uint8Array(16));
  throwsCode(() => sealer.openString("!!!!!!!!!!!"), RangeError, "InvalidChar", "invalid character");
  throwsCode(() => sealer.seal(-1n), RangeError, "OutOfRange", "0..=18446744073709551615");
  // A 63-bit sealer takes no 64-bit ID: the core says so.
  throwsCode(() => sealer.seal(1n << 63n), RangeError, "OutOfRange", "cannot seal");
  const freed = new Sealer(new Uint8Array(16));
  freed.free();
  assert.equal(thrown(() => freed.seal(1n)).code, undefined);
});
