// The `code` of the errors the wasm modules record: the name of the core's error kind
// (`"PastFence"`, `"InvalidChar"`), as core/src/error.rs declares `ErrorKind` and
// `ParseErrorKind`. The wasm records the kind's number (wasm/src/codes.rs); `codes.mjs`,
// which `cargo xtask npm` writes from the core's source, holds the names in that order.
// The JS layer's own range checks use the code `"OutOfRange"` (`check.mjs`).
import { ERROR_KINDS, PARSE_CODE_BASE, PARSE_ERROR_KINDS } from "./codes.mjs";

/** Every `code` an error can carry: the core's error kinds, then its parse error kinds. */
export const errorCodes = Object.freeze([...ERROR_KINDS, ...PARSE_ERROR_KINDS]);

/** `error` with the `code` of the core's error kind numbered `n` (wasm/src/codes.rs), or
 * as it is for 0 (an error of the binding's own). */
export function withCode(error, n) {
  const code = n >= PARSE_CODE_BASE ? PARSE_ERROR_KINDS[n - PARSE_CODE_BASE] : ERROR_KINDS[n - 1];
  if (code !== undefined) error.code = code;
  return error;
}
