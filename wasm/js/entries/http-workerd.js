// `snowdrift/http` in Cloudflare Workers: the lease handler over workerd's wasm instance.
import * as api from "./workerd.js";
import { httpFor } from "../src/lease/http.mjs";

export const { leaseHandler } = httpFor(api);
