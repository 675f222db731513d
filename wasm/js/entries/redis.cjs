"use strict";
// `snowdrift/redis` in Node (CommonJS): node id leases in Redis (src/lease/redis.cjs), over
// the shared holder (the package's `holder.cjs`) and the Node entry's wasm instance.
module.exports = require("../src/lease/redis.cjs");
