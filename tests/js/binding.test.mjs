// The binding checks (binding.mjs) in Node, through both entry points; smoke-browser.mjs
// runs the same checks in headless Chromium.
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as esm from "snowdrift";
import { binding } from "./binding.mjs";

const vectors = JSON.parse(readFileSync(new URL("../vectors/ids.json", import.meta.url)));

test("the binding in Node, ES module entry", () => binding(esm, vectors));
test("the binding in Node, CommonJS entry", () => binding(createRequire(import.meta.url)("snowdrift"), vectors));
