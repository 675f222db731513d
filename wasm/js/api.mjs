// The JS half of the package: the public classes and functions over the wasm exports
// (wasm/src/*.rs, reached through the wasm-bindgen glue `snowdrift_wasm.js` that
// `cargo xtask npm` generates next to this file and bundles with it). It holds no ID
// logic: it checks arguments (types, option names, integer ranges, with messages naming
// the value and the allowed range), passes numbers to wasm, and turns the results into
// bigints, strings, Parts and errors. Bit packing, layouts and their names, clock
// policies and the core's own error texts all stay in the wasm.
//
// `create(module)` is called by each entry file with the compiled module (or its bytes);
// it instantiates it synchronously (`initSync`). The glue holds one instance per copy of
// this module, so later calls return the API made by the first. Other entry points (subpath
// exports) import the API from the entry of their runtime rather than calling it again.
import {
  initSync,
  buffers,
  preset_name,
  layout_preset,
  layout_custom,
  layout_fact,
  node_from,
  decode as wasmDecode,
  compose as wasmCompose,
  id_at,
  to_base32,
  from_base32,
  parse_decimal,
  gen_new,
  gen_free,
  gen_resume,
  gen_next,
  gen_try_next,
  gen_fill,
  gen_save,
  gen_restore,
  gen_fact,
  gen_set_fence,
  objectid_generate,
  objectid_parse,
} from "./snowdrift_wasm.js";
import { provide } from "./host.mjs";
import {
  describe,
  wrongType,
  intError,
  intArg,
  optInt,
  strArg,
  oneOf,
  optFn,
  numberId,
  numberRefused,
  options as checkOptions,
  outOfRange,
} from "./check.mjs";
import { errorCodes, withCode } from "./error-codes.mjs";
// The numbers shared with the wasm (error kinds, policy codes, fact fields, buffer
// offsets): written by `cargo xtask npm` from wasm/src/shared.rs.
import {
  ERR_RANGE,
  ERR_WOULD_BLOCK,
  POLICY_FAIL,
  POLICY_WAIT,
  POLICY_BORROW,
  ORDER_NODE_SEQUENCE,
  ORDER_SEQUENCE_NODE,
  LAYOUT_MAX_NODE,
  LAYOUT_MAX_DATACENTER,
  LAYOUT_MAX_WORKER,
  LAYOUT_SPLIT,
  LAYOUT_FITS_I64,
  LAYOUT_TIME_BITS,
  LAYOUT_DATACENTER_BITS,
  LAYOUT_WORKER_BITS,
  LAYOUT_SEQUENCE_BITS,
  LAYOUT_UNIT_MS,
  LAYOUT_EPOCH_MS,
  LAYOUT_ORDER,
  LAYOUT_LAST_MS,
  LAYOUT_EXHAUSTS_AT,
  LAYOUT_MAX_SEQUENCE,
  GEN_LAYOUT,
  GEN_NODE,
  GEN_ISSUED_THROUGH_MS,
  GEN_BEHIND,
  GEN_LARGEST_BEHIND_MS,
  GEN_CLOCK_WAITS,
  GEN_TICK_WAITS,
  GEN_AHEAD_MS,
  DECODED_SPLIT,
  DECODED_SMALL,
  ID_AT_MIN,
  ID_AT_MAX,
  TEXT_CAP,
  BATCH_CAP,
  IO_NUM,
  IO_ERR_KIND,
  IO_ERR_CODE,
  IO_ERR_LEN,
  IO_ERR,
  IO_TEXT,
  IO_BATCH,
} from "./constants.mjs";

const MAX_ID = 0xffffffffffffffffn;
const MAX_SAFE = 2 ** 53 - 1;
const MAX_U32 = 4294967295;
const MAX_BATCH = 1 << 20;
const OPTIONS = [
  "layout",
  "node",
  "datacenter",
  "worker",
  "onClockBackwards",
  "maxWaitMs",
  "maxAheadMs",
  "clock",
  "resumeAfter",
];
const ORDERS = ["node-sequence", "sequence-node"];
const LAYOUT_KEYS = [
  "timeBits",
  "nodeBits",
  "datacenterBits",
  "workerBits",
  "sequenceBits",
  "unitMs",
  "epochMs",
  "order",
];

