// IDs as JavaScript numbers: the 53-bit "js53" preset, nextNumber() (and its refusal on
// wider layouts, which changes nothing), and number IDs taken by decode and the text forms
// (a safe integer as it is; one that may have lost precision refused).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Snowdrift, decode, compose, layoutInfo, parseId, toBase32 } from "snowdrift";

const { layouts, ids } = JSON.parse(readFileSync(new URL("../vectors/ids.json", import.meta.url)));
const T0 = 1_750_000_000_000;
const MAX = Number.MAX_SAFE_INTEGER;

describe("the js53 layout", () => {
  test("is a preset of 53 bits whose IDs are all at most Number.MAX_SAFE_INTEGER", () => {
    const info = layoutInfo("js53");
    assert.equal(info.totalBits, 53);
    assert.deepEqual(layoutInfo(layouts.js53), info);
    const last = compose({ timeMs: info.lastTickMs, node: info.maxNode, sequence: info.maxSequence }, "js53");
    assert.equal(last, BigInt(MAX));
    assert.equal(new Date(info.exhaustsAtMs).toISOString(), "2111-02-08T13:44:29.440Z");
  });

  test("every js53 vector decodes from a Number, and a generator's nextNumber() makes it", () => {
    const mine = ids.filter((v) => v.layout === "js53");
    assert.ok(mine.length >= 10);
    for (const v of mine) {
      const n = Number(v.id);
      assert.equal(String(n), v.id, "a Number holds every js53 vector exactly");
      const p = decode(n, "js53");
      assert.deepEqual([p.timeMs, p.node, p.sequence], [v.timeMs, v.node, v.sequence], v.id);
      assert.equal(toBase32(n), v.text.base32);
      assert.equal(parseId(n), BigInt(v.id));
      if (v.sequence === 0) {
        const gen = new Snowdrift({ layout: "js53", node: v.node, clock: () => v.timeMs });
        assert.equal(gen.nextNumber(), n);
      }
    }
  });

  test("a safe-integer vector of any layout decodes from a Number as from its bigint", () => {
    const safe = ids.filter((v) => BigInt(v.id) <= BigInt(MAX));
    assert.ok(new Set(safe.map((v) => v.layout)).size >= 6);
    for (const v of safe) {
      assert.deepEqual({ ...decode(Number(v.id), v.layout) }, { ...decode(BigInt(v.id), v.layout) }, v.id);
    }
  });
});

describe("nextNumber()", () => {
  test("gives Numbers equal to the IDs, strictly increasing, in step with next()", () => {
    const gen = new Snowdrift({ layout: "js53", node: 5, clock: () => T0 });
    const a = gen.nextNumber();
    const b = gen.next();
    const c = gen.nextNumber();
    assert.equal(typeof a, "number");
    assert.equal(BigInt(a) + 1n, b);
    assert.equal(BigInt(c), b + 1n);
    assert.equal(BigInt(a), compose({ timeMs: T0, node: 5, sequence: 0 }, "js53"));
    const p = gen.decode(c);
    assert.deepEqual([p.timeMs, p.node, p.sequence], [T0, 5, 2]);
    // Past a tick's 256 IDs, the time field moves on: still Numbers, still increasing.
    let last = c;
    for (let i = 0; i < 1000; i++) {
      const n = gen.nextNumber();
      assert.ok(n > last && Number.isSafeInteger(n));
      last = n;
    }
  });

  test("the layout's last ID is Number.MAX_SAFE_INTEGER", () => {
    const { lastTickMs, maxNode } = layoutInfo("js53");
    const gen = new Snowdrift({ layout: "js53", node: maxNode, clock: () => lastTickMs, resumeAfter: MAX - 1 });
    assert.equal(gen.nextNumber(), MAX);
    assert.throws(() => gen.nextNumber(), RangeError);
  });

  test("a custom layout of 53 bits gives Numbers; one of 54 does not", () => {
    const spec = (nodeBits) => ({ timeBits: 41, nodeBits, sequenceBits: 6, epochMs: 0 });
    assert.equal(typeof new Snowdrift({ layout: spec(6), clock: () => T0 }).nextNumber(), "number");
    assert.throws(() => new Snowdrift({ layout: spec(7), clock: () => T0 }).nextNumber(), {
      name: "RangeError",
      message: /this layout takes 54 bits/,
    });
  });

  const wide = Object.keys(layouts).filter((name) => layoutInfo(name).totalBits > 53);
  test("the vectors' presets other than js53 are all wider than 53 bits", () => {
    assert.deepEqual(
      wide.sort(),
      Object.keys(layouts)
        .filter((name) => name !== "js53")
        .sort(),
    );
  });
  for (const layout of wide) {
    test(`on ${layout} (${layoutInfo(layout).totalBits} bits): a RangeError naming the widths, no ID issued`, () => {
      const { totalBits, lastTickMs } = layoutInfo(layout);
      const at = Math.min(T0, lastTickMs); // Baidu's time ran out in 2024
      const gen = new Snowdrift({ layout, clock: () => at });
      const twin = new Snowdrift({ layout, clock: () => at });
      for (let i = 0; i < 3; i++) {
        assert.throws(() => gen.nextNumber(), {
          name: "RangeError",
          message: `nextNumber() needs a layout of at most 53 bits (a Number holds integers exactly up to 2^53 - 1 = 9007199254740991); this layout takes ${totalBits} bits: use next() (a bigint) or nextString(), or the "js53" layout`,
        });
      }
      assert.equal(gen.issuedThroughMs, twin.issuedThroughMs);
      // The refused calls used no sequence number: the next ID is the twin's first.
      assert.equal(gen.next(), twin.next());
      assert.equal(gen.next(), twin.next());
    });
  }

  test("a freed generator refuses it like its other calls", () => {
    const gen = new Snowdrift({ layout: "js53" });
    gen.free();
    assert.throws(() => gen.nextNumber(), /this generator was freed/);
  });
});

