// Checks of the wasm binding itself (the exports, the JS API over them, errors crossing
// the boundary), run against the real package in Node (binding.test.mjs) and in headless
// Chromium (smoke-browser.mjs): the shared vectors decode, compose and format; bad input
// becomes TypeError/RangeError with the core's message; a JS clock drives a generator and
// "fail" reports a step back; batches and ObjectIds. Throws on the first problem.
export function binding({ Snowdrift, ObjectId, decode, compose, toBase32, fromBase32 }, vectors) {
  const check = (ok, what) => {
    if (!ok) throw new Error(`binding: ${what}`);
  };
  const throws = (fn, type, message) => {
    try {
      fn();
    } catch (e) {
      check(e.constructor === type, `expected a ${type.name}, got ${e.constructor.name}: ${e.message}`);
      check(e.message.includes(message), `"${e.message}" should mention "${message}"`);
      return;
    }
    throw new Error(`binding: expected a ${type.name} mentioning "${message}"`);
  };

  check(vectors.ids.length > 0, "the vectors have IDs");
  for (const v of vectors.ids) {
    const id = BigInt(v.id);
    const p = decode(id, v.layout);
    const where = `${v.layout} ${v.id}`;
    check(p.timeMs === v.timeMs && p.date.getTime() === v.timeMs, `${where}: time ${p.timeMs}`);
    check(p.node === v.node && p.sequence === v.sequence, `${where}: node ${p.node}, sequence ${p.sequence}`);
    check(p.datacenter === (v.datacenter ?? undefined) && p.worker === (v.worker ?? undefined), `${where}: split`);
    check(compose(p, v.layout) === id, `${where}: compose`);
    check(toBase32(id) === v.text.base32 && fromBase32(v.text.base32) === id, `${where}: base32`);
    // An ID a Number holds exactly (every js53 ID) is taken as a number too.
    if (id <= BigInt(Number.MAX_SAFE_INTEGER)) {
      const n = decode(Number(v.id), v.layout);
      check(n.timeMs === p.timeMs && n.node === p.node && n.sequence === p.sequence, `${where}: as a number`);
    }
  }
  check(
    vectors.ids.some((v) => v.layout === "js53"),
    "the vectors have js53 IDs",
  );
  const js53 = new Snowdrift({ layout: "js53", node: 9, clock: () => 1_750_000_000_000 });
  const first = js53.nextNumber();
  check(typeof first === "number" && js53.next() === BigInt(first) + 1n, "nextNumber() on js53: a Number, then next()");
  check(js53.decode(first).node === 9, "a js53 Number decodes");

  throws(() => new Snowdrift({ node: 1024 }), RangeError, "0..=1023");
  throws(() => new Snowdrift({ node: "1" }), TypeError, "node must be a number");
  throws(() => decode(true), TypeError, "bigint");
  throws(() => decode(2 ** 53), RangeError, "above 2^53 - 1 (9007199254740991)");
  throws(() => new Snowdrift().nextNumber(), RangeError, "this layout takes 63 bits");
  throws(() => decode(1n << 64n), RangeError, "18446744073709551616n");
  throws(
    () => fromBase32("0000000000!00"),
    RangeError,
    "invalid base32 id \"0000000000!00\": invalid character '!' at position 10",
  );
  // 12 characters, 13 bytes: the position is a byte offset.
  throws(() => fromBase32("000000000é00"), RangeError, "invalid character 'é' (U+00E9) at position 9");
  throws(
    () => new Snowdrift({ layout: { timeBits: 41, nodeBits: 12, sequenceBits: 12, epochMs: 0 } }),
    RangeError,
    "invalid layout: the fields take 65 bits (max 64)",
  );

  let now = 1.75e12;
  const gen = new Snowdrift({ onClockBackwards: "fail", node: 5, clock: () => now });
  const a = gen.next();
  const b = gen.next();
  check(b === a + 1n, "two IDs in one millisecond are consecutive");
  const parts = gen.decode(a);
  check(parts.timeMs === 1.75e12 && parts.node === 5, "gen.decode");
  now -= 37;
  throws(() => gen.next(), Error, "clock moved backwards by 37 ms (limit 0 ms)");
  now += 37;
  check(gen.next() === b + 1n, "after a failed call the generator goes on where it was");
  gen.free();
  gen.free(); // a second free does nothing
  throws(() => gen.next(), Error, "this generator was freed"); // never freed wasm memory

  // A failed next() throws from inside the wasm (it records the error, then calls the
  // JS hook that throws it). 100,000 failures must leave the module as they found it: a
  // frame left on the wasm's shadow stack by each would run the 1 MB stack out long before.
  const fenced = new Snowdrift({ node: 6, clock: () => now });
  fenced.setFenceMs(now);
  let failures = 0;
  for (let i = 0; i < 100_000; i++) {
    try {
      fenced.next();
    } catch (e) {
      if (e.message.includes("is not before the fence")) failures++;
    }
  }
  check(failures === 100_000, `100,000 fenced next() calls throw the fence error (${failures} did)`);
  fenced.setFenceMs(now + 1);
  check(fenced.next() === compose({ timeMs: now, node: 6, sequence: 0 }), "after them, the fenced generator goes on");
  const other = new Snowdrift({ node: 7, clock: () => now });
  check(other.next() === compose({ timeMs: now, node: 7, sequence: 0 }), "and a new one starts as it should");

  // IDs with the top bit set (discord in 2154) cross as unsigned bigints.
  const high = new Snowdrift({ layout: "discord", clock: () => 4_000_000_000_000 });
  check(high.next() > 1n << 63n, "an ID above 2^63 is positive");

  const def = new Snowdrift();
  let last = def.next();
  const batch = def.nextBatch(10_000);
  check(batch.length === 10_000, "nextBatch(10000) has 10,000 IDs");
  for (const id of batch) {
    check(id > last, "batch IDs increase");
    last = id;
  }
  check(BigInt(def.nextString()) > last, "nextString continues the batch");

  const x = ObjectId.generate().toString();
  const y = ObjectId.generate().toString();
  check(/^[0-9a-f]{24}$/.test(x) && x.slice(8, 18) === y.slice(8, 18), "ObjectId process bytes");
  check(parseInt(y.slice(18), 16) === (parseInt(x.slice(18), 16) + 1) % 0x1000000, "ObjectId counter");
  check(ObjectId.parse("5c4a7fcc0ed0240001a79289").timestamp === 1_548_386_252, "ObjectId.parse");
  return true;
}
