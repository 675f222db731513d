// snowdrift/seal in Node, Deno and Bun (ES modules): the same instance as require().
import { createRequire } from "node:module";
export const { Sealer } = createRequire(import.meta.url)("./seal.cjs");
