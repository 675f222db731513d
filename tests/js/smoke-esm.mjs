// Node ESM, Deno and Bun: `import ... from "snowdrift"`, resolved through the package's exports.
import * as snowdrift from "snowdrift";
import { smoke } from "./smoke.mjs";

const runtime = globalThis.Deno ? "deno" : globalThis.Bun ? "bun" : "node-esm";
console.log(JSON.stringify(smoke(snowdrift, runtime)));
