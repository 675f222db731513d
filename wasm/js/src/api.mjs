// The JS half of the package: the public classes and functions over the wasm exports
// (wasm/src/*.rs, reached through the wasm-bindgen glue `snowdrift_wasm.js` that
// `cargo xtask npm` generates next to this file and bundles with it), one module per
// concept in `api/`: the generator, layouts, the parts of an ID, its text forms, ObjectId,
// and `interop.mjs`, which turns values and errors across the boundary. It holds no ID
// logic: it checks arguments (types, option names, integer ranges, with messages naming
// the value and the allowed range), passes numbers to wasm, and turns the results into
// bigints, strings, Parts and errors. Bit packing, layouts and their names, clock
// policies and the core's own error texts all stay in the wasm.
//
// `create(module)` is called by each entry file with the compiled module; it instantiates
// it synchronously (`initSync`) and sets the modules' binding to the instance, once: the
// glue holds one instance per copy of this module, so later calls return the API made by
// the first. Other entry points (subpath exports) import the API from the entry of their
// runtime rather than calling it again.
import { errorCodes } from "./error-codes.mjs";
import { Snowdrift } from "./api/generator.mjs";
import { init } from "./api/interop.mjs";
import { layoutInfo, loadPresets, maxIdAt, minIdAt } from "./api/layout.mjs";
import { ObjectId } from "./api/objectid.mjs";
import { compose, decode, makeDecoders } from "./api/parts.mjs";
import { fromBase32, parseId, toBase32 } from "./api/text.mjs";

let api;
export function create(module) {
  if (api === undefined) {
    init(module);
    loadPresets();
    makeDecoders();
    api = {
      Snowdrift,
      ObjectId,
      errorCodes,
      decode,
      compose,
      layoutInfo,
      toBase32,
      fromBase32,
      parseId,
      minIdAt,
      maxIdAt,
    };
    // The package ships minified: keep the names Node's console and stack traces show.
    for (const [name, value] of Object.entries(api)) {
      if (typeof value === "function") Object.defineProperty(value, "name", { value: name });
    }
  }
  return api;
}