/** Parts of an ID. `date` is computed when read; JSON carries it as before. */
class Parts {
  constructor(timeMs, node, sequence) {
    this.timeMs = timeMs;
    this.node = node;
    this.sequence = sequence;
  }
  /** The start of the ID's tick, as a Date (a new one each read). */
  get date() {
    return new Date(this.timeMs);
  }
  toJSON() {
    const { timeMs, node, datacenter, worker, sequence } = this;
    return datacenter === undefined
      ? { timeMs, date: this.date, node, sequence }
      : { timeMs, date: this.date, node, datacenter, worker, sequence };
  }
}

/** Parts of an ID of a split layout: the same prototype (and name) as Parts, with a
 * constructor of its own, so that each kind of Parts keeps one shape. */
function SplitParts(timeMs, node, datacenter, worker, sequence) {
  this.timeMs = timeMs;
  this.node = node;
  this.datacenter = datacenter;
  this.worker = worker;
  this.sequence = sequence;
}
SplitParts.prototype = Parts.prototype;

let api;
export function create(module) {
  return (api ??= build(module));
}

function build(module) {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const clocks = [];
  const freeClocks = [];
  let clockError;
  let u8, u32, f64, u64;

  provide({
    clock(clockIndex) {
      clockError = undefined;
      let v;
      try {
        v = clocks[clockIndex]();
      } catch (e) {
        clockError = { error: e };
        return -1;
      }
      if (typeof v !== "number") {
        clockError = { error: wrongType("the clock's reading", "a number of Unix milliseconds", v) };
        return -1;
      }
      if (v >= 0 && v <= MAX_SAFE) return v;
      clockError = { error: intError("the clock's reading", v, 0, MAX_SAFE) };
      return -1;
    },
    random(ptr, len) {
      crypto.getRandomValues(new Uint8Array(w.memory.buffer, ptr, len));
    },
    // A failed gen_next ends here: the error it recorded, thrown past the wasm.
    raise(kind) {
      throw takeError(kind);
    },
  });
  const w = initSync({ module });
  const io = buffers();

  /** New views after the memory grew (only calls that allocate can grow it). */
  function views() {
    const b = w.memory.buffer;
    u8 = new Uint8Array(b);
    u32 = new Uint32Array(b);
    f64 = new Float64Array(b);
    u64 = new BigUint64Array(b);
  }
  views();

  const textOut = (n) => String.fromCharCode.apply(null, u8.subarray(io + IO_TEXT, io + IO_TEXT + n));

  // The core's presets by name, resolved once: a name costs a Map lookup per call.
  const presets = new Map();
  for (let i = 0, n; (n = preset_name(i)) > 0; i++) presets.set(textOut(n), layout_preset(i));
  const DEFAULT = presets.get("default");

  /** The error the last call recorded (of `kind`, read from wasm memory unless given):
   * the clock's own if it failed, else the core's. */
  function takeError(kind = u32[(io + IO_ERR_KIND) >> 2]) {
    if (clockError) {
      const { error } = clockError;
      clockError = undefined;
      return error;
    }
    const message = decoder.decode(u8.subarray(io + IO_ERR, io + IO_ERR + u32[(io + IO_ERR_LEN) >> 2]));
    return withCode(kind === ERR_RANGE ? new RangeError(message) : new Error(message), u32[(io + IO_ERR_CODE) >> 2]);
  }
  const errorKind = () => u32[(io + IO_ERR_KIND) >> 2];

  /** An ID result of wasm: the bits as an unsigned bigint, or the recorded error. */
  function idOut(r, onError = takeError) {
    if (r >= 0n) return r;
    if (r === -1n && errorKind() !== 0) throw onError();
    return BigInt.asUintN(64, r);
  }

  /** Writes `s` into the text buffer; returns its length in bytes. */
  function textIn(what, s) {
    // Short ASCII (every text form of an ID) byte by byte; anything else through TextEncoder.
    const n = s.length;
    if (n <= 64) {
      const t = io + IO_TEXT;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        u8[t + i] = c;
      }
      if (i === n) return n;
    }
    const { read, written } = encoder.encodeInto(s, u8.subarray(io + IO_TEXT, io + IO_TEXT + TEXT_CAP));
    if (read < s.length) {
      throw new RangeError(`${what} ${describe(`${s.slice(0, 32)}...`)} is too long (${s.length} characters)`);
    }
    return written;
  }
  /** The core's error (a value out of range, a text form), as a RangeError that names
   * what it was about, with the core's code. */
  const reworded = (message) => {
    const e = takeError();
    const out = new RangeError(`${message}: ${e.message}`);
    if (e.code !== undefined) out.code = e.code;
    return out;
  };
  const parseError = (form, input) => reworded(`invalid ${form} id ${describe(input)}`);

  /** An ID argument: a `bigint` in 0..=2^64-1, its decimal string, or a `number` in 0..=2^53-1. */
  function idArg(what, v) {
    if (typeof v === "bigint") {
      if (v >= 0n && v <= MAX_ID) return v;
      throw outOfRange(`${what} ${describe(v)} is outside the allowed range 0..=18446744073709551615`);
    }
    if (typeof v === "string") return idOut(parse_decimal(textIn(what, v)), () => parseError("decimal", v));
    if (typeof v === "number") return numberId(what, v);
    throw wrongType(what, "a bigint, a decimal string or a number", v);
  }

  /** A layout argument (a preset name, a layout object, or undefined): its wasm address. */
  // The preset name used last and its address: a name in a loop costs one comparison.
  let lastName, lastLayout;
  function layoutArg(v) {
    if (v === undefined) return DEFAULT;
    if (v === lastName) return lastLayout;
    if (typeof v === "string") {
      const ptr = presets.get(v);
      if (ptr !== undefined) {
        lastName = v;
        lastLayout = ptr;
        return ptr;
      }
      throw new RangeError(
        `unknown layout ${describe(v)} (allowed: ${Array.from(presets.keys(), describe).join(", ")}, or a { timeBits, sequenceBits, epochMs, ... } object)`,
      );
    }
    if (typeof v !== "object" || v === null) throw wrongType("layout", "a preset name or a layout object", v);
    checkOptions("layout", v, LAYOUT_KEYS);
    const required = (key) => {
      if (v[key] === undefined) throw new TypeError(`layout.${key} is required`);
      return v[key];
    };
    const timeBits = intArg("timeBits", required("timeBits"), 0, 64);
    const sequenceBits = intArg("sequenceBits", required("sequenceBits"), 0, 64);
    const epochMs = intArg("epochMs", required("epochMs"), 0, MAX_SAFE);
    const n = optInt(v, "nodeBits", 0, 64);
    const d = optInt(v, "datacenterBits", 0, 64);
    const wk = optInt(v, "workerBits", 0, 64);
    const split = !(n !== undefined && d === undefined && wk === undefined);
    // A full description (as in the shared vectors) gives all three: they must agree.
    if (split && n !== undefined && n !== (d ?? 0) + (wk ?? 0)) {
      throw new RangeError("layout.nodeBits must equal datacenterBits + workerBits when all are given");
    }
    const unitMs = optInt(v, "unitMs", 1, MAX_U32) ?? 1;
    const order =
      v.order === undefined || oneOf("layout.order", v.order, ORDERS) === "node-sequence"
        ? ORDER_NODE_SEQUENCE
        : ORDER_SEQUENCE_NODE;
    const ptr = layout_custom(timeBits, n ?? 0, d ?? 0, wk ?? 0, split ? 1 : 0, sequenceBits, unitMs, epochMs, order);
    if (ptr === 0) throw reworded("invalid layout");
    return ptr;
  }

  /** The node id from `node`, or from `datacenter` + `worker` on a split layout. */
  function nodeArg(obj, layout) {
    const { node, datacenter, worker } = obj;
    if (datacenter === undefined && worker === undefined) {
      return node === undefined ? 0 : intArg("node", node, 0, layout_fact(layout, LAYOUT_MAX_NODE));
    }
    if (!layout_fact(layout, LAYOUT_SPLIT)) {
      throw new RangeError("this layout has no datacenter/worker split: give node instead");
    }
    const field = (key, v, max) => (v === undefined ? 0 : intArg(key, v, 0, max));
    const d = field("datacenter", datacenter, layout_fact(layout, LAYOUT_MAX_DATACENTER));
    const wk = field("worker", worker, layout_fact(layout, LAYOUT_MAX_WORKER));
    const split = node_from(layout, d, wk);
    if (split < 0) throw takeError();
    // A decoded Parts object carries all three: they must agree.
    if (node !== undefined && intArg("node", node, 0, MAX_SAFE) !== split) {
      throw new RangeError(`node ${describe(node)} does not match datacenter + worker (node ${split})`);
    }
    return split;
  }

  /** `onClockBackwards` with `maxWaitMs` / `maxAheadMs`: [policy, bound]. Default: borrow, 1 s ahead. */
  function policyArg(options) {
    const name =
      options.onClockBackwards === undefined
        ? "borrow"
        : oneOf("onClockBackwards", options.onClockBackwards, ["fail", "wait", "borrow"]);
    const wait = optInt(options, "maxWaitMs", 0, MAX_U32);
    const ahead = optInt(options, "maxAheadMs", 0, MAX_U32);
    const misplaced = (key, policy) => new RangeError(`${key} applies only to onClockBackwards: "${policy}"`);
    if ((name === "fail" || name === "wait") && ahead !== undefined) throw misplaced("maxAheadMs", "borrow");
    if ((name === "fail" || name === "borrow") && wait !== undefined) throw misplaced("maxWaitMs", "wait");
    if (name === "fail") return [POLICY_FAIL, 0];
    if (name === "wait") return [POLICY_WAIT, wait ?? 100];
    return [POLICY_BORROW, ahead ?? 1000];
  }

  const num = (io + IO_NUM) >> 3;
  function decodeWith(layout, id) {
    // A bigint in 0..=2^64-1 is one that 64 unsigned bits hold unchanged.
    if (typeof id !== "bigint" || BigInt.asUintN(64, id) !== id) id = idArg("id", id);
    // Bit 1: a split layout; bit 2: fields below 2^31, kept as small integers (`| 0`),
    // which V8 stores in the object without allocating a number for each.
    const r = wasmDecode(layout, id);
    if (r === DECODED_SMALL) return new Parts(f64[num], f64[num + 1] | 0, f64[num + 4] | 0);
    if (r === (DECODED_SMALL | DECODED_SPLIT))
      return new SplitParts(f64[num], f64[num + 1] | 0, f64[num + 2] | 0, f64[num + 3] | 0, f64[num + 4] | 0);
    if (r === 0) return new Parts(f64[num], f64[num + 1], f64[num + 4]);
    if (r === DECODED_SPLIT) return new SplitParts(f64[num], f64[num + 1], f64[num + 2], f64[num + 3], f64[num + 4]);
    throw takeError();
  }

  // Releases a collected generator's wasm memory and clock index. workerd has no
  // FinalizationRegistry (without a compatibility flag): there `free()` does it.
  const registry =
    typeof FinalizationRegistry === "function"
      ? new FinalizationRegistry(({ gen, clockIndex }) => release(gen, clockIndex))
      : { register() {}, unregister() {} };
  function release(gen, clockIndex) {
    gen_free(gen);
    if (clockIndex >= 0) {
      clocks[clockIndex] = undefined;
      freeClocks.push(clockIndex);
    }
  }
  const FREED = -1; // an address past the end of memory: any use traps

  /** A Snowflake ID generator. */
  class Snowdrift {
    // Initialised with values of their final types (small integers, a boolean), which V8
    // then stores unboxed: next() reads them without a type check.
    #gen = 0;
    #clockIndex = -1;
    #layout = 0;
    // A 64-bit layout: IDs from 2^63 on leave wasm as negative i64s.
    #wide = false;
    // All fields' bits: nextNumber() refuses layouts of more than 53.
    #bits = 0;

    /** `new Snowdrift({ layout, node | datacenter + worker, onClockBackwards, maxWaitMs, maxAheadMs, clock, resumeAfter })`. */
    constructor(options) {
      options = checkOptions("Snowdrift", options ?? undefined, OPTIONS);
      const layout = layoutArg(options.layout);
      const node = nodeArg(options, layout);
      const [policy, bound] = policyArg(options);
      const clock = optFn("clock", options.clock, "a function returning Unix milliseconds");
      const resumeAfter = options.resumeAfter === undefined ? undefined : idArg("resumeAfter", options.resumeAfter);
      let clockIndex = -1;
      if (clock !== undefined) {
        clockIndex = freeClocks.length ? freeClocks.pop() : clocks.length;
        clocks[clockIndex] = clock;
      }
      const gen = gen_new(layout, node, policy, bound, clockIndex);
      views();
      if (gen === 0 || (resumeAfter !== undefined && gen_resume(gen, resumeAfter) < 0)) {
        const error = takeError();
        if (gen !== 0) gen_free(gen);
        if (clockIndex >= 0) {
          clocks[clockIndex] = undefined;
          freeClocks.push(clockIndex);
        }
        throw error;
      }
      this.#gen = gen;
      this.#clockIndex = clockIndex;
      this.#layout = gen_fact(gen, GEN_LAYOUT);
      this.#wide = layout_fact(layout, LAYOUT_FITS_I64) === 0;
      this.#bits = [LAYOUT_TIME_BITS, LAYOUT_DATACENTER_BITS, LAYOUT_WORKER_BITS, LAYOUT_SEQUENCE_BITS].reduce(
        (sum, field) => sum + layout_fact(layout, field),
        0,
      );
      registry.register(this, { gen, clockIndex }, this);
    }

    /** The next ID. */
    next() {
      // A failure throws from inside gen_next (`raise`): nothing to check here.
      return this.#wide ? BigInt.asUintN(64, gen_next(this.#gen)) : gen_next(this.#gen);
    }

    /** The next ID as a decimal string (safe in JSON). */
    nextString() {
      return String(this.next());
    }

    /** The next ID as a Number, on a layout of at most 53 bits (such as "js53"); on a
     * wider one a RangeError, and no ID is issued. */
    nextNumber() {
      if (this.#bits > 53) throw numberRefused(this.#bits);
      return Number(gen_next(this.#gen));
    }

    /** `n` increasing IDs. */
    nextBatch(n) {
      n = intArg("n", n, 1, MAX_BATCH);
      const out = new BigUint64Array(n);
      const at = (io + IO_BATCH) >> 3;
      // A batch that fails changes nothing: a failing chunk puts its generator back, and
      // one after the first puts back the state from before the batch.
      const chunked = n > BATCH_CAP;
      if (chunked) gen_save(this.#gen);
      for (let done = 0; done < n; ) {
        const k = Math.min(n - done, BATCH_CAP);
        if (gen_fill(this.#gen, k) < 0) {
          const error = takeError();
          if (chunked) gen_restore(this.#gen);
          throw error;
        }
        out.set(u64.subarray(at, at + k), done);
        done += k;
      }
      return out;
    }

    /** The next ID if one is ready without waiting, else `undefined`. */
    tryNext() {
      const r = gen_try_next(this.#gen);
      if (r >= 0n) return r;
      if (r === -1n && errorKind() === ERR_WOULD_BLOCK && !clockError) return undefined;
      return idOut(r);
    }

    /** The parts of an ID of this generator's layout. */
    decode(id) {
      return decodeWith(this.#layout, id);
    }

    /** Issue only IDs whose time is before Unix millisecond `ms` (a node id lease's end):
     * past it, calls throw and change nothing, until the fence moves forward. */
    setFenceMs(ms) {
      gen_set_fence(this.#gen, intArg("ms", ms, 0, MAX_SAFE));
    }

    /** A Unix millisecond at or after the time of every ID issued so far. */
    get issuedThroughMs() {
      return gen_fact(this.#gen, GEN_ISSUED_THROUGH_MS);
    }

    /** The node id. */
    get node() {
      return gen_fact(this.#gen, GEN_NODE);
    }

    /** The clock trouble this generator met (counted off its fast path only): calls that
     * found the clock behind it (`behind`, the largest distance `largestBehindMs`), calls
     * that waited for the clock (`clockWaits`) or for the next tick (`tickWaits`), and how
     * far its newest ID is ahead of the clock now (`aheadMs`). */
    stats() {
      const fact = (f) => gen_fact(this.#gen, f);
      return {
        behind: fact(GEN_BEHIND),
        largestBehindMs: fact(GEN_LARGEST_BEHIND_MS),
        clockWaits: fact(GEN_CLOCK_WAITS),
        tickWaits: fact(GEN_TICK_WAITS),
        aheadMs: fact(GEN_AHEAD_MS),
      };
    }

    /** Releases the wasm memory now instead of when the object is garbage-collected.
     * Afterwards the generator refuses every call with a clear error (its own methods
     * shadow the class's, so live generators' calls stay as they are), keeps `node` and
     * `issuedThroughMs` (a lease hands the latter on), and `setFenceMs` does nothing. */
    free() {
      if (this.#gen === FREED) return;
      const node = this.node;
      const through = this.issuedThroughMs;
      registry.unregister(this);
      release(this.#gen, this.#clockIndex);
      this.#gen = this.#layout = FREED;
      const refuse = () => {
        throw new Error("this generator was freed (free() or a using block released its memory)");
      };
      for (const name of ["next", "nextString", "nextNumber", "nextBatch", "tryNext", "decode", "stats"]) {
        Object.defineProperty(this, name, { value: refuse });
      }
      Object.defineProperty(this, "setFenceMs", { value: () => {} });
      Object.defineProperty(this, "node", { value: node });
      Object.defineProperty(this, "issuedThroughMs", { value: through });
    }
  }

  const KEY = Symbol("ObjectId");

  /** A MongoDB ObjectId: 4 bytes of seconds, 5 random bytes per process, a 3-byte counter. */
  class ObjectId {
    #hex;
    #timestamp;
    constructor(key, hex, timestamp) {
      if (key !== KEY) throw new TypeError("use ObjectId.generate() or ObjectId.parse(hex)");
      this.#hex = hex;
      this.#timestamp = timestamp;
    }
    /** A new ObjectId. */
    static generate() {
      const timestamp = objectid_generate();
      if (timestamp < 0) throw takeError();
      return new ObjectId(KEY, textOut(24), timestamp);
    }
    /** Parses 24 hex digits. */
    static parse(hex) {
      const s = strArg("hex", hex);
      const timestamp = objectid_parse(textIn("hex", s));
      if (timestamp < 0) throw parseError("ObjectId", s);
      return new ObjectId(KEY, textOut(24), timestamp);
    }
    /** 24 lowercase hex digits. */
    toString() {
      return this.#hex;
    }
    toJSON() {
      return this.#hex;
    }
    /** Creation time in Unix seconds. */
    get timestamp() {
      return this.#timestamp;
    }
    /** How Node's console and util.inspect show it. */
    [Symbol.for("nodejs.util.inspect.custom")]() {
      return `ObjectId("${this.#hex}")`;
    }
  }

  // The package ships minified: keep the names Node's console and stack traces show.
  for (const [c, name] of [
    [Parts, "Parts"],
    [Snowdrift, "Snowdrift"],
    [ObjectId, "ObjectId"],
  ]) {
    Object.defineProperty(c, "name", { value: name });
  }
  if (typeof Symbol.dispose === "symbol") {
    Snowdrift.prototype[Symbol.dispose] = Snowdrift.prototype.free;
  }

  return {
    Snowdrift,
    ObjectId,
    errorCodes,
    /** `decode(id, layout?)`: the parts of an ID (default layout unless given). */
    decode(id, layout) {
      return decodeWith(layout === undefined ? DEFAULT : layoutArg(layout), id);
    },
    /** `compose(parts, layout?)`: the ID made of these parts. */
    compose(parts, layout) {
      const l = layoutArg(layout);
      if (typeof parts !== "object" || parts === null) throw wrongType("parts", "an object", parts);
      let time = parts.timeMs;
      if (time === undefined && parts.date instanceof Date) time = parts.date.getTime();
      if (time === undefined) throw new TypeError("parts.timeMs is required");
      const timeMs = intArg("timeMs", time, 0, MAX_SAFE);
      const sequence = parts.sequence === undefined ? 0 : intArg("sequence", parts.sequence, 0, MAX_SAFE);
      const node = nodeArg(parts, l);
      return idOut(wasmCompose(l, timeMs, node, sequence));
    },
    /**
     * `layoutInfo(layout?)`: what a layout is, as the core has it: field widths and order,
     * tick and epoch, the node range (and its datacenter/worker split), and when the time
     * field runs out. A preset name, a layout object, or the default.
     */
    layoutInfo(layout) {
      const l = layoutArg(layout);
      const fact = (field) => layout_fact(l, field);
      const datacenterBits = fact(LAYOUT_DATACENTER_BITS);
      const workerBits = fact(LAYOUT_WORKER_BITS);
      const timeBits = fact(LAYOUT_TIME_BITS);
      const sequenceBits = fact(LAYOUT_SEQUENCE_BITS);
      const split = fact(LAYOUT_SPLIT) === 1;
      return {
        timeBits,
        nodeBits: datacenterBits + workerBits,
        datacenterBits,
        workerBits,
        sequenceBits,
        totalBits: timeBits + datacenterBits + workerBits + sequenceBits,
        order: fact(LAYOUT_ORDER) === ORDER_SEQUENCE_NODE ? "sequence-node" : "node-sequence",
        unitMs: fact(LAYOUT_UNIT_MS),
        epochMs: fact(LAYOUT_EPOCH_MS),
        split,
        maxNode: fact(LAYOUT_MAX_NODE),
        maxDatacenter: fact(LAYOUT_MAX_DATACENTER),
        maxWorker: fact(LAYOUT_MAX_WORKER),
        maxSequence: fact(LAYOUT_MAX_SEQUENCE),
        fitsI64: fact(LAYOUT_FITS_I64) === 1,
        lastTickMs: fact(LAYOUT_LAST_MS),
        exhaustsAtMs: fact(LAYOUT_EXHAUSTS_AT),
      };
    },
    /** `toBase32(id)`: 13 Crockford base32 characters that sort like the number. */
    toBase32(id) {
      if (typeof id !== "bigint" || BigInt.asUintN(64, id) !== id) id = idArg("id", id);
      to_base32(id);
      // 13 characters, read one by one (no subarray, no apply).
      const t = io + IO_TEXT;
      return String.fromCharCode(
        u8[t],
        u8[t + 1],
        u8[t + 2],
        u8[t + 3],
        u8[t + 4],
        u8[t + 5],
        u8[t + 6],
        u8[t + 7],
        u8[t + 8],
        u8[t + 9],
        u8[t + 10],
        u8[t + 11],
        u8[t + 12],
      );
    },
    /** `fromBase32(text)`: the ID written as 13 Crockford base32 characters. */
    fromBase32(text) {
      const s = strArg("text", text);
      return idOut(from_base32(textIn("text", s)), () => parseError("base32", s));
    },
    /**
     * `parseId(text)`: an ID as people write it: decimal, a negative decimal (the signed
     * 64-bit column that stores it: the same 64 bits), hex (`0x…`, or 16 digits with a
     * letter) or base32 (13 characters, hyphens allowed). Spaces, `_` and `,` are ignored.
     * A number is taken as `decode` takes it: an integer up to 2^53 - 1.
     */
    parseId(text) {
      if (typeof text === "number") return numberId("id", text);
      const t = strArg("text", text).replace(/[\s_,]/g, "");
      if (/^-\d+$/.test(t)) {
        const v = BigInt(t);
        if (v < -(1n << 63n))
          throw outOfRange(`id ${t} is below the smallest signed 64-bit number (-9223372036854775808)`);
        return BigInt.asUintN(64, v);
      }
      if (/^\d+$/.test(t)) return idArg("id", t);
      if (/^0x/i.test(t) || /^[0-9a-f]{16}$/i.test(t)) {
        if (!/^(0x)?[0-9a-f]{1,16}$/i.test(t))
          throw new RangeError(`id ${describe(text)} is not 1 to 16 hex digits after 0x`);
        return BigInt(/^0x/i.test(t) ? t : `0x${t}`);
      }
      const b32 = t.replace(/-/g, "");
      if (b32.length === 13) return idOut(from_base32(textIn("text", b32)), () => parseError("base32", text));
      throw new RangeError(`id ${describe(text)} is not decimal, hex (0x…) or base32 (13 characters)`);
    },
    /** `minIdAt(timeMs, layout?)`: the smallest ID any node makes in the tick of `timeMs`. */
    minIdAt(timeMs, layout) {
      const l = layoutArg(layout);
      return idOut(id_at(l, intArg("timeMs", timeMs, 0, MAX_SAFE), ID_AT_MIN));
    },
    /** `maxIdAt(timeMs, layout?)`: the largest ID any node makes in the tick of `timeMs`. */
    maxIdAt(timeMs, layout) {
      const l = layoutArg(layout);
      return idOut(id_at(l, intArg("timeMs", timeMs, 0, MAX_SAFE), ID_AT_MAX));
    },
  };
}
