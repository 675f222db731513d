/** Names of the preset layouts (the core's, written in when the package is built). */
export type LayoutName = "@PRESETS";

/** A custom layout: field widths (bits), the time unit and the epoch (Unix ms). */
export interface LayoutSpec {
  timeBits: number;
  /** An unsplit node field; or give `datacenterBits` + `workerBits`. */
  nodeBits?: number;
  datacenterBits?: number;
  workerBits?: number;
  sequenceBits: number;
  /** Milliseconds per tick of the time field (default 1). */
  unitMs?: number;
  epochMs: number;
  /** Field order below the time field (default "node-sequence"; Sonyflake is "sequence-node"). */
  order?: "node-sequence" | "sequence-node";
}

export type Layout = LayoutName | LayoutSpec;

/** The `code` an error carries: the name of the core's error kind (`ErrorKind`, then
 * `ParseErrorKind`, in the Rust crate), written in when the package is built. Errors the
 * package's own checks make carry `"OutOfRange"` for a value outside its range and no
 * code for a wrong type or an unknown name. */
export type ErrorCode = "@ERROR_CODES";

/** Every `ErrorCode`. */
export declare const errorCodes: readonly ErrorCode[];

/** An error the package throws (a `RangeError`, `TypeError` or `Error`), with the code of
 * its kind when it has one: `if (e.code === "PastFence") ...`. */
export interface SnowdriftError extends Error {
  code?: ErrorCode;
}

/**
 * An ID as the functions that take one accept it: a `bigint` (0..=2^64-1), its decimal
 * string, or a `number` that holds it exactly (an integer in 0..=2^53-1; a larger one may
 * have lost precision, and is a RangeError).
 */
export type IdInput = bigint | string | number;

export interface SnowdriftOptions {
  /** Default "default": 41-bit ms since 2024-01-01, 10-bit node, 12-bit sequence (63 bits). */
  layout?: Layout;
  /** The node id (default 0). Distinct generators need distinct node ids. */
  node?: number;
  /** The datacenter part of a split node field (twitter, discord). */
  datacenter?: number;
  /** The worker part of a split node field (twitter, discord). */
  worker?: number;
  /**
   * What to do when the clock reads earlier than the newest ID (default "borrow"):
   * - "fail": throw an Error saying how far back it went;
   * - "wait": busy-wait for the clock to catch up, at most `maxWaitMs` (default 100), else throw;
   * - "borrow": go on from the newest time used, at most `maxAheadMs` (default 1000) ahead of the clock, else throw.
   */
  onClockBackwards?: "fail" | "wait" | "borrow";
  maxWaitMs?: number;
  maxAheadMs?: number;
  /** Unix milliseconds; for tests and custom time sources. Default `Date.now`. It must not call a generator (that throws). */
  clock?: () => number;
  /** Never issue an ID at or below this one (a high-water mark saved by an earlier run). */
  resumeAfter?: IdInput;
}

/**
 * The fields of an ID. `datacenter` and `worker` are present for split layouts only.
 * `date` is computed when read (a new Date each time), so it is not an own property:
 * `{ ...parts }` and `Object.keys(parts)` leave it out, while `JSON.stringify(parts)`
 * includes it (as an ISO string).
 */
export interface Parts {
  /** Start of the ID's tick, Unix milliseconds. */
  timeMs: number;
  /** The same instant as a Date. */
  readonly date: Date;
  node: number;
  datacenter?: number;
  worker?: number;
  sequence: number;
}

/** What a layout is, as the core has it (`layoutInfo`). */
export interface LayoutInfo {
  timeBits: number;
  /** The whole node field: `datacenterBits + workerBits`. */
  nodeBits: number;
  /** 0 when the node is not split. */
  datacenterBits: number;
  /** The whole node field when it is not split. */
  workerBits: number;
  sequenceBits: number;
  /** All fields together (at most 64). */
  totalBits: number;
  /** Field order below the time field. */
  order: "node-sequence" | "sequence-node";
  /** Milliseconds per tick of the time field. */
  unitMs: number;
  /** Unix ms of tick 0. */
  epochMs: number;
  /** Whether the node is split into datacenter + worker. */
  split: boolean;
  /** Node ids are 0..=maxNode. */
  maxNode: number;
  /** 0 when the node is not split. */
  maxDatacenter: number;
  maxWorker: number;
  /** IDs per tick per node: maxSequence + 1. */
  maxSequence: number;
  /** Every ID is a non-negative signed 64-bit integer (at most 63 bits). */
  fitsI64: boolean;
  /** Unix ms at which the last tick starts: the last time an ID can be made. */
  lastTickMs: number;
  /** Unix ms at which the time field runs out: no ID has this time or a later one. */
  exhaustsAtMs: number;
}

