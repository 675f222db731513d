// MongoDB ObjectIds, made and parsed by the core.
import { objectid_generate, objectid_parse } from "../snowdrift_wasm.js";
import { strArg } from "../check.mjs";
import { parseError, takeError, textIn, textOut } from "./interop.mjs";

const KEY = Symbol("ObjectId");

/** A MongoDB ObjectId: 4 bytes of seconds, 5 random bytes per process, a 3-byte counter. */
export class ObjectId {
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
