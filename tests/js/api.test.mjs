// The whole public API of the npm package, against the shared vectors in tests/vectors/,
// with every kind of bad input and each clock policy driven by a custom clock.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Snowdrift, ObjectId, decode, compose, toBase32, fromBase32, minIdAt, maxIdAt, layoutInfo } from "snowdrift";

// Discord's documentation ID 175928847299117063 under the discord layout, as JSON shows it.
const DISCORD_DOC_PARTS = {
  timeMs: 1462015105796,
  date: "2016-04-30T11:18:25.796Z",
  node: 32,
  datacenter: 1,
  worker: 0,
  sequence: 7,
};

const vectors = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url)));
const T0 = 1_750_000_000_000; // a fixed clock reading for the generator tests

/** A clock for tests: `clock.now` is what it reads; `step` moves it on every read. */
function manualClock(now, step = 0) {
  const c = () => {
    c.reads++;
    const t = c.now;
    c.now += c.step;
    return t;
  };
  Object.assign(c, { now, step, reads: 0 });
  return c;
}

/** Asserts that `fn` throws exactly `type` with a message containing every piece. */
function throwsWith(fn, type, ...pieces) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected a ${type.name}, nothing was thrown`);
  assert.equal(error.constructor, type, `expected a ${type.name}, got ${error.constructor.name}: ${error.message}`);
  for (const p of pieces) assert.ok(error.message.includes(p), `"${error.message}" should mention "${p}"`);
  return error;
}

describe("shared vectors (tests/vectors)", () => {
  const { layouts, ids } = vectors("ids.json");

  test("decode, compose, base32 and ID ranges agree with every vector, by preset name and by spec", () => {
    assert.ok(ids.length > 0);
    for (const v of ids) {
      const id = BigInt(v.id);
      for (const layout of [v.layout, layouts[v.layout]]) {
        const p = decode(id, layout);
        const where = `${v.layout} ${v.id}`;
        assert.equal(p.timeMs, v.timeMs, where);
        assert.equal(p.date.getTime(), v.timeMs, where);
        assert.equal(p.node, v.node, where);
        assert.equal(p.datacenter, v.datacenter ?? undefined, where);
        assert.equal(p.worker, v.worker ?? undefined, where);
        assert.equal(p.sequence, v.sequence, where);
        assert.equal(compose(p, layout), id, where);
        assert.equal(decode(v.id, layout).timeMs, v.timeMs, `${where} as a string`);
        assert.ok(minIdAt(v.timeMs, layout) <= id && id <= maxIdAt(v.timeMs, layout), where);
      }
      assert.equal(id.toString(), v.text.decimal);
      assert.equal(toBase32(id), v.text.base32);
      assert.equal(toBase32(v.id), v.text.base32);
      assert.equal(fromBase32(v.text.base32), id);
      assert.equal(fromBase32(v.text.base32.toLowerCase()), id);
    }
  });

  test("a generator on every layout makes the vector's ID at the vector's time", () => {
    const firsts = ids.filter((v) => v.sequence === 0);
    assert.ok(firsts.length >= 6, "a sequence-0 vector per layout");
    for (const v of firsts) {
      const spec = layouts[v.layout];
      const node = v.datacenter === null ? { node: v.node } : { datacenter: v.datacenter, worker: v.worker };
      // The clock reads the start of the vector's tick; the first ID has sequence 0.
      const gen = new Snowdrift({ layout: v.layout, ...node, clock: () => v.timeMs });
      assert.equal(gen.next(), BigInt(v.id), `${v.layout} ${v.id}`);
      const fromSpec = new Snowdrift({ layout: spec, ...node, clock: () => v.timeMs });
      assert.equal(fromSpec.next(), BigInt(v.id), `${v.layout} spec ${v.id}`);
    }
  });

  test("ObjectId vectors parse, format and give their time", () => {
    const oids = vectors("objectid.json");
    assert.ok(oids.length > 0);
    for (const v of oids) {
      const oid = ObjectId.parse(v.hex);
      assert.equal(oid.toString(), v.hex.toLowerCase());
      assert.equal(ObjectId.parse(v.hex.toUpperCase()).toString(), v.hex.toLowerCase());
      assert.equal(oid.timestamp, v.timestamp);
      assert.equal(JSON.stringify({ oid }), JSON.stringify({ oid: v.hex.toLowerCase() }));
    }
  });

  test("text errors: base32 and decimal inputs are rejected with the vectors' messages", () => {
    let checked = 0;
    for (const v of vectors("text_errors.json")) {
      const call = { base32: () => fromBase32(v.input), decimal: () => decode(v.input) }[v.form];
      if (!call) continue; // hex and base62 are not part of the JS API
      const e = throwsWith(call, RangeError, `invalid ${v.form} id `);
      assert.ok(e.message.endsWith(`: ${v.message}`), `${JSON.stringify(v.input)}: ${e.message}`);
      checked++;
    }
    assert.ok(checked >= 4, `only ${checked} vectors apply`);
  });
});

describe("layoutInfo", () => {
  const { layouts, ids } = vectors("ids.json");

  test("every preset's fields, order, tick and epoch are the vectors', by name and by spec", () => {
    for (const [name, spec] of Object.entries(layouts)) {
      for (const layout of [name, spec]) {
        const info = layoutInfo(layout);
        for (const key of [
          "timeBits",
          "datacenterBits",
          "workerBits",
          "nodeBits",
          "sequenceBits",
          "unitMs",
          "epochMs",
          "order",
        ]) {
          assert.equal(info[key], spec[key], `${name} ${key}`);
        }
        assert.equal(info.totalBits, spec.timeBits + spec.nodeBits + spec.sequenceBits, name);
        assert.equal(info.split, spec.datacenterBits > 0, name);
        assert.equal(info.maxNode, 2 ** spec.nodeBits - 1, name);
        assert.equal(info.maxSequence, 2 ** spec.sequenceBits - 1, name);
        assert.equal(info.fitsI64, info.totalBits <= 63, name);
        assert.equal(info.exhaustsAtMs, info.lastTickMs + info.unitMs, name);
        assert.equal(info.lastTickMs, spec.epochMs + (2 ** spec.timeBits - 1) * spec.unitMs, name);
      }
    }
    assert.deepEqual(layoutInfo(), layoutInfo("default"));
    // The core's own figures (Layout::exhausts_at's doc): 2093-09-06T15:47:35.552Z.
    assert.equal(layoutInfo("default").exhaustsAtMs, 3_903_090_455_552);
    assert.equal(layoutInfo("sonyflake").exhaustsAtMs, 6_907_087_738_880);
  });

  test("agrees with what decode reads from IDs: the node range, the split and the last tick", () => {
    for (const v of ids) {
      const info = layoutInfo(v.layout);
      const p = decode(v.id, v.layout);
      assert.ok(p.node <= info.maxNode && p.sequence <= info.maxSequence, `${v.layout} ${v.id}`);
      assert.equal(p.datacenter !== undefined, info.split, `${v.layout} ${v.id}`);
      assert.ok(p.timeMs >= info.epochMs && p.timeMs <= info.lastTickMs, `${v.layout} ${v.id}`);
    }
    const discord = layoutInfo("discord");
    assert.equal(decode(maxIdAt(discord.lastTickMs, "discord"), "discord").timeMs, discord.lastTickMs);
    assert.throws(() => minIdAt(discord.exhaustsAtMs, "discord"), RangeError);
  });

  test("bad layouts: the same errors as everywhere else", () => {
    throwsWith(() => layoutInfo("nope"), RangeError, '"nope"');
    throwsWith(() => layoutInfo({ timeBits: 43, nodeBits: 10, sequenceBits: 12, epochMs: 0 }), RangeError, "65 bits");
    throwsWith(() => layoutInfo(5), TypeError, "layout");
  });
});

describe("Snowdrift", () => {
  test("next, nextString, nextBatch and tryNext hand out strictly increasing bigints", () => {
    const gen = new Snowdrift({ node: 9 });
    const a = gen.next();
    assert.equal(typeof a, "bigint");
    const s = gen.nextString();
    assert.match(s, /^\d+$/);
    const b = BigInt(s);
    const batch = gen.nextBatch(10_000);
    assert.ok(batch instanceof BigUint64Array);
    assert.equal(batch.length, 10_000);
    const c = gen.tryNext();
    assert.equal(typeof c, "bigint");
    const all = [a, b, ...batch, c];
    for (let i = 1; i < all.length; i++) assert.ok(all[i] > all[i - 1], `ID ${i}`);
    for (const id of [a, b, batch[0], batch[9999], c]) assert.equal(gen.decode(id).node, 9);
    assert.equal(gen.node, 9);
  });

  test("split layouts take datacenter + worker, and decode gives them back", () => {
    const gen = new Snowdrift({ layout: "twitter", datacenter: 1, worker: 2, clock: () => T0 });
    const p = gen.decode(gen.next());
    assert.deepEqual([p.node, p.datacenter, p.worker, p.sequence, p.timeMs], [34, 1, 2, 0, T0]);
    assert.equal(new Snowdrift({ layout: "twitter", node: 34 }).node, 34);
    // A decoded Parts object (node + datacenter + worker) composes back.
    const id = gen.next();
    assert.equal(compose(decode(id, "twitter"), "twitter"), id);
  });

  test("a custom layout object works like the preset it describes", () => {
    const spec = {
      timeBits: 39,
      sequenceBits: 8,
      nodeBits: 16,
      unitMs: 10,
      epochMs: 1409529600000,
      order: "sequence-node",
    };
    const a = new Snowdrift({ layout: spec, node: 3, clock: () => T0 });
    const b = new Snowdrift({ layout: "sonyflake", node: 3, clock: () => T0 });
    for (let i = 0; i < 300; i++) assert.equal(a.next(), b.next());
  });

  test("resumeAfter: never an ID at or below it, as a bigint or a decimal string", () => {
    const clock = manualClock(T0);
    const first = new Snowdrift({ node: 4, clock }).next();
    clock.now = T0 - 500; // the clock went back across a restart
    for (const resumeAfter of [first, first.toString()]) {
      const gen = new Snowdrift({ node: 4, clock, resumeAfter });
      assert.ok(gen.next() > first);
    }
  });

  test("default options: node 0, layout default, Date.now clock, borrow policy", () => {
    const before = Date.now();
    const gen = new Snowdrift();
    const p = gen.decode(gen.next());
    assert.equal(p.node, 0);
    assert.ok(p.timeMs >= before && p.timeMs <= Date.now() + 1000);
    // Borrow: a clock that stands still does not stop a burst past one tick's sequence.
    const frozen = new Snowdrift({ clock: () => T0 });
    const ids = frozen.nextBatch(5000);
    assert.equal(frozen.decode(ids[4999]).timeMs, T0 + 1);
    assert.equal(typeof frozen.tryNext(), "bigint");
  });
});

describe("a freed generator", () => {
  test("answers every call with a clear error, keeps its node and high-water mark, and touches no wasm memory", () => {
    const gen = new Snowdrift({ node: 3, onClockBackwards: "borrow" });
    const last = gen.nextBatch(5000).at(-1);
    const through = gen.issuedThroughMs;
    assert.ok(through >= decode(last).timeMs);
    gen.free();
    const freed = { name: "Error", message: "this generator was freed (free() or a using block released its memory)" };
    for (const call of [
      () => gen.next(),
      () => gen.nextString(),
      () => gen.nextBatch(3),
      () => gen.tryNext(),
      () => gen.decode(last),
    ]) {
      assert.throws(call, freed);
    }
    gen.setFenceMs(0); // a freed generator issues nothing: fencing it changes nothing
    assert.equal(gen.issuedThroughMs, through, "the high-water mark is kept for a release");
    assert.equal(gen.node, 3);
    gen.free(); // twice is fine
    // Other generators made afterwards reuse the memory: the freed one still refuses.
    const other = new Snowdrift({ node: 4 });
    assert.throws(() => gen.next(), freed);
    assert.equal(decode(other.next()).node, 4);
    other[Symbol.dispose]();
    assert.throws(() => other.next(), freed);
  });
});

describe("clock policies, driven by a custom clock", () => {
  test("fail: a backwards step throws an Error saying how far, and nothing changes", () => {
    const clock = manualClock(T0);
    const gen = new Snowdrift({ onClockBackwards: "fail", clock });
    const a = gen.next();
    clock.now = T0 - 37;
    throwsWith(() => gen.next(), Error, "backwards", "37 ms");
    throwsWith(() => gen.nextBatch(5), Error, "backwards", "37 ms");
    throwsWith(() => gen.tryNext(), Error, "backwards");
    clock.now = T0;
    assert.equal(gen.next(), a + 1n); // the same tick, the next sequence number
  });

  test("wait: waits for a clock that catches up within maxWaitMs", () => {
    const clock = manualClock(T0);
    const gen = new Snowdrift({ onClockBackwards: "wait", maxWaitMs: 10, clock });
    const a = gen.next();
    clock.now = T0 - 5;
    clock.step = 1; // the clock moves on by 1 ms per read
    const reads = clock.reads;
    const b = gen.next();
    assert.ok(b > a);
    assert.ok(clock.reads - reads >= 6, "it read the clock until it caught up");
    assert.ok(gen.decode(b).timeMs >= T0);
  });

  test("wait: a step larger than maxWaitMs throws at once", () => {
    const clock = manualClock(T0);
    const gen = new Snowdrift({ onClockBackwards: "wait", maxWaitMs: 3, clock });
    gen.next();
    clock.now = T0 - 10;
    throwsWith(() => gen.next(), Error, "backwards by 10 ms", "limit 3 ms");
  });

  test("wait: a used-up tick waits for the next one; tryNext never waits", () => {
    const clock = manualClock(T0);
    const gen = new Snowdrift({ onClockBackwards: "wait", clock });
    const ids = gen.nextBatch(4096); // the whole 12-bit sequence of tick T0
    assert.equal(gen.decode(ids[4095]).timeMs, T0);
    const reads = clock.reads;
    assert.equal(gen.tryNext(), undefined);
    assert.equal(clock.reads - reads, 1, "tryNext read the clock once and gave up");
    clock.step = 1;
    const next = gen.next();
    assert.equal(gen.decode(next).timeMs, T0 + 1);
    assert.ok(next > ids[4095]);
  });

  test("borrow: keeps increasing on a logical clock, up to maxAheadMs", () => {
    const clock = manualClock(T0);
    const gen = new Snowdrift({ onClockBackwards: "borrow", maxAheadMs: 100, clock });
    const a = gen.next();
    clock.now = T0 - 50;
    const b = gen.next();
    assert.ok(b > a);
    assert.equal(gen.decode(b).timeMs, T0); // stamped with the newest time used
    clock.now = T0 - 500; // more than twice maxAheadMs: no wait would catch up
    throwsWith(() => gen.next(), Error, "ahead", "limit 100 ms");
    clock.now = T0 + 1;
    assert.ok(gen.next() > b);
  });

  test("borrow (the default) under sustained load: at the bound it waits for the clock, never throws", () => {
    // A clock that moves 1 ms per 1,024 reads, and a loop asking for IDs as fast as it
    // can: four times the 4,096 per ms the layout allows, the lead reaches maxAheadMs
    // (20 ms here) and then each call waits about a millisecond.
    let reads = 0;
    const clock = () => T0 + Math.floor(reads++ / 1024);
    const gen = new Snowdrift({ maxAheadMs: 20, clock });
    let last = 0n;
    for (let i = 0; i < 200_000; i++) {
      const id = gen.next();
      assert.ok(id > last);
      last = id;
    }
    const ahead = gen.decode(last).timeMs - (T0 + Math.floor(reads / 1024));
    assert.ok(ahead <= 20, `the newest ID is ${ahead} ms ahead of the clock`);
    assert.ok(gen.decode(last).timeMs >= T0 + 48, "200,000 IDs need 49 ms of ID time");
    // tryNext at the bound: undefined (it would have to wait), never a throw.
    const frozen = (() => {
      const at = T0;
      return () => at;
    })();
    const still = new Snowdrift({ maxAheadMs: 2, clock: frozen });
    still.nextBatch(4096 * 3); // ticks T0, T0 + 1 and T0 + 2
    assert.equal(still.tryNext(), undefined);
  });

  test("a clock that throws, returns a non-number or a bad number: its error, nothing issued", () => {
    let reading = T0;
    const gen = new Snowdrift({ onClockBackwards: "fail", clock: () => reading });
    const a = gen.next();
    const boom = new Error("clock unavailable");
    reading = undefined;
    throwsWith(() => gen.next(), TypeError, "clock", "undefined");
    reading = NaN;
    throwsWith(() => gen.next(), RangeError, "clock", "NaN");
    reading = -1;
    throwsWith(() => gen.next(), RangeError, "clock", "-1");
    const throwing = new Snowdrift({
      clock: () => {
        throw boom;
      },
    });
    assert.throws(
      () => throwing.next(),
      (e) => e === boom,
    );
    reading = T0;
    assert.equal(gen.next(), a + 1n);
  });

  test("a clock before the layout's epoch is a RangeError naming the range", () => {
    const gen = new Snowdrift({ clock: () => 1000 });
    throwsWith(() => gen.next(), RangeError, "time 1000 ms", "outside the layout's range");
  });

  test("a clock that calls a generator gets an Error, and no ID is issued twice", () => {
    const seen = new Set();
    const other = new Snowdrift({ node: 8, clock: () => T0 });
    let callBack = true;
    const gen = new Snowdrift({
      node: 7,
      clock: () => {
        if (callBack) seen.add(gen.next());
        return T0;
      },
    });
    const sneaky = new Snowdrift({
      node: 9,
      clock: () => {
        if (callBack) other.nextBatch(3);
        return T0;
      },
    });
    throwsWith(() => gen.next(), Error, "a clock function must not call a snowdrift generator");
    throwsWith(() => gen.nextBatch(5), Error, "must not call");
    throwsWith(() => sneaky.nextBatch(5), Error, "must not call");
    assert.equal(seen.size, 0, "the inner calls issued nothing");
    callBack = false;
    for (const id of [gen.next(), ...gen.nextBatch(5), ...sneaky.nextBatch(5), ...other.nextBatch(5)]) {
      assert.ok(!seen.has(id), `${id} issued twice`);
      seen.add(id);
    }
    assert.equal(seen.size, 16);
  });
});

describe("a batch that fails changes nothing", () => {
  const T0 = 1_750_000_000_000;
  const layout = { timeBits: 41, nodeBits: 10, sequenceBits: 4, epochMs: 1_735_689_600_000 }; // 16 per ms

  /** Two generators in the same state: `probe` fails a batch, `twin` does not try it. */
  function twins(options, prepare) {
    const [probe, twin] = [0, 1].map(() => new Snowdrift({ layout, node: 3, ...options }));
    for (const g of [probe, twin]) prepare(g);
    return [probe, twin];
  }

  test("past the fence, across many buffer chunks: issuedThroughMs and the next IDs are as if it never ran", () => {
    // The fence 2 s ahead: 32,000 IDs fit; 300,000 do not.
    const clock = () => T0;
    const [probe, twin] = twins({ clock, maxAheadMs: 10_000 }, (g) => {
      g.setFenceMs(T0 + 2_000);
      g.nextBatch(5);
    });
    const before = probe.issuedThroughMs;
    assert.throws(() => probe.nextBatch(300_000), { message: /is not before the fence at 1750000002000 ms$/ });
    assert.equal(probe.issuedThroughMs, before);
    assert.deepEqual(probe.nextBatch(10), twin.nextBatch(10));
    assert.equal(probe.nextBatch(20_000).length, 20_000);
    assert.deepEqual(probe.next(), twin.nextBatch(20_001)[20_000]);
  });

  test("past the fence within one chunk (a batch over a few ticks)", () => {
    const clock = () => T0;
    const [probe, twin] = twins({ clock }, (g) => g.setFenceMs(T0 + 2));
    assert.throws(() => probe.nextBatch(40), { message: /is not before the fence/ });
    assert.equal(probe.issuedThroughMs, twin.issuedThroughMs);
    assert.deepEqual(probe.nextBatch(32), twin.nextBatch(32));
  });

  test('under "fail", a clock step back between chunks', () => {
    let now = T0;
    let reads = 0;
    // A clock that goes 5 s back after its first reads: the batch's later chunks see it.
    const clock = () => (reads++ > 3 ? now - 5_000 : now);
    const probe = new Snowdrift({ layout: "default", node: 3, onClockBackwards: "fail", clock });
    probe.next();
    const before = probe.issuedThroughMs;
    assert.throws(() => probe.nextBatch(50_000), { message: /clock moved backwards/ });
    assert.equal(probe.issuedThroughMs, before);
    reads = 0;
    now += 1;
    const after = probe.nextBatch(3);
    assert.equal(decode(after[0]).timeMs, T0 + 1, "the batch starts at the clock, not past the failed batch's ticks");
  });
});

describe("bad input: TypeError for wrong types, RangeError for bad values, state unchanged", () => {
  const ctor = [
    [{ node: 1024 }, RangeError, "1024", "0..=1023"],
    [{ node: -1 }, RangeError, "-1", "0..=1023"],
    [{ node: 1.5 }, RangeError, "1.5", "not an integer"],
    [{ node: NaN }, RangeError, "NaN"],
    [{ node: Infinity }, RangeError, "Infinity"],
    [{ node: "3" }, TypeError, "node", "number", '"3"'],
    [{ node: 3n }, TypeError, "node", "3n"],
    [{ layout: "nope" }, RangeError, '"nope"', "twitter"],
    [{ layout: 5 }, TypeError, "layout", "5"],
    [{ layout: { timeBits: 41, nodeBits: 12, sequenceBits: 12, epochMs: 0 } }, RangeError, "65 bits", "max 64"],
    [
      { layout: { timeBits: 62, sequenceBits: 1, unitMs: 2, epochMs: 2 } },
      RangeError,
      "invalid layout: epoch 2 ms is outside 0..=1 ms (the epochs a 62-bit time field of 2 ms ticks allows)",
    ],
    [
      { layout: { timeBits: 50, sequenceBits: 12, unitMs: 10000, epochMs: 0 } },
      RangeError,
      "invalid layout: the time field's 50 bits of 10000 ms ticks span 11258999068426230000 ms, so no epoch fits (max span 9223372036854775807 ms)",
    ],
    [{ layout: { timeBits: 41, nodeBits: 10, epochMs: 0 } }, TypeError, "sequenceBits"],
    [{ layout: { timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: 0, sequence: 1 } }, RangeError, '"sequence"'],
    [{ layout: { timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: 0, order: "up" } }, RangeError, '"up"'],
    [{ datacenter: 1 }, RangeError, "datacenter"],
    [{ layout: "twitter", datacenter: 32 }, RangeError, "32", "0..=31"],
    [{ layout: "twitter", worker: 40 }, RangeError, "40", "0..=31"],
    [{ layout: "twitter", node: 1, datacenter: 1, worker: 2 }, RangeError, "node 1", "34"],
    [{ onClockBackwards: "retry" }, RangeError, '"retry"', '"borrow"'],
    [{ onClockBackwards: 1 }, TypeError, "onClockBackwards"],
    [{ onClockBackwards: "wait", maxWaitMs: -1 }, RangeError, "-1", "0..=4294967295"],
    [{ onClockBackwards: "wait", maxWaitMs: "5" }, TypeError, "maxWaitMs"],
    [{ onClockBackwards: "borrow", maxWaitMs: 5 }, RangeError, "maxWaitMs", '"wait"'],
    [{ onClockBackwards: "fail", maxAheadMs: 5 }, RangeError, "maxAheadMs", '"borrow"'],
    [{ clock: 5 }, TypeError, "clock", "5"],
    [{ clock: Date.now() }, TypeError, "clock"],
    [{ resumeAfter: true }, TypeError, "resumeAfter", "bigint"],
    [{ resumeAfter: 2 ** 53 }, RangeError, "resumeAfter 9007199254740992", "lost precision"],
    [{ resumeAfter: -5 }, RangeError, "resumeAfter -5", "0..=9007199254740991"],
    [{ resumeAfter: -1n }, RangeError, "-1n", "18446744073709551615"],
    [{ resumeAfter: 1n << 64n }, RangeError, "18446744073709551616n"],
    [{ resumeAfter: "12x" }, RangeError, '"12x"', "position 2"],
    [{ resumeAfter: 1n << 63n }, RangeError, "9223372036854775808", "63 bits"],
    [{ nod: 3 }, RangeError, '"nod"', "node"],
    ["node 3", TypeError, "object"],
    [[], TypeError, "object"],
  ];
  for (const [options, type, ...pieces] of ctor) {
    test(`new Snowdrift(${JSON.stringify(options, (_key, v) => (typeof v === "bigint" ? `${v}n` : typeof v === "number" && !Number.isFinite(v) ? String(v) : v))}) throws ${type.name}`, () => {
      throwsWith(() => new Snowdrift(options), type, ...pieces);
    });
  }

  test("bad arguments to a generator's methods change nothing", () => {
    const gen = new Snowdrift({ node: 2, clock: () => T0 });
    let last = gen.next();
    const calls = [
      [() => gen.nextBatch(0), RangeError, "n 0", "1..=1048576"],
      [() => gen.nextBatch(1.5), RangeError, "1.5", "not an integer"],
      [() => gen.nextBatch(NaN), RangeError, "NaN"],
      [() => gen.nextBatch(2 ** 21), RangeError, "2097152"],
      [() => gen.nextBatch("10"), TypeError, "n", '"10"'],
      [() => gen.nextBatch(10n), TypeError, "n", "10n"],
      [() => gen.decode(-1n), RangeError, "-1n"],
      [() => gen.decode(1n << 64n), RangeError, "18446744073709551616n"],
      [() => gen.decode(1n << 63n), RangeError, "9223372036854775808", "63 bits"],
      [() => gen.decode("1e3"), RangeError, '"1e3"'],
      [() => gen.decode(""), RangeError, "empty"],
      [() => gen.decode(true), TypeError, "bigint", "number", "true"],
      [() => gen.decode(2 ** 53 + 2), RangeError, "9007199254740994", "above 2^53 - 1", "lost precision"],
      [() => gen.decode(1.5), RangeError, "id 1.5", "not an integer"],
      [() => gen.decode(null), TypeError, "null"],
    ];
    for (const [call, type, ...pieces] of calls) {
      throwsWith(call, type, ...pieces);
      const next = gen.next();
      assert.equal(next, last + 1n, "the generator went on exactly where it was");
      last = next;
    }
  });

  test("bad arguments to the functions and ObjectId", () => {
    const now = Date.now();
    const calls = [
      [() => decode(Symbol.iterator), TypeError, "bigint"],
      [() => decode(Number.MAX_VALUE), RangeError, "above 2^53 - 1"],
      [() => decode(-1n), RangeError, "-1n"],
      [() => decode(1n, "nope"), RangeError, '"nope"'],
      [() => decode(1n, { timeBits: 70, sequenceBits: 1, epochMs: 0 }), RangeError, "70", "0..=64"],
      [() => compose({ timeMs: 0 }), RangeError, "time 0 ms", "outside"],
      [() => compose({ timeMs: now, node: 1024 }), RangeError, "1024", "0..=1023"],
      [() => compose({ timeMs: now, sequence: 4096 }), RangeError, "sequence 4096", "max 4095"],
      [() => compose({ timeMs: "now" }), TypeError, "timeMs"],
      [() => compose({ node: 1 }), TypeError, "timeMs"],
      [() => compose(null), TypeError, "parts"],
      [() => toBase32({}), TypeError, "bigint"],
      [() => toBase32(-1), RangeError, "id -1", "0..=9007199254740991"],
      [() => toBase32(-1n), RangeError, "-1n"],
      [() => fromBase32(5), TypeError, "string"],
      [() => fromBase32("0000000000!00"), RangeError, "invalid character", "position 10"],
      [() => fromBase32("G000000000000"), RangeError, "does not fit in 64 bits"],
      [() => minIdAt("now"), TypeError, "timeMs"],
      [() => minIdAt(-1), RangeError, "-1"],
      [() => maxIdAt(1.5), RangeError, "1.5"],
      [() => maxIdAt(0), RangeError, "time 0 ms"],
      [() => ObjectId.parse(5), TypeError, "hex"],
      [() => ObjectId.parse("5c4a7fcc0ed0240001a7928"), RangeError, "wrong length", "23"],
      [() => ObjectId.parse("5c4a7fcc0ed0240001a7928g"), RangeError, "invalid character", "position 23"],
    ];
    for (const [call, type, ...pieces] of calls) throwsWith(call, type, ...pieces);
  });
});

describe("functions", () => {
  test("Parts: date is computed on read; JSON carries it, spreading does not", () => {
    const p = decode(175928847299117063n, "discord");
    assert.ok(p.date instanceof Date);
    assert.equal(p.date.toISOString(), "2016-04-30T11:18:25.796Z");
    assert.notEqual(p.date, p.date, "a new Date on each read: changing one changes no other");
    assert.deepEqual(Object.keys(p), ["timeMs", "node", "datacenter", "worker", "sequence"]);
    assert.equal(JSON.stringify(p), JSON.stringify(DISCORD_DOC_PARTS));
    assert.equal(
      JSON.stringify(decode(1n << 22n)),
      `{"timeMs":1704067200001,"date":"2024-01-01T00:00:00.001Z","node":0,"sequence":0}`,
    );
  });

  test("node and sequence fields wider than 31 bits decode exactly", () => {
    const wide = { timeBits: 10, nodeBits: 40, sequenceBits: 13, epochMs: 0 };
    for (const parts of [
      { timeMs: 5, node: 2 ** 40 - 1, sequence: 8191 },
      { timeMs: 1023, node: 2 ** 31, sequence: 0 },
    ]) {
      const p = decode(compose(parts, wide), wide);
      assert.deepEqual([p.timeMs, p.node, p.sequence], [parts.timeMs, parts.node, parts.sequence]);
    }
    const seq = { timeBits: 20, datacenterBits: 2, workerBits: 2, sequenceBits: 32, epochMs: 0 };
    const p = decode(compose({ timeMs: 1, datacenter: 3, worker: 2, sequence: 2 ** 32 - 1 }, seq), seq);
    assert.deepEqual([p.datacenter, p.worker, p.node, p.sequence], [3, 2, 14, 2 ** 32 - 1]);
  });

  test("minIdAt/maxIdAt bracket every ID of a millisecond; base32 sorts like the number", () => {
    const gen = new Snowdrift({ node: 1023, clock: () => T0 });
    const ids = gen.nextBatch(4096);
    assert.equal(minIdAt(T0), compose({ timeMs: T0, node: 0, sequence: 0 }));
    assert.ok(minIdAt(T0) <= ids[0] && ids[4095] <= maxIdAt(T0));
    assert.equal(maxIdAt(T0) + 1n, minIdAt(T0 + 1));
    const texts = Array.from(ids, toBase32);
    assert.deepEqual([...texts].sort(), texts);
    assert.equal(toBase32(0n), "0000000000000");
    assert.equal(toBase32((1n << 64n) - 1n), "FZZZZZZZZZZZZ");
  });

  test("ObjectId.generate: 24 hex digits, current time, same process bytes, counter + 1", () => {
    const before = Math.floor(Date.now() / 1000);
    const a = ObjectId.generate();
    const b = ObjectId.generate();
    const after = Math.floor(Date.now() / 1000);
    assert.match(a.toString(), /^[0-9a-f]{24}$/);
    assert.ok(a.timestamp >= before && a.timestamp <= after);
    assert.equal(a.toString().slice(8, 18), b.toString().slice(8, 18));
    const counter = (o) => parseInt(o.toString().slice(18), 16);
    assert.equal(counter(b), (counter(a) + 1) % 0x1000000);
    assert.equal(ObjectId.parse(a.toString()).toString(), a.toString());
    // Plain data: an ObjectId holds no wasm memory, so it has nothing to free or dispose.
    assert.equal(a.free, undefined);
    assert.equal(a[Symbol.dispose], undefined);
  });
});

describe("the snowdrift command", () => {
  const pkg = fileURLToPath(new URL("./node_modules/snowdrift/", import.meta.url));
  const bin = JSON.parse(readFileSync(`${pkg}package.json`)).bin.snowdrift;
  const cli = (...args) =>
    spawnSync(process.execPath, [`${pkg}${bin}`, ...args], { encoding: "utf8", timeout: 60_000 });

  test("decode prints the parts, as text or JSON", () => {
    const json = cli("decode", "175928847299117063", "--layout", "discord", "--json");
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), {
      id: "175928847299117063",
      ...DISCORD_DOC_PARTS,
      base32: "04W86BB0G4007",
    });
    const text = cli("decode", "04W86BB0G4007", "--layout", "discord");
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /timeMs\s+1462015105796/);
    assert.match(text.stdout, /worker\s+0/);
  });

  test("decode reads every form the page reads: hex, hyphenated base32, a signed 64-bit column's negative", () => {
    const parts = (...args) => {
      const r = cli("decode", ...args, "--json");
      assert.equal(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    const want = parts("175928847299117063", "--layout", "discord");
    assert.deepEqual(parts("0x0271065ac1020007", "--layout", "discord"), want);
    assert.deepEqual(parts("0271065AC1020007", "--layout", "discord"), want);
    assert.deepEqual(parts("04W86-BB0G4-007", "--layout", "discord"), want);
    // -5 is the 64 bits that a signed BIGINT column shows as -5 (a 64-bit layout's ID).
    assert.equal(parts("-5", "--layout", "discord").id, String((1n << 64n) - 5n));
    // Too wide for a 63-bit layout: the error names the 64 bits it read.
    const negative = cli("decode", "-5");
    assert.equal(negative.status, 2, negative.stdout);
    assert.match(negative.stderr, /id 18446744073709551611 does not fit the layout's 63 bits/);
  });

  test("layout prints what layoutInfo says, as text or JSON", () => {
    const json = cli("layout", "discord", "--json");
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), {
      ...layoutInfo("discord"),
      exhaustsAt: new Date(layoutInfo("discord").exhaustsAtMs).toISOString(),
    });
    const text = cli("layout", "--layout", "sonyflake");
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /order\s+sequence-node/);
    assert.match(text.stdout, /unitMs\s+10\n/);
  });

  test("js53: decode of an ID a Number holds, and layout, as the vectors say", () => {
    const v = vectors("ids.json").ids.find((x) => x.layout === "js53" && x.node > 0 && x.sequence > 0);
    const r = cli("decode", v.id, "--layout", "js53", "--json");
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout);
    assert.deepEqual([got.id, got.timeMs, got.node, got.sequence], [v.id, v.timeMs, v.node, v.sequence]);
    const info = cli("layout", "js53", "--json");
    assert.equal(info.status, 0, info.stderr);
    const { totalBits, unitMs, maxNode, maxSequence } = JSON.parse(info.stdout);
    assert.deepEqual(
      { totalBits, unitMs, maxNode, maxSequence },
      { totalBits: 53, unitMs: 10, maxNode: 127, maxSequence: 255 },
    );
    const gen = cli("generate", "-n", "3", "--node", "127", "--layout", "js53");
    assert.equal(gen.status, 0, gen.stderr);
    for (const id of gen.stdout.trim().split("\n")) {
      assert.ok(Number.isSafeInteger(Number(id)) && String(Number(id)) === id, id);
      assert.equal(decode(Number(id), "js53").node, 127);
    }
  });

  test("generate prints increasing IDs of the node and layout asked for", () => {
    const r = cli("generate", "-n", "10", "--node", "3", "--layout", "twitter");
    assert.equal(r.status, 0, r.stderr);
    const ids = r.stdout.trim().split("\n").map(BigInt);
    assert.equal(ids.length, 10);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
    for (const id of ids) assert.equal(decode(id, "twitter").node, 3);
  });

  test("--help prints the usage, naming exactly the preset layouts of the vectors", () => {
    for (const flag of ["--help", "-h", "help"]) {
      const r = cli(flag);
      assert.equal(r.status, 0, `${flag}: ${r.stderr}`);
      assert.match(r.stdout, /^usage:\n {2}snowdrift decode/, flag);
    }
    // decode's line names every form parseId reads.
    const help = cli("--help").stdout;
    for (const form of ["decimal", "negative", "hex", "base32", "hyphens"]) assert.ok(help.includes(form), form);
    const listed = cli("--help")
      .stdout.match(/^layouts: (.*), or a JSON object$/m)?.[1]
      .split(", ");
    assert.deepEqual(listed?.sort(), Object.keys(vectors("ids.json").layouts).sort());
  });

  test("bad input: exit status 2 and the reason, no stack trace", () => {
    for (const [args, reason] of [
      [["decode", "12x"], '"12x" is not decimal, hex (0x…) or base32 (13 characters)'],
      [["decode", "0x1234567890abcdef0"], "is not 1 to 16 hex digits"],
      [["decode", "-9223372036854775809"], "below the smallest signed 64-bit number"],
      [["decode", "1", "--layout", "nope"], '"nope"'],
      [["decode", "9007199254740992", "--layout", "js53"], "does not fit the layout's 53 bits"],
      [["generate", "--node", "5000"], "5000"],
      [["frobnicate"], "unknown command"],
    ]) {
      const r = cli(...args);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stdout}`);
      assert.ok(r.stderr.includes(reason), r.stderr);
      assert.ok(!r.stderr.includes("    at "), r.stderr);
    }
  });
});

// One instance per process whichever comes first: the ES module entry and the CommonJS one
// give the same classes, for the main entry and snowdrift/seal.
for (const [entry, names] of [
  ["snowdrift", ["Snowdrift", "ObjectId", "decode"]],
  ["snowdrift/seal", ["Sealer"]],
]) {
  for (const first of ["import", "require"]) {
    test(`${entry}: ${first} first, then the other, give one instance`, () => {
      const script = `
        import { createRequire } from "node:module";
        const require = createRequire(import.meta.url);
        const load = { import: () => import(${JSON.stringify(entry)}), require: async () => require(${JSON.stringify(entry)}) };
        const a = await load[${JSON.stringify(first)}]();
        const b = await load[${JSON.stringify(first === "import" ? "require" : "import")}]();
        console.log(JSON.stringify(${JSON.stringify(names)}.map((n) => typeof a[n] === "function" && a[n] === b[n])));
      `;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        cwd: fileURLToPath(new URL(".", import.meta.url)),
        encoding: "utf8",
      });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(
        JSON.parse(r.stdout),
        names.map(() => true),
      );
    });
  }
}
