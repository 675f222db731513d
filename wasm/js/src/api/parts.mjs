// The parts of an ID: `decode` splits one by a layout into time, node (datacenter and
// worker on a split layout) and sequence; `compose` puts parts together.
import { compose as wasmCompose, decode as wasmDecode } from "../snowdrift_wasm.js";
import { intArg, MAX_SAFE, wrongType } from "../check.mjs";
import { DECODED_SMALL, DECODED_SPLIT } from "../constants.mjs";
import { f64, idArg, idOut, numAt, takeError } from "./interop.mjs";
import { DEFAULT, layoutArg, nodeArg } from "./layout.mjs";

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
// The package ships minified: keep the name Node's console shows.
Object.defineProperty(Parts, "name", { value: "Parts" });

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

/** The parts of `id` in the layout at address `layout`; and `decode(id, layout?)`, the
 * parts of an ID (default layout unless given). Both are made by `makeDecoders`. */
export let decodeWith, decode;

/** Makes `decodeWith` and `decode` once the wasm is instantiated and the presets are
 * loaded, around the addresses they read (the decoded fields, the default layout): V8
 * reads a closure's variable that never changes as a constant, a module's variable again
 * at each call. */
export function makeDecoders() {
  const num = numAt;
  const fallback = DEFAULT;
  function withLayout(layout, id) {
    // A bigint in 0..=2^64-1 is one that 64 unsigned bits hold unchanged.
    if (typeof id !== "bigint" || BigInt.asUintN(64, id) !== id) id = idArg("id", id);
    // Bit 1: a split layout; bit 2: fields below 2^31, kept as small integers (`| 0`),
    // which V8 stores in the object without allocating a number for each.
    const r = wasmDecode(layout, id);
    const f = f64; // new after the memory grows
    if (r === DECODED_SMALL) return new Parts(f[num], f[num + 1] | 0, f[num + 4] | 0);
    if (r === (DECODED_SMALL | DECODED_SPLIT))
      return new SplitParts(f[num], f[num + 1] | 0, f[num + 2] | 0, f[num + 3] | 0, f[num + 4] | 0);
    if (r === 0) return new Parts(f[num], f[num + 1], f[num + 4]);
    if (r === DECODED_SPLIT) return new SplitParts(f[num], f[num + 1], f[num + 2], f[num + 3], f[num + 4]);
    throw takeError();
  }
  decodeWith = withLayout;
  decode = (id, layout) => withLayout(layout === undefined ? fallback : layoutArg(layout), id);
}

/** `compose(parts, layout?)`: the ID made of these parts. */
export function compose(parts, layout) {
  const l = layoutArg(layout);
  if (typeof parts !== "object" || parts === null) throw wrongType("parts", "an object", parts);
  let time = parts.timeMs;
  if (time === undefined && parts.date instanceof Date) time = parts.date.getTime();
  if (time === undefined) throw new TypeError("parts.timeMs is required");
  const timeMs = intArg("timeMs", time, 0, MAX_SAFE);
  const sequence = parts.sequence === undefined ? 0 : intArg("sequence", parts.sequence, 0, MAX_SAFE);
  const node = nodeArg(parts, l);
  return idOut(wasmCompose(l, timeMs, node, sequence));
}