describe("number IDs", () => {
  const lost = [2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e21, Number.MAX_VALUE];
  const bad = [
    [-1, "outside the allowed range 0..=9007199254740991"],
    [-0.5, "not an integer"],
    [1.5, "not an integer"],
    [Number.NaN, "outside the allowed range"],
    [Number.POSITIVE_INFINITY, "outside the allowed range"],
    [Number.NEGATIVE_INFINITY, "outside the allowed range"],
  ];
  const takers = {
    decode: (n) => decode(n, "js53"),
    "decode (default layout)": (n) => decode(n),
    toBase32,
    parseId,
    "Snowdrift#decode": (n) => new Snowdrift({ layout: "js53" }).decode(n),
    resumeAfter: (n) => new Snowdrift({ layout: "js53", resumeAfter: n }),
  };
  for (const [name, take] of Object.entries(takers)) {
    test(`${name}: a Number above 2^53 - 1 is a RangeError naming it and the lost precision`, () => {
      const what = name === "resumeAfter" ? "resumeAfter" : "id";
      for (const n of lost) {
        assert.throws(() => take(n), {
          name: "RangeError",
          message: `${what} ${n} is above 2^53 - 1 (9007199254740991): a Number cannot hold it exactly, so it may have lost precision; pass the ID as a bigint or a decimal string`,
        });
      }
      for (const [n, why] of bad) {
        assert.throws(
          () => take(n),
          (e) => e instanceof RangeError && e.message.startsWith(`${what} ${n} is `) && e.message.includes(why),
        );
      }
    });
  }

  test("a safe integer is the ID it holds: decode, toBase32, parseId and resumeAfter agree with the bigint", () => {
    for (const n of [0, 1, 33_025, 2 ** 32, MAX - 1, MAX]) {
      assert.deepEqual({ ...decode(n, "js53") }, { ...decode(BigInt(n), "js53") });
      assert.equal(toBase32(n), toBase32(BigInt(n)));
      assert.equal(parseId(n), BigInt(n));
    }
    const after = Number(compose({ timeMs: T0, node: 3, sequence: 7 }, "js53"));
    const gen = new Snowdrift({ layout: "js53", node: 3, clock: () => T0, resumeAfter: after });
    assert.equal(gen.nextNumber(), after + 1);
  });

  test("a refused number changes no generator state", () => {
    const gen = new Snowdrift({ layout: "js53", clock: () => T0 });
    const first = gen.nextNumber();
    assert.throws(() => gen.decode(2 ** 53), RangeError);
    assert.equal(gen.nextNumber(), first + 1);
  });
});
