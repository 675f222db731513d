// Node id leases over HTTP (`snowdrift/http`): one Web-standard handler, `Request` in and
// `Response` out, that serves the lease protocol of lease/PROTOCOL.md ("Over HTTP") as
// JSON over any store of the lease rules' store interface (Redis, PostgreSQL, the Durable
// Object), for browsers and anything else that can fetch. It runs wherever `Request` and
// `Response` exist: a Worker's fetch, Deno.serve, Bun.serve, and Node through
// `nodeListener`.
//
// The server decides: each space's layout, region, TTL and skew are the handler's options, so a
// client only names a space (it cannot make spaces or choose TTLs), and `authorize`
// decides who may call at all (only `true` lets a call through). For clients that cannot
// run a generator, `ids` returns IDs issued by the store itself where it can (the Durable
// Object store: no id stays held between calls, however many isolates serve them), else
// from the handler's own lease of the space, acquired on first use and renewed lazily, on
// the requests that find it due.
//
// Nothing the handler calls can hold a request forever or leak into a reply: the body is
// read within `bodyTimeoutMs` and 4,096 bytes; `authorize`, `holder` and every store call
// are answered within `storeTimeoutMs`; their errors stay on the server.
//
// The runtime's API (`Snowdrift`, `layoutInfo`, `maxIdAt`) is passed in, as the lease
// rules take it: each runtime's entry (`http-node.cjs`, `http-workerd.js`, `http.js`) is
// a few lines.
import { describe, intArg, optFn, optInt, options as checkOptions, pastFence, textArg, wrongType } from "../check.mjs";
import { MAX_HOLDER, MAX_SPACE_NAME, MAX_TOKEN, MAX_TTL_MS, MIN_TTL_MS } from "./limits.mjs";
import {
  Backoff,
  HeldLease,
  POLL_MS,
  acquireArgs,
  acquireLease,
  codeOf,
  layoutFacts,
  newToken,
  storeError,
} from "./rules.mjs";

const OPTIONS = [
  "store",
  "spaces",
  "authorize",
  "origins",
  "credentials",
  "maxIds",
  "holder",
  "storeTimeoutMs",
  "bodyTimeoutMs",
];
const SPACE_OPTIONS = ["layout", "region", "ttlMs", "skewMs"];
/** Each call and the fields of its request body. */
const CALLS = {
  acquire: ["space"],
  renew: ["space", "node", "token", "next"],
  release: ["space", "node", "token", "issued", "next"],
  ids: ["space", "count"],
};
const MAX_BODY = 4096; // bytes of a request body
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
const METHOD_MESSAGE = (method) => `method ${method} is not allowed (POST, or OPTIONS for CORS)`;

/** `check()`, its TypeErrors and RangeErrors (a request's bad values) answered as 400s. */
function checked(check) {
  try {
    return check();
  } catch (e) {
    throw e instanceof TypeError || e instanceof RangeError ? badRequest(e) : e;
  }
}

/** `v` if it is an integer a store's reply may hold, else the server's error (500). */
function replied(v, what) {
  if (!Number.isSafeInteger(v)) throw new Error(`the store answered ${what} ${describe(v)}, not an integer`);
  return v;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const INTERNAL = { error: { code: "INTERNAL", message: "the lease handler failed" } };

/** `p`, or a rejection with `error` after `ms`. */
function within(p, ms, error) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(error), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The 503 for `who` not answering (`what`) within `ms`. */
const silent = (who, ms, what) =>
  new HttpError(503, "UNAVAILABLE", `${who} did not answer ${what ? `${what} ` : ""}within ${ms} ms`);

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
    throw wrongType("spaces", 'an object of spaces ({ "web": { layout, region, ttlMs, skewMs } })', spaces);
  }
  const out = new Map();
  for (const [name, s] of Object.entries(spaces)) {
    textArg("space name", name, 1, MAX_SPACE_NAME);
    const o = checkOptions(`space ${describe(name)}`, s, SPACE_OPTIONS);
    const layout = o.layout ?? "default";
    const facts = layoutFacts(api, layout, o.region);
    const ttl = optInt(o, "ttlMs", MIN_TTL_MS, MAX_TTL_MS, 86_400_000);
    const maxSkew = Math.ceil(ttl / 2) - 1;
    const skew = optInt(o, "skewMs", 0, maxSkew, Math.min(1000, maxSkew));
    out.set(name, { space: name, layout, facts, ttl, skew, renewEvery: Math.floor(ttl / 3) });
  }
  if (out.size === 0) throw new RangeError("spaces must name at least one space");
  return out;
}

