// The npm package's benchmark: snowdrift against the JS ID generators people use, a floor
// (floor.wat: wasm returning Date.now() as an i64) and Date.now() itself, all in this one
// Node process. Prints a table per operation with ratios; no thresholds.
//
// Cost per ID is measured *below* the layout's ceiling (4,096 IDs per ms): each timed
// burst starts on a fresh millisecond and makes at most 1,000 IDs (one nextBatch(4096)),
// so what is timed is the work of a call, not waiting for the clock. The rows of a table
// are measured in turns (one burst of each per round) and report their median burst, so
// load from other work on a shared machine hits them alike. Sustained throughput (IDs
// in 1 s, ceiling included) is a row of its own.
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { Snowdrift, decode, compose, toBase32, fromBase32 } from "snowdrift";
import { Snowflake as Sapphire } from "@sapphire/snowflake";
import { Snowflake as NodejsSnowflake } from "nodejs-snowflake";
import { v7 as uuidv7 } from "uuid";
import { ulid } from "ulid";
import { ObjectId } from "bson";
import { floor, decodeFloor } from "./floor.mjs";
import { Sealer } from "snowdrift/seal";
import { FF1 } from "@noble/ciphers/ff1.js";

const require = createRequire(import.meta.url);
const FlakeId = require("flake-idgen");

const EPOCH = 1704067200000; // snowdrift's default epoch, given to every peer
const BURST = 1000;
const TIME_MS = Number(process.env.BENCH_MS || 400);
const out = new Array(BURST);

