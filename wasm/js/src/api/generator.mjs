// The generator: `Snowdrift` over a generator in wasm memory, with its options checked here
// (layout, node, clock policy, the user's clock, where to resume).
import {
  gen_fact,
  gen_fill,
  gen_free,
  gen_new,
  gen_next,
  gen_restore,
  gen_resume,
  gen_save,
  gen_set_fence,
  gen_try_next,
  layout_fact,
} from "../snowdrift_wasm.js";
import { intArg, MAX_SAFE, MAX_U32, numberRefused, oneOf, optFn, optInt, options as checkOptions } from "../check.mjs";
import {
  BATCH_CAP,
  ERR_WOULD_BLOCK,
  GEN_AHEAD_MS,
  GEN_BEHIND,
  GEN_CLOCK_WAITS,
  GEN_ISSUED_THROUGH_MS,
  GEN_LAYOUT,
  GEN_LARGEST_BEHIND_MS,
  GEN_NODE,
  GEN_TICK_WAITS,
  IO_BATCH,
  LAYOUT_DATACENTER_BITS,
  LAYOUT_FITS_I64,
  LAYOUT_SEQUENCE_BITS,
  LAYOUT_TIME_BITS,
  LAYOUT_WORKER_BITS,
  POLICY_BORROW,
  POLICY_FAIL,
  POLICY_WAIT,
} from "../constants.mjs";
import { addClock, clockError, dropClock } from "./clocks.mjs";
import { errorKind, idArg, idOut, io, takeError, u64, views } from "./interop.mjs";
import { layoutArg, nodeArg } from "./layout.mjs";
import { decodeWith } from "./parts.mjs";

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

// Releases a collected generator's wasm memory and clock index. workerd has no
// FinalizationRegistry (without a compatibility flag): there `free()` does it.
const registry =
  typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry(({ gen, clockIndex }) => release(gen, clockIndex))
    : { register() {}, unregister() {} };
function release(gen, clockIndex) {
  gen_free(gen);
  dropClock(clockIndex);
}
const FREED = -1; // an address past the end of memory: any use traps

/** A Snowflake ID generator. */
export class Snowdrift {
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
    const clockIndex = clock === undefined ? -1 : addClock(clock);
    const gen = gen_new(layout, node, policy, bound, clockIndex);
    views();
    if (gen === 0 || (resumeAfter !== undefined && gen_resume(gen, resumeAfter) < 0)) {
      const error = takeError();
      if (gen !== 0) gen_free(gen);
      dropClock(clockIndex);
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

if (typeof Symbol.dispose === "symbol") {
  Snowdrift.prototype[Symbol.dispose] = Snowdrift.prototype.free;
}