/** The request body: a JSON object of at most MAX_BODY bytes, read within `timeoutMs`. */
async function readBody(request, timeoutMs) {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > MAX_BODY) {
    throw new HttpError(413, "TOO_LARGE", `the request body has ${length} bytes (allowed 0..=${MAX_BODY})`);
  }
  const chunks = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      let chunk;
      try {
        chunk = await within(
          reader.read(),
          Math.max(0, deadline - performance.now()),
          new HttpError(408, "TIMEOUT", `the request body did not arrive within ${timeoutMs} ms`),
        );
      } catch (e) {
        await reader.cancel().catch(() => {});
        throw e instanceof HttpError ? e : new HttpError(400, "BAD_REQUEST", "the request body could not be read");
      }
      const { done, value } = chunk;
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
    const bodyTimeoutMs = optInt(options, "bodyTimeoutMs", 1, 600_000, 10_000);
    /** A store call (a promise, or a function making one: a store that throws at once
     * fails like one that rejects), bounded by `timeoutMs`, its failure as `fromStore`'s. */
    const call = (p, what) =>
      within(
        typeof p === "function" ? new Promise((resolve) => resolve(p())) : Promise.resolve(p),
        timeoutMs,
        silent("the lease store", timeoutMs, what),
      ).catch((e) => Promise.reject(fromStore(e, what)));
    /** The app's hook `f` called with the request: its answer, or a 503 after `timeoutMs`;
     * when it throws, `failed()` is thrown instead (its error stays on the server). */
    const hook = async (who, f, failed) => {
      const timeout = silent(who, timeoutMs);
      try {
        return await within(new Promise((resolve) => resolve(f())), timeoutMs, timeout);
      } catch (e) {
        throw e === timeout ? e : failed();
      }
    };

    // ---- the handler's own lease of each space, for `ids` ----
    // A holder of rules.mjs, kept per request (`keep`, with no background: a
    // request that finds a renewal due awaits it, never past the lapse). Its store calls
    // are bounded by `storeTimeoutMs` too; the store's errors reach the holder as they
    // are (it reads LOST), an acquire's as the handler's.
    const own = new Map(); // space -> Promise of a HeldLease with its generator in `gen`
    const backoffs = new Map(); // space -> its acquires' Backoff
    const held = new Map(); // space -> the newest lease `own` gave, whatever its state
    const ownStore = {
      acquire: (a) => call(store.acquire(a), "an acquire"),
      renew: (t, ttl) =>
        within(
          new Promise((ok) => ok(store.renew(t, ttl))),
          timeoutMs,
          silent("the lease store", timeoutMs, "a renewal"),
        ),
      release: (t, issued) =>
        within(
          new Promise((ok) => ok(store.release(t, issued))),
          timeoutMs,
          silent("the lease store", timeoutMs, "a release"),
        ),
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
          // After a failed acquire, requests get its error until the backoff's wait is over.
          let backoff = backoffs.get(s.space);
          if (backoff === undefined) backoffs.set(s.space, (backoff = new Backoff()));
          const failed = backoff.waiting(performance.now());
          if (failed !== undefined) throw failed;
          p = acquireOwn(s).then(
            (lease) => {
              backoff.succeeded();
              return lease;
            },
            (e) => {
              // The store's failures are HttpErrors already; the rest are the holder's own
              // (not usable in time, lapsed or lost while waiting), naming no hosts.
              const error = e instanceof HttpError ? e : new HttpError(503, "UNAVAILABLE", e.message);
              backoff.failed(error, performance.now());
              if (own.get(s.space) === p) own.delete(s.space);
              throw error;
            },
          );
          own.set(s.space, p);
        }
        const lease = await p;
        held.set(s.space, lease);
        await lease.keep().catch(() => {});
        if (lease.state === "live") return lease;
        if (own.get(s.space) === p) own.delete(s.space); // lapsed or lost: lease again
      }
      throw new HttpError(503, "UNAVAILABLE", `the handler could not hold a lease of space '${s.space}'`);
    }

    /** `count` IDs issued by the store itself (`store.ids`: the Durable Object store). A new
     * space's first calls wait for a tick to issue in, as the handler's own lease does. */
    async function storeIds(s, count) {
      const { token: _, ...args } = acquireArgs({ ...s, holder: "snowdrift/http ids" }, "");
      const deadline = performance.now() + s.skew + 2000;
      for (;;) {
        const r = await call(() => store.ids(args, count), "an ids call");
        if (!Array.isArray(r?.ids)) throw new Error("the store answered an ids call without ids");
        if (r.ids.length > 0) return r.ids;
        const wait = replied(r.wait, "an ids call's wait");
        if (performance.now() + wait > deadline) {
          throw new HttpError(503, "UNAVAILABLE", `space '${s.space}' is new; try again in ${wait} ms`);
        }
        await sleep(Math.min(Math.max(wait, 1), POLL_MS));
      }
    }

    async function ids(s, count) {
      if (typeof store.ids === "function") return storeIds(s, count);
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
      const { s, args } = checked(() => {
        checkOptions(`${name} request`, body, CALLS[name]);
        const space = textArg("space", body.space, 1, MAX_SPACE_NAME);
        const s = spaces.get(space);
        if (s === undefined) throw new HttpError(404, "UNKNOWN_SPACE", `space ${describe(space)} is not served here`);
        const args = { call: name, space };
        if (name === "renew" || name === "release") {
          // The node id as the client has it: the region's, above the leased id.
          const { base, capacity } = s.facts;
          args.node = intArg("node", body.node, base, base + capacity - 1);
          args.token = textArg("token", body.token, 1, MAX_TOKEN);
          // The lease's token from this renewal on (lease/PROTOCOL.md); optional.
          if (body.next !== undefined) args.next = textArg("next", body.next, 1, MAX_TOKEN);
        }
        if (name === "release") args.issued = intArg("issued", body.issued, 0, MAX_TIME_MS - 1);
        if (name === "ids") args.count = intArg("count", body.count, 1, maxIds);
        return { s, args };
      });
      const { space } = args;
      // Only `true` authorizes; a hook that throws refuses, and its error stays on the server.
      const refused = () => new HttpError(403, "FORBIDDEN", `not authorized to ${name} in space '${space}'`);
      if ((await hook("authorize", () => authorize(request, args), refused)) !== true) throw refused();

      if (name === "acquire") {
        const token = newToken();
        let holder = "snowdrift/http client";
        if (holderOf) {
          // The app's function: its failures are the server's (500), not the request's.
          const failed = () => new HttpError(500, "INTERNAL", "the lease handler's holder function failed");
          holder = await hook("the lease handler's holder function", () => holderOf(request, args), failed);
          if (typeof holder !== "string" || holder.length > MAX_HOLDER) throw failed();
        }
        const grant = await call(() => store.acquire(acquireArgs({ ...s, holder }, token)), "an acquire");
        return {
          space,
          node: s.facts.base + replied(grant?.node, "an acquire's node"),
          notBefore: replied(grant.notBefore, "an acquire's notBefore"),
          until: replied(grant.until, "an acquire's until"),
          now: grant.now === undefined ? Date.now() : replied(grant.now, "an acquire's now"),
          token,
          layout: s.layout,
          ttlMs: s.ttl,
          skewMs: s.skew,
        };
      }
      const ticket = { space, node: args.node - s.facts.base, token: args.token, next: args.next };
      if (name === "renew") {
        return { until: replied(await call(() => store.renew(ticket, s.ttl), "a renewal"), "a renewal") };
      }
      if (name === "release") {
        const r = await call(() => store.release(ticket, args.issued), "a release");
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
          throw new HttpError(405, "METHOD", METHOD_MESSAGE(request.method));
        }
        const name = new URL(request.url).pathname.split("/").at(-1);
        if (!Object.hasOwn(CALLS, name)) {
          throw new HttpError(
            404,
            "UNKNOWN_CALL",
            `call ${describe(name)} is not one of ${Object.keys(CALLS).map(describe).join(", ")} (the URL's last segment)`,
          );
        }
        const body = await readBody(request, bodyTimeoutMs);
        return reply(200, await serve(request, name, body));
      } catch (e) {
        // Only the handler's own errors are told; anything else stays on the server.
        if (!(e instanceof HttpError)) return reply(500, INTERNAL);
        return reply(e.status, { error: { code: e.code, message: e.message } });
      }
    };
    /** The health of the handler's own lease of `space` (the one `ids` issues from),
     * acquired when it holds none and renewed when due, as an `ids` call would: the lease's
     * `health()` (state `ok` or `renewing late`: it can issue), or `{ state: "unavailable",
     * status, error: { code, message } }` with the 503 or 409 an `ids` call would answer.
     * Over a store that issues IDs itself (the Durable Object) no lease is held: `{ state:
     * "store" }`. */
    handler.health = async (space) => {
      const s = spaces.get(space);
      if (s === undefined) throw new RangeError(`space ${describe(space)} is not served here`);
      if (typeof store.ids === "function") return { state: "store" };
      try {
        const { error: _, ...health } = (await ownLease(s)).health();
        return health;
      } catch (e) {
        const h = e instanceof HttpError ? e : new HttpError(503, "UNAVAILABLE", e.message);
        return { state: "unavailable", status: h.status, error: { code: h.code, message: h.message } };
      }
    };
    /** The handler's own lease of `space` as it stands, without a store call (its `state`,
     * `node`, `notBefore`, `until`), or undefined before the first. */
    handler.lease = (space) => held.get(space);
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