/** The input of `compose`: `timeMs` (or `date`), `node` or `datacenter` + `worker`, `sequence` (default 0). */
export interface PartsInput {
  timeMs?: number;
  date?: Date;
  node?: number;
  datacenter?: number;
  worker?: number;
  sequence?: number;
}

/** A Snowflake ID generator. IDs are unique and strictly increasing. */
/** What a generator counted of its clock's trouble (`Snowdrift.stats()`). */
export interface ClockStats {
  /** Calls that found the clock behind the generator's newest tick (a step back, or under
   * "borrow" IDs past `maxAheadMs`): waited for or refused. A step back "borrow" absorbs
   * shows in `aheadMs` instead. */
  behind: number;
  /** The largest of those distances, ms. */
  largestBehindMs: number;
  /** Calls that waited for the clock to catch up. */
  clockWaits: number;
  /** Calls that waited for the next tick, their tick's sequence used up. */
  tickWaits: number;
  /** How far the newest ID is timed ahead of the clock now, ms (0 when not ahead). */
  aheadMs: number;
}

export declare class Snowdrift {
  /** @throws {TypeError} an option of the wrong type. @throws {RangeError} an option out of range. */
  constructor(options?: SnowdriftOptions);
  /** The next ID. */
  next(): bigint;
  /** The next ID as a decimal string (safe in JSON). */
  nextString(): string;
  /** The next ID as a Number, on a layout of at most 53 bits (such as "js53", whose IDs
   * are all at most 2^53 - 1). @throws {RangeError} on a wider layout, naming its width;
   * no ID is issued then. */
  nextNumber(): number;
  /** `n` (1 to 1,048,576) increasing IDs. */
  nextBatch(n: number): BigUint64Array;
  /** The next ID if one is available without waiting, else `undefined`. Never waits. */
  tryNext(): bigint | undefined;
  /** The parts of an ID of this generator's layout. */
  decode(id: IdInput): Parts;
  /** Issue only IDs whose time is before Unix millisecond `ms` (a node id lease's end):
   * past it, calls throw an Error naming the fence and change nothing, until the fence
   * moves forward (or back, to stop at once). @throws {RangeError} `ms` outside 0..=2^53-1. */
  setFenceMs(ms: number): void;
  /** A Unix millisecond at or after the time of every ID issued so far (what a lease's
   * release hands to the next holder of the node id). */
  readonly issuedThroughMs: number;
  /** The node id. */
  readonly node: number;
  /** The clock trouble this generator met, counted off its fast path only. */
  stats(): ClockStats;
  /** Releases the wasm memory now instead of when the object is garbage-collected (under
   * workerd, which has no FinalizationRegistry, only this releases it). Afterwards its
   * calls throw an Error ("this generator was freed ..."), `setFenceMs` does nothing, and
   * `node` and `issuedThroughMs` keep their last values. */
  free(): void;
  [Symbol.dispose](): void;
}

/** The parts of an ID (layout "default" unless given). */
export declare function decode(id: IdInput, layout?: Layout): Parts;
/** The ID made of these parts (layout "default" unless given). */
export declare function compose(parts: PartsInput, layout?: Layout): bigint;
/** 13 Crockford base32 characters; sorts like the number. */
export declare function toBase32(id: IdInput): string;
/** Parses 13 Crockford base32 characters (either case). */
export declare function fromBase32(text: string): bigint;
/** An ID as people write it: decimal, negative decimal (a signed 64-bit column: the same
 * 64 bits), hex (`0x…`, or 16 digits with a letter) or base32 (13 characters, hyphens
 * allowed); spaces, `_` and `,` ignored; or a number in 0..=2^53-1. A RangeError names
 * anything else. */
export declare function parseId(text: string | number): bigint;
/** The smallest ID any node makes in the tick holding `timeMs`. */
export declare function minIdAt(timeMs: number, layout?: Layout): bigint;
/** The largest ID any node makes in the tick holding `timeMs`. */
export declare function maxIdAt(timeMs: number, layout?: Layout): bigint;

/** What a layout is (the default unless given): widths, order, tick, epoch, node range,
 * when it runs out. @throws {RangeError} an unknown or invalid layout. */
export declare function layoutInfo(layout?: Layout): LayoutInfo;

/** A MongoDB ObjectId: 4 bytes of seconds, 5 random bytes per process, a 3-byte counter. */
export declare class ObjectId {
  private constructor();
  static generate(): ObjectId;
  /** @throws {RangeError} anything but 24 hex digits. */
  static parse(hex: string): ObjectId;
  /** 24 lowercase hex digits. */
  toString(): string;
  toJSON(): string;
  /** Creation time in Unix seconds. */
  readonly timestamp: number;
}
