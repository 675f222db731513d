// `snowdrift/postgres` as an ES module: the same instance as require("snowdrift/postgres"),
// so both styles share one set of live leases (and one wasm instance).
import { createRequire } from "node:module";
const m = createRequire(import.meta.url)("./postgres.cjs");
export const { leaseNode, postgresStore, setup, list, Lease } = m;