// Methods a `Request` cannot hold (the Fetch standard's forbidden methods).
const FORBIDDEN_METHODS = ["CONNECT", "TRACE", "TRACK"];

/** Serves `handler` to Node's `http` server: `createServer(nodeListener(handler))`. The
 * request's body is passed on as it is (the handler bounds it in size and time); a body
 * the handler stopped reading is not read further, and the connection is closed after
 * the response. A handler's error is a 500 whose message stays on the server. */
export function nodeListener(handler) {
  optFn("handler", handler, "a function (request) => Promise<Response>");
  return async (req, res) => {
    const json = (status, body, headers = {}) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
      res.end(JSON.stringify(body));
    };
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const body = hasBody ? webStream(req) : { unread: () => false };
    try {
      if (FORBIDDEN_METHODS.includes(req.method)) {
        body.unread();
        return json(
          405,
          { error: { code: "METHOD", message: METHOD_MESSAGE(req.method) } },
          { allow: "POST, OPTIONS", connection: "close" },
        );
      }
      const url = new URL(req.url, `http://${req.headers.host ?? "localhost"}`);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      }
      const request = new Request(url, {
        method: req.method,
        headers,
        body: hasBody ? body.stream : undefined,
        duplex: "half",
      });
      const response = await handler(request);
      const out = Object.fromEntries(response.headers);
      if (body.unread()) out.connection = "close";
      res.writeHead(response.status, out);
      res.end(new Uint8Array(await response.arrayBuffer()));
    } catch {
      const unread = body.unread();
      if (!res.headersSent) return json(500, INTERNAL, unread ? { connection: "close" } : {});
      res.destroy();
    }
  };
}

/** A Node request as a Web ReadableStream (what `Readable.toWeb` does, with no import),
 * read as the handler pulls (one chunk ahead), and `unread()`: stops passing the body on
 * (the rest is discarded as it arrives) and tells whether some of it has not arrived yet. */
function webStream(req) {
  let open = true;
  req.pause();
  const stop = () => {
    open = false;
    req.resume();
  };
  const stream = new ReadableStream(
    {
      start(controller) {
        req.on("data", (chunk) => {
          if (!open) return;
          controller.enqueue(new Uint8Array(chunk));
          if (controller.desiredSize <= 0) req.pause();
        });
        req.on("end", () => open && controller.close());
        req.on("error", (e) => open && controller.error(e));
      },
      pull() {
        if (open) req.resume();
      },
      cancel: stop,
    },
    { highWaterMark: 1 },
  );
  return {
    stream,
    unread() {
      stop();
      return !req.complete;
    },
  };
}
