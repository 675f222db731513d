// workerd (Cloudflare Workers) through Miniflare: the worker imports the package's
// "workerd" entry, which imports the .wasm as a compiled module.
import { readFileSync } from "node:fs";
import { Miniflare } from "miniflare";

const pkg = JSON.parse(readFileSync(new URL("./node_modules/snowdrift/package.json", import.meta.url)));
const entry = pkg.exports["."].workerd;
const sealEntry = pkg.exports["./seal"].workerd;
// snowdrift/seal too, whose wasm arrives as a module of its own: one sealed-ID vector
// (tests/vectors/sealed.json) must come out.
const script = `
import * as snowdrift from "./node_modules/snowdrift/${entry.replace(/^\.\//, "")}";
import { Sealer } from "./node_modules/snowdrift/${sealEntry.replace(/^\.\//, "")}";
import { smoke } from "./smoke.mjs";
export default {
  async fetch() {
    try {
      const sealed = new Sealer("2b7e151628aed2a6abf7158809cf4f3c").sealString(1n);
      if (sealed !== "19SUwngDuUo") throw new Error("snowdrift/seal sealed 1 as " + sealed);
      return Response.json(smoke(snowdrift, "workerd"));
    } catch (e) {
      return Response.json({ error: String(e && e.stack || e) }, { status: 500 });
    }
  },
};`;

const here = new URL(".", import.meta.url).pathname;
const mf = new Miniflare({
  modules: true,
  script,
  scriptPath: `${here}worker-entry.mjs`,
  modulesRoot: here,
  modulesRules: [
    { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
    { type: "CompiledWasm", include: ["**/*.wasm"] },
  ],
  compatibilityDate: "2025-01-01",
  host: "127.0.0.1",
  cf: false, // no fetch of Cloudflare's request.cf data: the test stays on 127.0.0.1
});
const timer = setTimeout(() => {
  console.error("workerd smoke test timed out");
  mf.dispose().finally(() => process.exit(1));
}, 120_000);
try {
  const res = await mf.dispatchFetch("http://127.0.0.1/");
  const body = await res.json();
  if (body.error) throw new Error(body.error);
  console.log(JSON.stringify(body));
} finally {
  clearTimeout(timer);
  await mf.dispose();
}