function waitForNextMs() {
  const t = Date.now();
  while (Date.now() === t);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * ns per call (or per ID) of each row `[name, fn, { burst, perCallIds, inputs }?]`,
 * measured in turns: every round runs one burst of each row, so a change of load on a
 * shared machine hits all rows alike. Each row reports its median burst, and its ratio to
 * the `base` row as the median of the ratios within a round (a round's rows ran within
 * milliseconds of each other, so a slow spell of the machine cancels out). A burst is
 * `burst` calls; without `inputs` it starts on a fresh millisecond (calls that read the
 * clock), with `inputs` call i gets `inputs[i % n]` (calls that do not).
 */
function inTurns(rows, base) {
  const samples = rows.map(() => []);
  const run = (fn, { burst = BURST, inputs } = {}) => {
    if (!inputs) waitForNextMs();
    const t0 = process.hrtime.bigint();
    if (inputs) {
      const n = inputs.length;
      for (let i = 0; i < burst; i++) out[i] = fn(inputs[i % n]);
    } else {
      for (let i = 0; i < burst; i++) out[i] = fn();
    }
    return Number(process.hrtime.bigint() - t0);
  };
  // The first 100 ms warm up and are not counted.
  const warm = Date.now() + 100;
  while (Date.now() < warm) for (const [, fn, o] of rows) run(fn, o);
  const end = Date.now() + TIME_MS * rows.length;
  while (Date.now() < end) {
    for (const [i, [, fn, o]] of rows.entries()) samples[i].push(run(fn, o));
  }
  const perId = (ns, o) => ns / (o?.burst ?? BURST) / (o?.perCallIds ?? 1);
  const b = rows.findIndex(([name]) => name === base);
  return rows.map(([name, , o], i) => ({
    name,
    ns: perId(median(samples[i]), o),
    ratio: median(samples[i].map((ns, k) => perId(ns, o) / perId(samples[b][k], rows[b][2]))),
  }));
}

/** IDs in 1 s of back-to-back calls, and how many were not above the one before. */
function sustained(fn, key = (x) => x) {
  let count = 0;
  let notAbove = 0;
  let prev = key(fn());
  let error = "";
  const end = Date.now() + 1000;
  try {
    while (Date.now() < end) {
      for (let i = 0; i < 256; i++) {
        const k = key(fn());
        if (k <= prev) notAbove++;
        prev = k;
      }
      count += 256;
    }
  } catch (e) {
    error = e.message;
  }
  return { count, notAbove, error };
}

const fmt = (ns) => (ns < 10 ? ns.toFixed(2) : ns.toFixed(1)).padStart(8);
/** Measures and prints a table; returns each row's ns per ID, and its ratio to `base`. */
function table(title, rows, base) {
  rows = inTurns(rows, base);
  console.log(`\n${title}`);
  console.log(`  ${"".padEnd(44)}${"ns/ID".padStart(8)}  ${`x ${base}`.padStart(14)}`);
  for (const { name, ns, ratio } of rows) {
    console.log(`  ${name.padEnd(44)}${fmt(ns)}  ${ratio.toFixed(2).padStart(14)}`);
  }
  return {
    ns: Object.fromEntries(rows.map((r) => [r.name, r.ns])),
    ratio: Object.fromEntries(rows.map((r) => [r.name, r.ratio])),
  };
}

// --- generators --------------------------------------------------------------------
const sd = new Snowdrift({ node: 1 });
const sdWait = new Snowdrift({ node: 2, onClockBackwards: "wait" });
const sdSustained = new Snowdrift({ node: 3 });
const sdBatch = new Snowdrift({ node: 4, onClockBackwards: "wait" });
const floorNext = floor();
const sapphire = new Sapphire(EPOCH);
const nodejsSnowflake = new NodejsSnowflake({ custom_epoch: EPOCH, instance_id: 1 });
const flake = new FlakeId({ epoch: EPOCH });
// A hand-written JS BigInt snowflake (no clock policy, no checks): the reference for what
// plain JS costs.
let jsLast = 0,
  jsSeq = 0;
const jsBigInt = () => {
  const now = Date.now();
  if (now === jsLast) jsSeq = (jsSeq + 1) & 4095;
  else {
    jsLast = now;
    jsSeq = 0;
  }
  return (BigInt(now - EPOCH) << 22n) | (1n << 12n) | BigInt(jsSeq);
};

console.log(`snowdrift npm package benchmark: Node ${process.version}, ${process.platform}-${process.arch}`);

const next = table(
  "next(): one ID (bursts of 1,000 on a fresh millisecond)",
  [
    ["floor: wasm i64 from imported Date.now", floorNext],
    ["Date.now() alone", Date.now],
    ["snowdrift next()", () => sd.next()],
    ['snowdrift next(), onClockBackwards: "wait"', () => sdWait.next()],
    ["JS BigInt by hand (reference)", jsBigInt],
    ["@sapphire/snowflake generate()", () => sapphire.generate()],
    ["nodejs-snowflake getUniqueID()", () => nodejsSnowflake.getUniqueID()],
    ["flake-idgen next() (Buffer)", () => flake.next()],
    ["uuid v7()", () => uuidv7()],
    ["ulid()", () => ulid()],
    ["bson new ObjectId()", () => new ObjectId()],
  ],
  "floor: wasm i64 from imported Date.now",
);

table(
  "nextString(): one ID as a decimal string",
  [
    ["snowdrift nextString()", () => sd.nextString()],
    ["snowdrift String(next())", () => String(sd.next())],
    ["@sapphire/snowflake generate().toString()", () => sapphire.generate().toString()],
    ["nodejs-snowflake getUniqueID().toString()", () => nodejsSnowflake.getUniqueID().toString()],
  ],
  "snowdrift nextString()",
);

const batch = table(
  "nextBatch(4096), per ID (one batch per fresh millisecond)",
  [
    ["snowdrift nextBatch(4096)", () => sdBatch.nextBatch(4096), { burst: 1, perCallIds: 4096 }],
    ["snowdrift next() x 1000", () => sd.next()],
  ],
  "snowdrift nextBatch(4096)",
);

const ids = Array.from(sd.nextBatch(4096));
const sapphireIds = Array.from({ length: 4096 }, () => sapphire.generate());
const texts = ids.map(toBase32);
const discordIds = ids.map((id) => compose(decode(id), "discord"));
const wasmCall = decodeFloor();
const fields = new Float64Array([1461996000000, 32, 1, 0, 7]);
function FloorParts(timeMs, node, datacenter, worker, sequence) {
  this.timeMs = timeMs;
  this.node = node;
  this.datacenter = datacenter;
  this.worker = worker;
  this.sequence = sequence;
}
const dec = table(
  "decode(id) -> parts",
  [
    ["snowdrift decode(id)", (id) => decode(id), { inputs: ids }],
    ['snowdrift decode(id, "discord")', (id) => decode(id, "discord"), { inputs: discordIds }],
    ["snowdrift gen.decode(id)", (id) => sd.decode(id), { inputs: ids }],
    ["@sapphire/snowflake deconstruct(id)", (id) => sapphire.deconstruct(id), { inputs: sapphireIds }],
    [
      "nodejs-snowflake timestampFromID + instanceIDFromID",
      (id) => [NodejsSnowflake.timestampFromID(id, EPOCH), NodejsSnowflake.instanceIDFromID(id)],
      { inputs: ids },
    ],
    [
      "JS BigInt by hand (reference)",
      (id) => ({ timeMs: Number(id >> 22n) + EPOCH, node: Number((id >> 12n) & 1023n), sequence: Number(id & 4095n) }),
      { inputs: ids },
    ],
  ],
  "snowdrift decode(id)",
);

// The floor of any wasm decode that returns an object: the call with the bigint alone,
// then the call plus a five-field object read from a Float64Array (as decode does). A
// table of its own: measured in turns with the decode rows, it slows them down.
const decFloor = table(
  "decode floor (references)",
  [
    ["wasm call taking the bigint", (id) => wasmCall(1, id), { inputs: ids }],
    [
      "that call + a 5-field object",
      (id) =>
        wasmCall(1, id) === 2
          ? new FloorParts(fields[0], fields[1] | 0, fields[2] | 0, fields[3] | 0, fields[4] | 0)
          : null,
      { inputs: ids },
    ],
  ],
  "wasm call taking the bigint",
);

table(
  "base32 (Crockford, 13 characters)",
  [
    ["snowdrift toBase32(id)", (id) => toBase32(id), { inputs: ids }],
    ["snowdrift fromBase32(text)", (t) => fromBase32(t), { inputs: texts }],
    ["BigInt#toString(32) (reference, not Crockford)", (id) => id.toString(32), { inputs: ids }],
    ["BigInt(decimal string) (reference)", (s) => BigInt(s), { inputs: ids.map(String) }],
  ],
  "snowdrift toBase32(id)",
);

// Sealed IDs: snowdrift/seal against @noble/ciphers' FF1 (radix 2, 63 numerals, most
// significant bit first), the same AES-128 key, tweak and IDs; bigint in, bigint out for
// both (noble works on arrays of digits: the conversions are part of its row).
const sealKey = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
const sealTweak = Uint8Array.of(0x6b, 0x31);
const sealer = new Sealer(sealKey, { layout: "default", tweak: sealTweak });
const nobleFf1 = FF1(2, sealKey, sealTweak);
const toBits = (x) => Array.from({ length: 63 }, (_, i) => Number((x >> BigInt(62 - i)) & 1n));
const fromBits = (d) => d.reduce((v, b) => (v << 1n) | BigInt(b), 0n);
const sealIds = ids.slice(0, 256);
for (const id of sealIds.slice(0, 8)) {
  if (fromBits(nobleFf1.encrypt(toBits(id))) !== sealer.seal(id)) throw new Error(`seal(${id}) differs from noble`);
}
const sealedIds = sealIds.map((id) => sealer.seal(id));
const publicIds = sealIds.map((id) => sealer.sealString(id));
const seal = table(
  "sealed IDs: FF1 over AES-128, 63 bits (bursts of 100)",
  [
    ["snowdrift/seal seal(id)", (id) => sealer.seal(id), { inputs: sealIds, burst: 100 }],
    ["snowdrift/seal open(sealed)", (x) => sealer.open(x), { inputs: sealedIds, burst: 100 }],
    ['snowdrift/seal sealString(id) ("base62")', (id) => sealer.sealString(id), { inputs: sealIds, burst: 100 }],
    ["snowdrift/seal openString(text)", (t) => sealer.openString(t), { inputs: publicIds, burst: 100 }],
    ["@noble/ciphers FF1(2) encrypt", (id) => fromBits(nobleFf1.encrypt(toBits(id))), { inputs: sealIds, burst: 100 }],
    ["@noble/ciphers FF1(2) decrypt", (x) => fromBits(nobleFf1.decrypt(toBits(x))), { inputs: sealedIds, burst: 100 }],
  ],
  "@noble/ciphers FF1(2) encrypt",
);

console.log("\nsustained: IDs in 1 s of back-to-back next() (layout ceiling 4,096,000/s)");
for (const [name, fn, key] of [
  ['snowdrift, onClockBackwards: "wait"', () => sdWait.next()],
  ['snowdrift, default ("borrow", 1000 ms ahead)', () => sdSustained.next()],
  ["@sapphire/snowflake", () => sapphire.generate()],
  ["nodejs-snowflake", () => nodejsSnowflake.getUniqueID()],
  ["flake-idgen", () => flake.next(), (b) => b.readBigUInt64BE()],
]) {
  const r = sustained(fn, key);
  console.log(
    `  ${name.padEnd(44)}${String(r.count).padStart(10)} IDs  ${String(r.notAbove).padStart(9)} not above the previous${r.error ? `  (stopped: ${r.error})` : ""}`,
  );
}

// What a page downloads: the browser entry, the files it imports (followed from their
// text), and the wasm.
const pkgDir = new URL("./node_modules/snowdrift/", import.meta.url);
const browserFiles = ["index.js"];
for (let i = 0; i < browserFiles.length; i++) {
  const text = readFileSync(new URL(browserFiles[i], pkgDir), "utf8");
  for (const [, file] of text.matchAll(/\bfrom\s*["']\.\/([^"']+)["']/g)) {
    if (!browserFiles.includes(file)) browserFiles.push(file);
  }
}
browserFiles.push("snowdrift.wasm");
let raw = 0,
  gz = 0;
console.log("\npackage size: the browser entry (what a page downloads)");
for (const f of browserFiles) {
  const bytes = readFileSync(new URL(f, pkgDir));
  const g = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gz += g;
  console.log(`  ${f.padEnd(44)}${String(bytes.length).padStart(8)} B raw ${String(g).padStart(8)} B gzip`);
}
console.log(`  ${"total".padEnd(44)}${String(raw).padStart(8)} B raw ${String(gz).padStart(8)} B gzip`);
// snowdrift/seal's own files, loaded only by a page that imports it.
let sealEntry = 0;
for (const f of ["seal.js", "seal.wasm"]) {
  const bytes = readFileSync(new URL(f, pkgDir));
  const g = gzipSync(bytes, { level: 9 }).length;
  sealEntry += g;
  console.log(
    `  ${`snowdrift/seal: ${f}`.padEnd(44)}${String(bytes.length).padStart(8)} B raw ${String(g).padStart(8)} B gzip`,
  );
}

// Cold start: import to first ID, each in a fresh Node process (cold-start.mjs), the
// contenders in turn round after round so a slow spell of the machine hits them alike.
// Each row's ratio is the median of its ratios within a round.
const COLD_ROUNDS = Number(process.env.COLD_ROUNDS || 41);
const cold = ["@sapphire/snowflake", "snowdrift", "snowdrift/seal", "floor"];
const coldMs = cold.map(() => []);
const coldStart = (which) =>
  Number(execFileSync(process.execPath, ["cold-start.mjs", which], { cwd: import.meta.dirname, encoding: "utf8" }));
for (let round = 0; round < COLD_ROUNDS; round++) {
  for (const [i, which] of cold.entries()) coldMs[i].push(coldStart(which));
}
const coldRatio = (row, base) => median(coldMs[row].map((ms, k) => ms / coldMs[base][k]));
console.log(`\ncold start: import to first ID, a fresh Node process each (median of ${COLD_ROUNDS} rounds)`);
console.log(`  ${"".padEnd(44)}${"ms".padStart(8)}  ${"x sapphire".padStart(14)}`);
for (const [i, name] of [
  "@sapphire/snowflake: import, generate()",
  "snowdrift: import, new Snowdrift, next()",
  "snowdrift/seal: import, new Sealer, seal()",
  "floor: sapphire's + a tiny wasm module",
].entries()) {
  console.log(
    `  ${name.padEnd(44)}${median(coldMs[i]).toFixed(2).padStart(8)}  ${coldRatio(i, 0).toFixed(2).padStart(14)}`,
  );
}

const verdict = (ok) => (ok ? "met" : "NOT met");
const sdRatio = next.ratio["snowdrift next()"];
const over = (peer) => next.ratio[peer] / sdRatio; // how many times slower the peer is
console.log("\ntargets");
console.log(`  next() within 1.10x of the floor: ${sdRatio.toFixed(2)}x, ${verdict(sdRatio <= 1.1)}`);
for (const [name, row] of [
  ["@sapphire/snowflake", "@sapphire/snowflake generate()"],
  ["nodejs-snowflake", "nodejs-snowflake getUniqueID()"],
]) {
  console.log(`  next() >= 2x faster than ${name}: ${over(row).toFixed(2)}x, ${verdict(over(row) >= 2)}`);
}
const batchNs = batch.ns["snowdrift nextBatch(4096)"];
console.log(`  nextBatch <= 3 ns per ID: ${batchNs.toFixed(2)} ns, ${verdict(batchNs <= 3)}`);
for (const row of ["snowdrift decode(id)", 'snowdrift decode(id, "discord")']) {
  console.log(`  ${row.slice(10)} <= 15 ns: ${dec.ns[row].toFixed(1)} ns, ${verdict(dec.ns[row] <= 15)}`);
}
const decodeFloorNs = decFloor.ns["that call + a 5-field object"];
console.log(
  `    (a wasm call taking the bigint and a 5-field object alone: ${decodeFloorNs.toFixed(1)} ns; decode(id) is ${(dec.ns["snowdrift decode(id)"] / decodeFloorNs).toFixed(2)}x that)`,
);
console.log(`  browser entry <= 10 KB gzip: ${(gz / 1024).toFixed(1)} KB, ${verdict(gz <= 10 * 1024)}`);
const coldMain = coldRatio(1, 0);
const coldSeal = coldRatio(2, 1);
console.log(
  `  import to first ID <= 1.2x @sapphire/snowflake's: ${coldMain.toFixed(2)}x, ${verdict(coldMain <= 1.2)} (floor, sapphire's plus a wasm module compiled and called: ${coldRatio(3, 0).toFixed(2)}x)`,
);
console.log(
  `  snowdrift/seal import to first sealed ID <= 1.2x the main entry's: ${coldSeal.toFixed(2)}x, ${verdict(coldSeal <= 1.2)}`,
);
const sealRatio = seal.ratio["snowdrift/seal seal(id)"];
const openRatio = seal.ratio["snowdrift/seal open(sealed)"] / seal.ratio["@noble/ciphers FF1(2) decrypt"];
console.log(
  `  seal(id) <= 0.5x @noble/ciphers FF1 encrypt: ${sealRatio.toFixed(3)}x, ${verdict(sealRatio <= 0.5)} (open vs decrypt: ${openRatio.toFixed(3)}x)`,
);
console.log(
  `  the default entry carries no sealing: ${browserFiles.some((f) => f.startsWith("seal")) ? "NOT met" : "met"} (snowdrift/seal: ${sealEntry} B gzip of its own)`,
);
