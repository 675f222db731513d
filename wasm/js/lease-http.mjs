// Node id leases over HTTP (`snowdrift/http`): one Web-standard handler, `Request` in and
// `Response` out, that serves the lease protocol of lease/PROTOCOL.md ("Over HTTP") as
// JSON over any store of the lease rules' store interface (Redis, PostgreSQL, the Durable
// Object), for browsers and anything else that can fetch. It runs wherever `Request` and
// `Response` exist: a Worker's fetch, Deno.serve, Bun.serve, and Node through
// `nodeListener`.
//
// The server decides: each space's layout, TTL and skew are the handler's options, so a
// client only names a space (it cannot make spaces or choose TTLs), and `authorize`
// decides who may call at all. For clients that cannot run a generator, `ids` returns IDs
// from the handler's own lease of the space, acquired on first use and renewed lazily, on
// the requests that find it due.
//
// The runtime's API (`Snowdrift`, `layoutInfo`, `maxIdAt`) is passed in, as the lease
// rules take it: each runtime's entry (`http-node.cjs`, `http-workerd.js`, `http.js`) is
// a few lines.
import { describe, intArg, optFn, optInt, options as checkOptions, strArg, wrongType } from "./check.mjs";
import {
  HeldLease,
  POLL_MS,
  acquireArgs,
  acquireLease,
  codeOf,
  layoutFacts,
  newToken,
  pastFence,
  storeError,
} from "./lease-rules.mjs";

const OPTIONS = ["store", "spaces", "authorize", "origins", "credentials", "maxIds", "holder", "storeTimeoutMs"];
const SPACE_OPTIONS = ["layout", "ttlMs", "skewMs"];
/** Each call and the fields of its request body. */
const CALLS = {
  acquire: ["space"],
  renew: ["space", "node", "token"],
  release: ["space", "node", "token", "issued"],
  ids: ["space", "count"],
};
const MAX_TTL_MS = 31_536_000_000; // a year, as the Durable Object store allows
const MAX_BODY = 4096; // bytes of a request body
const MAX_NAME = 1024;
const MAX_TOKEN = 256;
const MAX_HOLDER = 1024;
const MAX_IDS = 100_000;
const MAX_TIME_MS = Number.MAX_SAFE_INTEGER;

