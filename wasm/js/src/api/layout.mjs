// Layouts: the core's presets by name, custom layouts from objects, node ids for a layout,
// and what a layout is (`layoutInfo`) and where its ticks start and end (`minIdAt`,
// `maxIdAt`). The layouts themselves live in the wasm; JS holds their addresses.
import { id_at, layout_custom, layout_fact, layout_preset, node_from, preset_name } from "../snowdrift_wasm.js";
import { describe, intArg, MAX_SAFE, MAX_U32, oneOf, optInt, options as checkOptions, wrongType } from "../check.mjs";
import {
  ID_AT_MAX,
  ID_AT_MIN,
  LAYOUT_DATACENTER_BITS,
  LAYOUT_EPOCH_MS,
  LAYOUT_EXHAUSTS_AT,
  LAYOUT_FITS_I64,
  LAYOUT_LAST_MS,
  LAYOUT_MAX_DATACENTER,
  LAYOUT_MAX_NODE,
  LAYOUT_MAX_SEQUENCE,
  LAYOUT_MAX_WORKER,
  LAYOUT_ORDER,
  LAYOUT_SEQUENCE_BITS,
  LAYOUT_SPLIT,
  LAYOUT_TIME_BITS,
  LAYOUT_UNIT_MS,
  LAYOUT_WORKER_BITS,
  ORDER_NODE_SEQUENCE,
  ORDER_SEQUENCE_NODE,
} from "../constants.mjs";
import { idOut, reworded, takeError, textOut } from "./interop.mjs";

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

// The core's presets by name, resolved once (`loadPresets`): a name costs a Map lookup per call.
const presets = new Map();
/** The address of the default layout. */
export let DEFAULT = 0;

/** Reads the core's presets from the wasm, once it is instantiated. */
export function loadPresets() {
  for (let i = 0, n; (n = preset_name(i)) > 0; i++) presets.set(textOut(n), layout_preset(i));
  DEFAULT = presets.get("default");
}

// The preset name used last and its address: a name in a loop costs one comparison.
let lastName, lastLayout;

/** A layout argument (a preset name, a layout object, or undefined): its wasm address.
 * Small, so that V8 inlines it into its callers: the name used last costs a comparison. */
export function layoutArg(v) {
  if (v === undefined) return DEFAULT;
  if (v === lastName) return lastLayout;
  return layoutOf(v);
}

/** The address of a layout other than the default and the name used last. */
function layoutOf(v) {
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
export function nodeArg(obj, layout) {
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

/**
 * `layoutInfo(layout?)`: what a layout is, as the core has it: field widths and order,
 * tick and epoch, the node range (and its datacenter/worker split), and when the time
 * field runs out. A preset name, a layout object, or the default.
 */
export function layoutInfo(layout) {
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
}

/** `minIdAt(timeMs, layout?)`: the smallest ID any node makes in the tick of `timeMs`. */
export function minIdAt(timeMs, layout) {
  const l = layoutArg(layout);
  return idOut(id_at(l, intArg("timeMs", timeMs, 0, MAX_SAFE), ID_AT_MIN));
}

/** `maxIdAt(timeMs, layout?)`: the largest ID any node makes in the tick of `timeMs`. */
export function maxIdAt(timeMs, layout) {
  const l = layoutArg(layout);
  return idOut(id_at(l, intArg("timeMs", timeMs, 0, MAX_SAFE), ID_AT_MAX));
}
