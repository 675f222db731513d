"use strict";
// `snowdrift/postgres` in Node (CommonJS): node id leases in PostgreSQL
// (src/lease/postgres.cjs), over the shared holder (the package's `holder.cjs`) and the
// Node entry's wasm instance.
module.exports = require("../src/lease/postgres.cjs");
