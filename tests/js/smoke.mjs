// The smoke test every runtime runs: 100k IDs, strictly increasing, each decoded and
// round-tripped through base32, and two ObjectIds. Throws on the first problem; returns a
// summary.
export function smoke({ Snowdrift, ObjectId, decode, toBase32, fromBase32 }, runtime) {
  const N = 100_000;
  const NODE = 5;
  const gen = new Snowdrift({ node: NODE });
  const start = Date.now();
  const ids = new Array(N);
  let prev = -1n;
  for (let i = 0; i < N; i++) {
    const id = gen.next();
    if (typeof id !== "bigint") throw new Error(`next() returned a ${typeof id}`);
    if (id <= prev) throw new Error(`ID ${i} (${id}) is not above ID ${i - 1} (${prev})`);
    ids[i] = id;
    prev = id;
  }
  const end = Date.now();
  let prevText = "";
  for (let i = 0; i < N; i++) {
    const id = ids[i];
    const p = decode(id);
    if (p.node !== NODE) throw new Error(`ID ${id} decodes to node ${p.node}`);
    // The default policy may run up to 1 s ahead of a clock that does not move
    // (workerd's stays put during a request).
    if (p.timeMs < start - 1 || p.timeMs > end + 1000) {
      throw new Error(`ID ${id} decodes to ${p.timeMs}, outside ${start}..${end}`);
    }
    if (!(p.date instanceof Date) || p.date.getTime() !== p.timeMs) {
      throw new Error(`ID ${id}: date ${p.date} does not match timeMs`);
    }
    const text = toBase32(id);
    if (text.length !== 13 || fromBase32(text) !== id) throw new Error(`base32 round trip of ${id} gave ${text}`);
    if (text <= prevText) throw new Error(`base32 of ${id} (${text}) does not sort after ${prevText}`);
    prevText = text;
  }
  // A failed next() throws from inside the wasm, through this runtime's engine, and
  // changes nothing: the generator goes on after it.
  let t = 1_750_000_000_000;
  const stepped = new Snowdrift({ node: NODE, onClockBackwards: "fail", clock: () => t });
  const before = stepped.next();
  t -= 5;
  let thrown;
  try {
    stepped.next();
  } catch (e) {
    thrown = e;
  }
  if (!(thrown instanceof Error) || !thrown.message.includes("clock moved backwards by 5 ms")) {
    throw new Error(`a clock step back gave ${thrown} instead of the core's error`);
  }
  t += 5;
  if (stepped.next() !== before + 1n) throw new Error("the generator did not go on after the error");
  // ObjectIds take their process bytes from crypto.getRandomValues in this runtime.
  const [a, b] = [ObjectId.generate().toString(), ObjectId.generate().toString()];
  if (!/^[0-9a-f]{24}$/.test(a) || a.slice(8, 18) !== b.slice(8, 18) || a === b) {
    throw new Error(`ObjectIds ${a} and ${b}: not 24 hex digits from one process`);
  }
  return { runtime, count: N, first: ids[0].toString(), last: prev.toString() };
}
