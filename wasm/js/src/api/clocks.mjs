// The clocks users give generators (`new Snowdrift({ clock })`): the wasm reads one by its
// index in `clocks`, through the `clock` import (host.mjs). A reading that fails or is not
// a Unix millisecond is kept here and thrown by the call that read it (interop.mjs).
import { intError, MAX_SAFE, wrongType } from "../check.mjs";

const clocks = [];
const freeClocks = [];

/** The error of the last clock reading, until the call that made it takes it. */
export let clockError;

/** Reads clock `clockIndex` for the wasm: its Unix ms, or -1 after keeping the error. */
export function readClock(clockIndex) {
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
}

/** The clock error of the last call, cleared (undefined if its clock did not fail). */
export function takeClockError() {
  const e = clockError;
  clockError = undefined;
  return e;
}

/** Keeps `clock` for the wasm: its index. */
export function addClock(clock) {
  const clockIndex = freeClocks.length ? freeClocks.pop() : clocks.length;
  clocks[clockIndex] = clock;
  return clockIndex;
}

/** Forgets the clock at `clockIndex` (none for -1), freeing the index. */
export function dropClock(clockIndex) {
  if (clockIndex >= 0) {
    clocks[clockIndex] = undefined;
    freeClocks.push(clockIndex);
  }
}