/** An error answered with `status` and `{ error: { code, message } }`. */
class HttpError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
const badRequest = (e) => new HttpError(400, "BAD_REQUEST", e.message);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `p`, or a rejection with `HttpError(503)` after `ms`. */
function within(p, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new HttpError(503, "UNAVAILABLE", `the lease store did not answer ${what} within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** A store's failure as the HTTP error a client sees: the protocol's refusals are 409s
 * with their code word; anything else means the store is unreachable or failing (503),
 * and its message (which may name hosts) stays on the server. */
function fromStore(e, what) {
  if (e instanceof HttpError) return e;
  const code = codeOf(e);
  if (code !== undefined) return new HttpError(409, code, storeError(e).message);
  return new HttpError(503, "UNAVAILABLE", `the lease store failed ${what}; try again later`);
}

/** The settings of each space the handler serves. */
function spacesArg(api, spaces) {
  if (typeof spaces !== "object" || spaces === null || Array.isArray(spaces)) {
    throw wrongType("spaces", 'an object of spaces ({ "web": { layout, ttlMs, skewMs } })', spaces);
  }
  const out = new Map();
  for (const [name, s] of Object.entries(spaces)) {
    if (name.length === 0 || name.length > MAX_NAME) {
      throw new RangeError(`space name ${describe(name)} has ${name.length} characters (allowed 1..=${MAX_NAME})`);
    }
    const o = checkOptions(`space ${describe(name)}`, s, SPACE_OPTIONS);
    const layout = o.layout ?? "default";
    const facts = layoutFacts(api, layout);
    const ttl = optInt(o, "ttlMs", 100, MAX_TTL_MS, 86_400_000);
    const maxSkew = Math.ceil(ttl / 2) - 1;
    const skew = optInt(o, "skewMs", 0, maxSkew, Math.min(1000, maxSkew));
    out.set(name, { space: name, layout, facts, ttl, skew, renewEvery: Math.floor(ttl / 3) });
  }
  if (out.size === 0) throw new RangeError("spaces must name at least one space");
  return out;
}

/** The request body: a JSON object of at most MAX_BODY bytes. */
async function readBody(request) {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > MAX_BODY) {
    throw new HttpError(413, "TOO_LARGE", `the request body has ${length} bytes (allowed 0..=${MAX_BODY})`);
  }
  const chunks = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY) {
        await reader.cancel().catch(() => {});
        throw new HttpError(
          413,
          "TOO_LARGE",
          `the request body has more than ${MAX_BODY} bytes (allowed 0..=${MAX_BODY})`,
        );
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  let body;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    throw new HttpError(400, "BAD_REQUEST", `the request body is not JSON (${e.message})`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest(wrongType("the request body", "a JSON object", body));
  }
  return body;
}

/** A string of `min..=max` characters. */
function textArg(what, v, min, max) {
  strArg(what, v);
  if (v.length < min || v.length > max) {
    throw new RangeError(`${what} ${describe(v)} has ${v.length} characters (allowed ${min}..=${max})`);
  }
  return v;
}

/** `leaseHandler` and `nodeListener` over the runtime's API. */
export function httpFor(api) {
  /** The handler: `(request) => Promise<Response>`; `handler.close()` releases the
   * leases the handler holds for `ids`. */
  function leaseHandler(options) {
    options = checkOptions("leaseHandler", options, OPTIONS);
    const store = options.store;
    if (
      typeof store !== "object" ||
      store === null ||
      !["acquire", "renew", "release"].every((k) => typeof store[k] === "function")
    ) {
      throw wrongType("store", "a lease store (an object with acquire, renew and release)", store);
    }
    const spaces = spacesArg(api, options.spaces);
    if (typeof options.authorize !== "function") {
      throw wrongType(
        "authorize",
        "a function (request, call) deciding who may lease (there is no default: anyone could exhaust a space)",
        options.authorize,
      );
    }
    const authorize = options.authorize;
    const origins = options.origins ?? [];
    if (!Array.isArray(origins) || !origins.every((o) => typeof o === "string")) {
      throw wrongType("origins", 'an array of origins ("https://app.example")', origins);
    }
    for (const o of origins) {
      let parsed;
      try {
        parsed = new URL(o);
      } catch {}
      if (parsed?.origin !== o) {
        throw new RangeError(`origin ${describe(o)} is not an origin (scheme://host[:port], no path or trailing /)`);
      }
    }
    const credentials = options.credentials ?? false;
    if (typeof credentials !== "boolean") throw wrongType("credentials", "a boolean", credentials);
    const maxIds = optInt(options, "maxIds", 1, MAX_IDS, 1000);
    const holderOf = optFn("holder", options.holder, "a function (request, call) returning a description");
    const timeoutMs = optInt(options, "storeTimeoutMs", 1, 600_000, 10_000);
    const call = (p, what) =>
      within(Promise.resolve(p), timeoutMs, what).catch((e) => Promise.reject(fromStore(e, what)));

    // ---- the handler's own lease of each space, for `ids` ----
    // A holder of lease-rules.mjs, kept per request (`keep`, with no background: a
    // request that finds a renewal due awaits it, never past the lapse). Its store calls
    // are bounded by `storeTimeoutMs` too; the store's errors reach the holder as they
    // are (it reads LOST), an acquire's as the handler's.
    const own = new Map(); // space -> Promise of a HeldLease with its generator in `gen`
    const ownStore = {
      acquire: (a) => call(store.acquire(a), "an acquire"),
      renew: (t, ttl) => within(Promise.resolve(store.renew(t, ttl)), timeoutMs, "a renewal"),
      release: (t, issued) => within(Promise.resolve(store.release(t, issued)), timeoutMs, "a release"),
    };

    async function acquireOwn(s) {
      const o = { ...s, holder: "snowdrift/http ids" };
      const lease = await acquireLease((...args) => new HeldLease(api, ...args), ownStore, o);
      lease.gen = lease.generator();
      return lease;
    }

    /** The handler's live lease of `s`, renewed first when the rules say so. */
    async function ownLease(s) {
      for (let attempt = 0; attempt < 2; attempt++) {
        let p = own.get(s.space);
        if (p === undefined) {
          p = acquireOwn(s);
          own.set(s.space, p);
          p.catch(() => own.get(s.space) === p && own.delete(s.space));
        }
        // The store's failures are HttpErrors already; the rest are the holder's own (not
        // usable in time, lapsed or lost while waiting), with messages naming no hosts.
        const lease = await p.catch((e) =>
          Promise.reject(e instanceof HttpError ? e : new HttpError(503, "UNAVAILABLE", e.message)),
        );
        await lease.keep().catch(() => {});
        if (lease.state === "live") return lease;
        if (own.get(s.space) === p) own.delete(s.space); // lapsed or lost: lease again
      }
      throw new HttpError(503, "UNAVAILABLE", `the handler could not hold a lease of space '${s.space}'`);
    }

    async function ids(s, count) {
      for (let attempt = 0; ; attempt++) {
        const lease = await ownLease(s);
        try {
          return Array.from(lease.gen.nextBatch(count), String);
        } catch (e) {
          // At the fence. A new space's first leases are fenced a TTL ahead of the store's
          // clock, and only renewals give them more ID time: once per request, wait until
          // the rules allow an early renewal (POLL_MS after the last one), renew, try again.
          if (attempt === 0 && pastFence(e) && lease.state === "live") {
            for (let i = 0, d; i < 3 && (d = lease._decide(false)).action === "none" && d.next <= POLL_MS; i++) {
              await sleep(d.next);
            }
            continue;
          }
          throw new HttpError(503, "UNAVAILABLE", `cannot issue IDs of space '${s.space}' now: ${e.message}`);
        }
      }
    }

    // ---- the calls ----
    async function serve(request, name, body) {
      checkOptions(`${name} request`, body, CALLS[name]);
      const space = textArg("space", body.space, 1, MAX_NAME);
      const s = spaces.get(space);
      if (s === undefined) throw new HttpError(404, "UNKNOWN_SPACE", `space ${describe(space)} is not served here`);
      const args = { call: name, space };
      if (name === "renew" || name === "release") {
        args.node = intArg("node", body.node, 0, s.facts.capacity - 1);
        args.token = textArg("token", body.token, 1, MAX_TOKEN);
      }
      if (name === "release") args.issued = intArg("issued", body.issued, 0, MAX_TIME_MS - 1);
      if (name === "ids") args.count = intArg("count", body.count, 1, maxIds);
      let allowed;
      try {
        allowed = await authorize(request, args);
      } catch (e) {
        throw new HttpError(403, "FORBIDDEN", `not authorized: ${e?.message ?? e}`);
      }
      if (!allowed) throw new HttpError(403, "FORBIDDEN", `not authorized to ${name} in space '${space}'`);

      if (name === "acquire") {
        const token = newToken();
        let holder = "snowdrift/http client";
        if (holderOf) {
          // The app's function: its failures are the server's (500), not the request's.
          try {
            holder = textArg("the holder function's result", await holderOf(request, args), 0, MAX_HOLDER);
          } catch {
            throw new HttpError(500, "INTERNAL", "the lease handler's holder function failed");
          }
        }
        const grant = await call(store.acquire(acquireArgs({ ...s, holder }, token)), "an acquire");
        return {
          space,
          node: grant.node,
          notBefore: grant.notBefore,
          until: grant.until,
          now: grant.now ?? Date.now(),
          token,
          layout: s.layout,
          ttlMs: s.ttl,
          skewMs: s.skew,
        };
      }
      const ticket = { space, node: args.node, token: args.token };
      if (name === "renew") return { until: await call(store.renew(ticket, s.ttl), "a renewal") };
      if (name === "release") {
        const r = await call(store.release(ticket, args.issued), "a release");
        return { released: r === true || r === 1 || r === "1" };
      }
      return { ids: await ids(s, args.count) };
    }

    const handler = async (request) => {
      const origin = request.headers.get("origin");
      const allowed = origin !== null && origins.includes(origin);
      const headers = new Headers({ "cache-control": "no-store" });
      if (origins.length > 0) headers.set("vary", "Origin");
      if (allowed) {
        headers.set("access-control-allow-origin", origin);
        if (credentials) headers.set("access-control-allow-credentials", "true");
      }
      const reply = (status, body) => {
        headers.set("content-type", "application/json");
        return new Response(JSON.stringify(body), { status, headers });
      };
      try {
        if (origin !== null && !allowed) {
          throw new HttpError(403, "ORIGIN", `origin ${describe(origin)} is not allowed to lease here`);
        }
        if (request.method === "OPTIONS") {
          headers.set("access-control-allow-methods", "POST");
          const asked = request.headers.get("access-control-request-headers");
          if (asked) headers.set("access-control-allow-headers", asked);
          headers.set("access-control-max-age", "600");
          return new Response(null, { status: 204, headers });
        }
        if (request.method !== "POST") {
          headers.set("allow", "POST, OPTIONS");
          throw new HttpError(405, "METHOD", `method ${request.method} is not allowed (POST, or OPTIONS for CORS)`);
        }
        const name = new URL(request.url).pathname.split("/").at(-1);
        if (!Object.hasOwn(CALLS, name)) {
          throw new HttpError(
            404,
            "UNKNOWN_CALL",
            `call ${describe(name)} is not one of ${Object.keys(CALLS).map(describe).join(", ")} (the URL's last segment)`,
          );
        }
        const body = await readBody(request);
        return reply(200, await serve(request, name, body));
      } catch (e) {
        const err = e instanceof HttpError ? e : e instanceof TypeError || e instanceof RangeError ? badRequest(e) : e;
        if (!(err instanceof HttpError)) {
          return reply(500, { error: { code: "INTERNAL", message: "the lease handler failed" } });
        }
        return reply(err.status, { error: { code: err.code, message: err.message } });
      }
    };
    /** Releases the handler's own leases (those `ids` uses), handing their ids on. */
    handler.close = async () => {
      const all = [...own.values()];
      own.clear();
      await Promise.allSettled(
        all.map(async (p) => {
          const lease = await p;
          await lease.release();
          lease.gen.free();
        }),
      );
    };
    return handler;
  }

  return { leaseHandler };
}

/** Serves `handler` to Node's `http` server: `createServer(nodeListener(handler))`. The
 * request's body is passed on as it is (the handler bounds it). */
export function nodeListener(handler) {
  optFn("handler", handler, "a function (request) => Promise<Response>");
  return async (req, res) => {
    try {
      const url = new URL(req.url, `http://${req.headers.host ?? "localhost"}`);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      }
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(url, {
        method: req.method,
        headers,
        body: hasBody ? webStream(req) : undefined,
        duplex: "half",
      });
      const response = await handler(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(new Uint8Array(await response.arrayBuffer()));
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`${e?.message ?? e}\n`);
    }
  };
}

/** A Node request as a Web ReadableStream (what `Readable.toWeb` does, with no import). */
function webStream(req) {
  let open = true;
  return new ReadableStream({
    start(controller) {
      req.on("data", (chunk) => open && controller.enqueue(new Uint8Array(chunk)));
      req.on("end", () => open && controller.close());
      req.on("error", (e) => open && controller.error(e));
    },
    cancel() {
      open = false;
      req.destroy();
    },
  });
}
