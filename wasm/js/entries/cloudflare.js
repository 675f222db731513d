// `snowdrift/cloudflare`: the Durable Object lease store and its Workers client
// (src/lease/cloudflare.js), over workerd's wasm instance (`workerd.js`).
export { SnowdriftLeases, durableObjectStore, Lease, leaseNode, leased } from "../src/lease/cloudflare.js";
