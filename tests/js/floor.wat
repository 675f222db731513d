;; The benchmark's floor: the least any wasm ID generator can do per call. It reads the
;; clock through an imported Date.now and returns an i64 (a bigint in JS) built from it.
;; floor.mjs holds these bytes, assembled by hand (no tool needed).
(module
  (import "env" "now" (func $now (result f64)))
  (func (export "next") (result i64)
    call $now
    i64.trunc_f64_u
    i64.const 22
    i64.shl))
