// Node, Deno and Bun, ES modules: the same instance as require("snowdrift"), so a program
// mixing both styles shares one module state (no dual-package hazard).
import { createRequire } from "node:module";
const m = createRequire(import.meta.url)("./node.cjs");
export const { Snowdrift, ObjectId, decode, compose, toBase32, fromBase32, parseId, minIdAt, maxIdAt, layoutInfo } = m;
