// `snowdrift/redis` as an ES module: the same instance as require("snowdrift/redis"), so
// both styles share one set of live leases (and one wasm instance).
import { createRequire } from "node:module";
const m = createRequire(import.meta.url)("./redis.cjs");
export const { leaseNode, redisStore, list, Lease } = m;
