// The lease store of `snowdrift/cloudflare` in workerd through Miniflare: one store worker
// that binds the package's Durable Object class on SQLite storage persisted in a
// directory, and client workers (separate isolates) that call it through their own
// binding to it (`scriptName`), as an application's Workers would. Tests talk to the
// clients with `dispatchFetch` (Miniflare listens on 127.0.0.1 only); errors thrown by the
// object arrive in a client intact, which sends back their name and message.
import { readdirSync, readFileSync } from "node:fs";
import { Miniflare } from "miniflare";

const here = new URL(".", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(new URL("./node_modules/snowdrift/package.json", import.meta.url)));
// The file the "workerd" condition of the `./cloudflare` export picks.
export const entry = `./node_modules/snowdrift/${pkg.exports["./cloudflare"].workerd.replace(/^\.\//, "")}`;

// The store worker. Its isolate runs the objects too, so its module scope sets their
// clock: `Date.now` plus an offset the tests move (POST /clock), since Miniflare has no
// option to fake it. The class gains two methods, for the faults the tests make: `wipe`
// empties the object's storage (`deleteAll`) while the object lives, and `exec` runs one
// SQL statement on it (a row lost alone).
const store = `
import { SnowdriftLeases } from "${entry}";
const realNow = Date.now;
let offset = 0;
Date.now = () => realNow() + offset;
export class Leases extends SnowdriftLeases {
  async wipe() {
    await this.ctx.storage.deleteAll();
  }
  exec(_space, query) {
    this.ctx.storage.sql.exec(query);
  }
}
export default {
  async fetch(request) {
    const { offset: o } = await request.json();
    offset = o;
    return Response.json({ now: Date.now() });
  },
};`;

// A client worker: POST {method, args, times} calls the space's object `times` times at
// once (default 1) and answers {results: [{ok} | {error: {name, message}}]}.
const client = `
export default {
  async fetch(request, env) {
    const { method, args, times = 1 } = await request.json();
    const space = typeof args[0] === "string" ? args[0] : args[0].space;
    const stub = env.LEASES.get(env.LEASES.idFromName(space));
    const one = async () => {
      try {
        return { ok: await stub[method](...args) };
      } catch (e) {
        return { error: { name: e.name, message: e.message } };
      }
    };
    return Response.json({ results: await Promise.all(Array.from({ length: times }, one)) });
  },
};`;

const COMPAT = "2025-04-01";

/** A CORS preflight's request options: from `origin`, to POST with the `headers` named. */
export const preflight = (origin, headers) => ({
  method: "OPTIONS",
  headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": headers },
});

/** Miniflare's options for the Worker `name` running the module `script`, reached at
 * `http://<name>.test/`, with `bindings` as its LEASES Durable Object binding. */
export const worker = (name, script, bindings) => ({
  name,
  modules: true,
  script,
  scriptPath: `${here}${name}.mjs`,
  modulesRoot: here,
  modulesRules: [
    { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
    { type: "CompiledWasm", include: ["**/*.wasm"] },
  ],
  compatibilityDate: COMPAT,
  routes: [`${name}.test/*`],
  durableObjects: { LEASES: bindings },
});

/** Starts workerd with the store and `clients` client workers on the storage in `dir`,
 * its clock `offset` ms ahead of the host's. The client workers run `client` (by default
 * the one above, which calls the object's methods). */
export async function open(dir, { clients = 2, offset = 0, client: clientScript = client } = {}) {
  const mf = new Miniflare({
    host: "127.0.0.1",
    cf: false,
    durableObjectsPersist: dir,
    workers: [
      worker("store", store, { className: "Leases", useSQLite: true }),
      ...Array.from({ length: clients }, (_, i) =>
        worker(`client${i}`, clientScript, { className: "Leases", scriptName: "store" }),
      ),
    ],
  });
  const store_ = {
    mf,
    /** Calls `method(...args)` of the space's object from client `c`, `times` times at once. */
    async calls(c, method, args, times = 1) {
      const res = await mf.dispatchFetch(`http://client${c}.test/`, {
        method: "POST",
        body: JSON.stringify({ method, args, times }),
      });
      if (!res.ok) throw new Error(`client${c}: HTTP ${res.status}: ${await res.text()}`);
      return (await res.json()).results;
    },
    /** One call from client `c`: its result, or an Error of the name and message thrown. */
    async call(c, method, ...args) {
      const [r] = await store_.calls(c, method, args);
      if (r.error) throw Object.assign(new Error(r.error.message), { name: r.error.name });
      return r.ok;
    },
    /** Sets the objects' clock `offset` ms ahead of the host's; resolves to its reading. */
    async clock(offset) {
      const res = await mf.dispatchFetch("http://store.test/", { method: "POST", body: JSON.stringify({ offset }) });
      return (await res.json()).now;
    },
    dispose: () => mf.dispose(),
  };
  await store_.clock(offset);
  return store_;
}

/** The pids of the workerd processes this process started. */
export function workerdPids() {
  const pids = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      // pid (comm) state ppid ...
      const m = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
      if (m && m[1] === "workerd" && Number(m[2]) === process.pid) pids.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
