// `snowdrift/http` on Node, Deno and Bun as an ES module: the same instance as
// require("snowdrift/http").
import { createRequire } from "node:module";
const m = createRequire(import.meta.url)("./http-node.cjs");
export const { leaseHandler, nodeListener } = m;
