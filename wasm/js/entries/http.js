// `snowdrift/http` in other runtimes with `Request` and `Response` (and bundlers): the
// lease handler over the browser entry's wasm instance.
import * as api from "./index.js";
import { httpFor } from "../src/lease/http.mjs";

export const { leaseHandler } = httpFor(api);
