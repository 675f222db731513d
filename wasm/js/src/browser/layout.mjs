// The layout facts the generator works with (`layoutInfo` of the core), the layout for
// devices that pick node ids at random, and how messages show times and names.
import { describe, intArg, MAX_SAFE } from "../check.mjs";
import { layoutInfo } from "./core.mjs";

/**
 * A layout for many devices that pick node ids at random: 41-bit milliseconds since
 * 2024-01-01 (until 2093), a 16-bit node (65,536 ids), a 6-bit sequence (64 IDs per ms,
 * 64,000 per second per tab). 63 bits: fits a signed 64-bit integer.
 */
export const BROWSER_LAYOUT = Object.freeze({
  timeBits: 41,
  nodeBits: 16,
  sequenceBits: 6,
  unitMs: 1,
  epochMs: 1704067200000,
});

/** A generator's name, for messages. */
export const named = (name) => `name ${describe(name)}`;

/** A Unix ms as a date, or as a number where Date cannot show it. */
export const iso = (ms) => (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`);

/** The clock in whole milliseconds, rounded up (a reservation from it is never short). */
export function clockMs() {
  const t = Date.now();
  return Number.isFinite(t) ? Math.min(Math.max(Math.ceil(t), 0), MAX_SAFE) : 0;
}

/** Facts of a layout, from the core (`layoutInfo`): epoch, tick length, IDs per tick,
 * largest node id, the start of its last tick and `lastMs`, that tick's last millisecond. */
export function layoutFacts(layout) {
  const info = layoutInfo(layout); // also validates the layout
  return {
    epochMs: info.epochMs,
    unitMs: info.unitMs,
    perTick: info.maxSequence + 1,
    maxNode: info.maxNode,
    lastTickMs: info.lastTickMs,
    bits: info.totalBits,
    lastMs: Math.min(info.exhaustsAtMs - 1, MAX_SAFE),
  };
}

/**
 * The chance that at least two of `devices` node ids drawn at random for `layout` are the
 * same (the birthday problem over the layout's node ids). Two devices that share a node id
 * make the same ID only when both issue one in the same tick with the same sequence number,
 * so this is the chance that duplicates are possible at all.
 */
export function collisionOdds(devices, layout = "default") {
  intArg("devices", devices, 0, Number.MAX_SAFE_INTEGER);
  const ids = layoutFacts(layout).maxNode + 1;
  if (devices > ids) return 1;
  if (devices > 1e7) return 1 - Math.exp((-devices * (devices - 1)) / (2 * ids));
  let logNone = 0; // log of the chance that all are distinct
  for (let i = 1; i < devices; i++) logNone += Math.log1p(-i / ids);
  return 0 - Math.expm1(logNone); // 0, not -0, for one device
}
