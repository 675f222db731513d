"use strict";
// `snowdrift/http` on Node, Deno and Bun (CommonJS): the lease handler over this runtime's
// wasm instance (`node.cjs`), and `nodeListener` for Node's `http` server.
const { httpFor, nodeListener } = require("../src/lease/http.mjs");

module.exports = { ...httpFor(require("./node.cjs")), nodeListener };
