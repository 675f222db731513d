"use strict";
// `snowdrift serve`: an ID service over HTTP, for stacks that cannot run a generator of
// their own (Python, PHP, Java, .NET, Go, ...). `POST /ids` answers IDs as decimal strings
// from a node id lease in Redis or PostgreSQL, through `snowdrift/http`'s lease handler
// (its `ids` call: the one implementation); `GET /health` says whether it can issue;
// `GET /metrics` counts requests, IDs and errors in Prometheus text. SIGTERM or SIGINT
// stops taking connections, lets the requests in flight finish (within --shutdown-ms),
// then releases the lease, handing its node id on.
//
// The Redis or PostgreSQL client is the user's, found from the current directory as
// `snowdrift lease` finds pg: node-redis (`redis`) or `ioredis`, or `pg`.
const http = require("node:http");
const { readFileSync } = require("node:fs");
const { timingSafeEqual } = require("node:crypto");
const { peer } = require("./peer.cjs");
const { PROMETHEUS_CONTENT_TYPE, prometheusText, recordListing } = require("../metrics.cjs");

const USAGE = `usage: snowdrift serve (--redis URL | --postgres URL [--schema NAME])
                       (--token-file F | --no-auth) [options]
  POST /ids {"count": N}    N IDs as decimal strings: {"ids": ["...", ...]}
  GET /health               200 while it can issue IDs, else 503
  GET /metrics              Prometheus text
options:
  --redis URL               the lease store: Redis (needs the redis or ioredis package
                            in the current project)
  --postgres URL            the lease store: PostgreSQL (needs the pg package; runs the
                            lease schema's setup at start)
  --schema NAME             PostgreSQL schema of the leases (default snowdrift)
  --space NAME              the lease space (default ids)
  --layout NAME|JSON        the IDs' layout (default "default"; one per space)
  --region ID --region-bits BITS
                            the space's region: the node field's top BITS bits hold ID
                            (one per store: a Redis or PostgreSQL per data centre)
  --ttl-ms N                the lease's TTL, 1000..=86400000 (default 30000)
  --host HOST               the address to listen on (default 127.0.0.1)
  --port N                  the port, 0..=65535 (default 8080; 0: a free one)
  --token-file F            Bearer tokens, one per line (16..=1024 visible characters)
  --no-auth                 no token (only with a loopback --host)
  --max-count N             the most IDs one request gets, 1..=100000 (default 1000)
  --store-timeout-ms N      the longest a store call may take, 1..=600000 (default 5000)
  --shutdown-ms N           the longest in-flight requests get at shutdown, 0..=600000
                            (default 10000)`;

/** Each flag that takes a value, and its option. */
const FLAGS = {
  "--redis": "redis",
  "--postgres": "postgres",
  "--schema": "schema",
  "--space": "space",
  "--layout": "layout",
  "--region": "region",
  "--region-bits": "regionBits",
  "--ttl-ms": "ttlMs",
  "--host": "host",
  "--port": "port",
  "--token-file": "tokenFile",
  "--max-count": "maxCount",
  "--store-timeout-ms": "storeTimeoutMs",
  "--shutdown-ms": "shutdownMs",
};
/** Each integer flag: its range and default. */
const INTEGERS = {
  ttlMs: ["--ttl-ms", 1000, 86_400_000, 30_000],
  port: ["--port", 0, 65_535, 8080],
  maxCount: ["--max-count", 1, 100_000, 1000],
  storeTimeoutMs: ["--store-timeout-ms", 1, 600_000, 5000],
  shutdownMs: ["--shutdown-ms", 0, 600_000, 10_000],
  // Their ranges for the layout are the handler's to check (bits below its node bits).
  region: ["--region", 0, 2 ** 31 - 1, undefined],
  regionBits: ["--region-bits", 1, 31, undefined],
};
const MAX_BODY = 4096; // bytes of a request body, as the handler takes
const BODY_TIMEOUT_MS = 10_000;
const RETRY_AFTER_S = "1";
const LOOPBACK = ["127.0.0.1", "::1", "localhost"];
const TOKEN = /^[\x21-\x7e]{16,1024}$/;
/** The lease health states (`health()`) in which the service can issue. */
const CAN_ISSUE = ["ok", "renewing late"];

/** The settings of `argv` (after `serve`), checked; a TypeError or RangeError naming the
 * flag, its value and what it takes. */
function settings(argv) {
  const o = { auth: true };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let value;
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) {
      value = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    if (a === "-h" || a === "--help") return { help: true };
    if (a === "--no-auth" && value === undefined) {
      o.auth = false;
      continue;
    }
    const key = FLAGS[a];
    if (key === undefined) throw new TypeError(`serve: unknown option ${JSON.stringify(argv[i])}`);
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new TypeError(`serve: ${a} needs a value`);
      value = argv[++i];
    }
    if (o[key] !== undefined) throw new TypeError(`serve: ${a} is given twice`);
    o[key] = value;
  }
  for (const [key, [flag, min, max, fallback]] of Object.entries(INTEGERS)) {
    const text = o[key];
    if (text === undefined) {
      o[key] = fallback;
      continue;
    }
    const n = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
    if (!(n >= min && n <= max)) {
      throw new RangeError(
        /^\d+$/.test(text)
          ? `${flag} ${text} is outside the allowed range ${min}..=${max}`
          : `${flag} ${JSON.stringify(text)} is not an integer (allowed ${min}..=${max})`,
      );
    }
    o[key] = n;
  }
  if ((o.region === undefined) !== (o.regionBits === undefined)) {
    throw new TypeError("serve: --region and --region-bits go together (the region's id and its width)");
  }
  if ((o.redis === undefined) === (o.postgres === undefined)) {
    throw new TypeError("serve needs a lease store: --redis URL or --postgres URL (one of them)");
  }
  if (o.schema !== undefined && o.postgres === undefined) throw new TypeError("serve: --schema goes with --postgres");
  for (const [flag, url, schemes] of [
    ["--redis", o.redis, ["redis:", "rediss:"]],
    ["--postgres", o.postgres, ["postgres:", "postgresql:"]],
  ]) {
    if (url === undefined) continue;
    let parsed;
    try {
      parsed = new URL(url);
    } catch {}
    if (!schemes.includes(parsed?.protocol)) {
      throw new RangeError(`${flag} ${JSON.stringify(redacted(url))} is not a ${schemes.join(" or ")}// URL`);
    }
  }
  o.space ??= "ids";
  if (o.space.length < 1 || o.space.length > 1024) {
    throw new RangeError(`--space ${JSON.stringify(o.space)} has ${o.space.length} characters (allowed 1..=1024)`);
  }
  if (o.redis !== undefined && /[{}]/.test(o.space)) {
    throw new RangeError(`--space ${JSON.stringify(o.space)} must not contain '{' or '}' (the Redis keys' hash tag)`);
  }
  o.host ??= "127.0.0.1";
  if (o.auth && o.tokenFile === undefined) {
    throw new TypeError(
      "serve needs --token-file F (Bearer tokens, one per line), or --no-auth for a service on a loopback address",
    );
  }
  if (!o.auth && o.tokenFile !== undefined) throw new TypeError("serve takes --token-file or --no-auth, not both");
  if (!o.auth && !LOOPBACK.includes(o.host)) {
    throw new RangeError(
      `--no-auth serves only a loopback address (--host ${LOOPBACK.join(", ")}), not --host ${JSON.stringify(o.host)}: give a --token-file`,
    );
  }
  o.tokens = o.auth ? tokensIn(o.tokenFile) : [];
  if (o.layout?.trim().startsWith("{")) {
    try {
      o.layout = JSON.parse(o.layout);
    } catch (e) {
      throw new RangeError(`--layout ${JSON.stringify(o.layout)} is not a JSON object (${e.message})`);
    }
  }
  o.layout ??= "default";
  return o;
}

/** The tokens of a token file: one per line, blank lines and `#` comments left out. */
function tokensIn(file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new RangeError(`--token-file ${JSON.stringify(file)} cannot be read (${e.code ?? e.message})`);
  }
  const tokens = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (!TOKEN.test(line)) {
      throw new RangeError(
        `line ${i + 1} of the token file ${JSON.stringify(file)} is not a token: ${line.length} characters, ${/^[\x21-\x7e]*$/.test(line) ? "all visible" : "not all visible ASCII"} (allowed 16..=1024 visible ASCII characters)`,
      );
    }
    tokens.push(Buffer.from(line));
  }
  if (tokens.length === 0) {
    throw new RangeError(
      `the token file ${JSON.stringify(file)} holds no token (one per line, 16..=1024 visible ASCII characters)`,
    );
  }
  return tokens;
}

/** A URL without its password, for messages. */
function redacted(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}

const log = (line) => console.error(`snowdrift serve: ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Logs a store client's connection errors, one line per distinct message a second. */
function errorLog(what) {
  let last = "";
  let at = 0;
  return (e) => {
    const message = e?.message || String(e);
    const now = Date.now();
    if (message === last && now - at < 1000) return;
    last = message;
    at = now;
    log(`${what}: ${message}`);
  };
}

/** The lease store on the user's client: `{ store, ready, list, close, where }`; `list()`
 * lists the space (`snowdrift lease`'s listing). */
async function openStore(o) {
  if (o.redis !== undefined) {
    const { redisStore, list } = require("../redis.cjs");
    const where = `Redis at ${redacted(o.redis)}`;
    const quiet = errorLog(where);
    const backoff = (n) => Math.min(50 * 2 ** Math.min(n, 10), 500);
    const nodeRedis = peer("redis");
    if (nodeRedis !== undefined) {
      // No offline queue: while Redis is away a call fails at once (503), never waits.
      const client = nodeRedis.createClient({
        url: o.redis,
        disableOfflineQueue: true,
        socket: { connectTimeout: o.storeTimeoutMs, reconnectStrategy: backoff },
      });
      client.on("error", quiet);
      const ready = client.connect().catch(quiet);
      return {
        store: redisStore(client),
        ready,
        where,
        list: () => list(client, o.space),
        close: () => client.close?.() ?? client.quit(),
      };
    }
    const IORedis = peer("ioredis");
    if (IORedis !== undefined) {
      const Redis = IORedis.Redis ?? IORedis.default ?? IORedis;
      const client = new Redis(o.redis, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: o.storeTimeoutMs,
        retryStrategy: backoff,
      });
      client.on("error", quiet);
      const ready = new Promise((resolve) => client.once("ready", resolve));
      return { store: redisStore(client), ready, where, list: () => list(client, o.space), close: () => client.quit() };
    }
    throw new Error("--redis needs a Redis client in the current project: npm install redis (or ioredis)");
  }
  const pg = peer("pg");
  if (pg === undefined) throw new Error("--postgres needs the pg package in the current project: npm install pg");
  const { postgresStore, setup, list } = require("../postgres.cjs");
  const pool = new (pg.Pool ?? pg.default.Pool)({
    connectionString: o.postgres,
    connectionTimeoutMillis: o.storeTimeoutMs,
    max: 4,
  });
  const where = `PostgreSQL at ${redacted(o.postgres)}`;
  pool.on("error", errorLog(where));
  const schema = o.schema === undefined ? {} : { schema: o.schema };
  try {
    await setup(pool, schema);
  } catch (e) {
    await pool.end().catch(() => {});
    throw new Error(`the lease schema's setup in ${where} failed: ${e.message}`);
  }
  return {
    store: postgresStore(pool, schema),
    ready: Promise.resolve(),
    where,
    list: () => list(pool, o.space, schema),
    close: () => pool.end(),
  };
}

/** The service's counters, as Prometheus text, followed by the leases' own. */
class Metrics {
  requests = new Map(); // "path status" -> count
  errors = new Map(); // code -> count
  ids = 0;
  idsInFlight = 0;
  // Latency of POST /ids, seconds.
  bounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  buckets = new Array(this.bounds.length + 1).fill(0);
  sum = 0;

  answered(path, status, code, seconds) {
    const key = `${path} ${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    if (code !== undefined) this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
    if (path === "/ids") {
      let i = 0;
      while (i < this.bounds.length && seconds > this.bounds[i]) i++;
      this.buckets[i]++;
      this.sum += seconds;
    }
  }

  text(lease) {
    const lines = [];
    const metric = (name, type, help, samples) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of samples) lines.push(`${name}${labels} ${v}`);
    };
    metric(
      "snowdrift_serve_requests_total",
      "counter",
      "HTTP requests answered, by path and status.",
      [...this.requests].map(([k, v]) => {
        const [path, status] = k.split(" ");
        return [`{path="${path}",status="${status}"}`, v];
      }),
    );
    metric("snowdrift_serve_ids_issued_total", "counter", "IDs handed out by POST /ids.", [["", this.ids]]);
    metric("snowdrift_serve_ids_in_flight", "gauge", "POST /ids requests not answered yet.", [["", this.idsInFlight]]);
    metric(
      "snowdrift_serve_errors_total",
      "counter",
      "Error answers, by their code.",
      [...this.errors].map(([code, v]) => [`{code="${code}"}`, v]),
    );
    lines.push(
      "# HELP snowdrift_serve_ids_request_seconds Time to answer POST /ids.",
      "# TYPE snowdrift_serve_ids_request_seconds histogram",
    );
    let total = 0;
    for (const [i, bound] of [...this.bounds, "+Inf"].entries()) {
      total += this.buckets[i];
      lines.push(`snowdrift_serve_ids_request_seconds_bucket{le="${bound}"} ${total}`);
    }
    lines.push(`snowdrift_serve_ids_request_seconds_sum ${this.sum}`);
    lines.push(`snowdrift_serve_ids_request_seconds_count ${total}`);
    const live = lease?.state === "live";
    metric("snowdrift_serve_lease_live", "gauge", "1 while the service holds a live lease of its space.", [
      ["", live ? 1 : 0],
    ]);
    if (live) {
      metric("snowdrift_serve_lease_node", "gauge", "The node id of the service's lease.", [["", lease.node]]);
    }
    // Then what every lease of the process reports (`snowdrift/metrics`): renewals, their
    // failures and time, LOSTs, lapses, the lease's health, fence and clock trouble.
    return `${lines.join("\n")}\n${prometheusText()}`;
  }
}

/** A request's body: at most MAX_BODY bytes within BODY_TIMEOUT_MS, else an error with
 * the status to answer. */
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const fail = (status, code, message) => {
      clearTimeout(timer);
      req.removeAllListeners("data");
      req.resume();
      reject(Object.assign(new Error(message), { status, code }));
    };
    const timer = setTimeout(
      () => fail(408, "TIMEOUT", `the request body did not arrive within ${BODY_TIMEOUT_MS} ms`),
      BODY_TIMEOUT_MS,
    );
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        return fail(413, "TOO_LARGE", `the request body has more than ${MAX_BODY} bytes (allowed 0..=${MAX_BODY})`);
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.on("error", () => fail(400, "BAD_REQUEST", "the request body could not be read"));
  });
}

/** The body for the handler's `ids` call and the count asked for: the request's JSON
 * object with the service's space added (a body that is not a JSON object goes as it is:
 * the handler says why). */
function idsBody(bytes, space) {
  let body;
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    return { body: bytes };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body) || Object.hasOwn(body, "space")) {
    return { body: bytes };
  }
  return { body: JSON.stringify({ space, ...body }), count: body.count };
}

/** `snowdrift serve ...`: resolves with the exit code once the service has stopped. */
async function serve(argv) {
  let o;
  try {
    o = settings(argv);
  } catch (e) {
    e.usage = USAGE; // the command prints it under a TypeError's message
    throw e;
  }
  if (o.help) {
    console.log(USAGE);
    return 0;
  }
  const { leaseHandler } = require("../http-node.cjs");
  const authorize = o.auth
    ? (request) => {
        const given = Buffer.from(/^Bearer +(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "");
        // Every token is compared, in constant time for tokens of its length.
        let ok = false;
        for (const t of o.tokens) if (t.length === given.length && timingSafeEqual(t, given)) ok = true;
        return ok;
      }
    : () => true;
  // Checks the layout and TTL before anything connects.
  const space = { layout: o.layout, ttlMs: o.ttlMs };
  if (o.region !== undefined) space.region = { bits: o.regionBits, id: o.region };
  leaseHandler({ store: { acquire() {}, renew() {}, release() {} }, spaces: { [o.space]: space }, authorize });

  let opened;
  try {
    opened = await openStore(o);
  } catch (e) {
    log(e.message);
    return 1;
  }
  const handler = leaseHandler({
    store: opened.store,
    spaces: { [o.space]: space },
    authorize,
    maxIds: o.maxCount,
    storeTimeoutMs: o.storeTimeoutMs,
  });
  const metrics = new Metrics();
  let stopping = false;
  let inFlight = 0;
  let idle;

  const server = http.createServer(async (req, res) => {
    inFlight++;
    const started = performance.now();
    const path = req.url.split("?")[0];
    if (path === "/ids") metrics.idsInFlight++;
    const known = ["/ids", "/health", "/metrics"].includes(path) ? path : "other";
    let code;
    const send = (status, body, headers = {}) => {
      const text = typeof body === "string" ? body : JSON.stringify(body);
      if (status >= 400) code = body?.error?.code;
      const h = { "cache-control": "no-store", ...headers };
      h["content-type"] ??= "application/json";
      if (status === 503) h["retry-after"] = RETRY_AFTER_S;
      if (stopping) h.connection = "close";
      res.writeHead(status, h);
      res.end(text);
      return status;
    };
    const error = (status, c, message, headers) => send(status, { error: { code: c, message } }, headers);
    let status;
    try {
      status = await route(req, path, send, error);
    } catch (e) {
      // The handler answers its own errors; this is the service's own failure.
      log(`${req.method} ${path} failed: ${e?.stack ?? e}`);
      status = res.headersSent ? 500 : error(500, "INTERNAL", "the ID service failed");
    } finally {
      if (path === "/ids") metrics.idsInFlight--;
      metrics.answered(known, status ?? 500, code, (performance.now() - started) / 1000);
      if (--inFlight === 0) idle?.();
    }
  });
  server.keepAliveTimeout = 5000;
  server.headersTimeout = BODY_TIMEOUT_MS;
  // A request Node's parser refuses (not HTTP, headers too large or too slow) is answered
  // as JSON too, and the connection closed.
  server.on("clientError", (e, socket) => {
    if (e.code === "ECONNRESET" || !socket.writable) return socket.destroy();
    const [status, code, message] =
      e.code === "ERR_HTTP_REQUEST_TIMEOUT" || e.code === "ERR_HTTP_HEADERS_TIMEOUT"
        ? [408, "TIMEOUT", `the request did not arrive within ${BODY_TIMEOUT_MS} ms`]
        : e.code === "HPE_HEADER_OVERFLOW"
          ? [431, "TOO_LARGE", "the request's headers are too large"]
          : [400, "BAD_REQUEST", "the request is not HTTP/1.1 this service can read"];
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    metrics.answered("other", status, code, 0);
  });

  async function route(req, path, send, error) {
    const allow = { "/ids": "POST", "/health": "GET, HEAD", "/metrics": "GET, HEAD" }[path];
    if (allow === undefined) {
      return error(
        404,
        "NOT_FOUND",
        `path ${JSON.stringify(path)} is not one of "/ids" (POST), "/health" and "/metrics" (GET)`,
      );
    }
    if (!allow.split(", ").includes(req.method)) {
      return error(405, "METHOD", `method ${req.method} is not allowed on ${path} (${allow})`, { allow });
    }
    if (path === "/metrics") {
      // The space's free node ids, from a listing taken now (a store call, bounded): when the
      // store does not answer, the gauges keep the last listing's.
      let timer;
      const listed = Promise.resolve().then(opened.list);
      const late = new Promise((resolve) => (timer = setTimeout(resolve, o.storeTimeoutMs)));
      await Promise.race([listed.then((l) => recordListing(o.space, l)), late])
        .catch(() => {})
        .finally(() => clearTimeout(timer));
      return send(200, metrics.text(handler.lease(o.space)), { "content-type": PROMETHEUS_CONTENT_TYPE });
    }
    if (stopping) return error(503, "SHUTTING_DOWN", "the ID service is shutting down; try again");
    if (path === "/health") {
      const h = await handler.health(o.space);
      if (!CAN_ISSUE.includes(h.state)) return send(503, { status: "unavailable", error: h.error });
      return send(200, { status: "ok", ...h });
    }
    if (o.auth && !/^Bearer +\S+\s*$/i.test(req.headers.authorization ?? "")) {
      return error(401, "UNAUTHORIZED", "POST /ids needs an Authorization: Bearer <token> header", {
        "www-authenticate": 'Bearer realm="snowdrift"',
      });
    }
    let bytes;
    try {
      bytes = await readBody(req);
    } catch (e) {
      return error(e.status, e.code, e.message, { connection: "close" });
    }
    const headers = { "content-type": "application/json" };
    if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
    const { body, count } = idsBody(bytes, o.space);
    // The handler reads the call's name from the URL's last segment; the host is not used.
    const response = await handler(new Request("http://127.0.0.1/ids", { method: "POST", headers, body }));
    const text = await response.text();
    // An answer of 200 holds the `count` IDs asked for; an error's code is counted.
    if (response.status === 200) {
      metrics.ids += count;
      return send(200, text);
    }
    // The handler's 409s (every node id of the space leased, the space's settings not the
    // service's) mean the service cannot issue now, as a store that is away does.
    return send(response.status === 409 ? 503 : response.status, JSON.parse(text));
  }

  // The store's client connects first (a call before would fail), for at most the
  // store's timeout: a store that is away answers 503s until it is back.
  await Promise.race([opened.ready, sleep(o.storeTimeoutMs)]);
  try {
    await new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(o.port, o.host, resolve);
    });
  } catch (e) {
    log(`cannot listen on ${o.host}:${o.port}: ${e.message}`);
    await Promise.race([Promise.resolve(opened.close()).catch(() => {}), sleep(1000)]);
    return 1;
  }
  const { address, port } = server.address();
  const shown = address.includes(":") ? `[${address}]` : address;
  console.log(`snowdrift serve: listening on http://${shown}:${port}`);
  log(
    `space '${o.space}' in ${opened.where}, layout ${JSON.stringify(o.layout)}${o.region === undefined ? "" : `, region ${o.region} of ${o.regionBits} bits`}, ttl ${o.ttlMs} ms, at most ${o.maxCount} IDs a request, ${o.auth ? `${o.tokens.length} token(s)` : "no auth"}`,
  );

  // The lease is taken now rather than by the first request, and kept by the handler's
  // own rules (`health` renews it when due, leases again when it was lost or lapsed): the
  // handler renews only on the requests that find a renewal due, and a service left idle
  // would otherwise lose its node id. It asks twice within the time between a renewal
  // falling due (a third of the TTL) and the lapse (`ttl - skew` after the last one), so
  // the renewal is sent in the first half of that time. Changes are logged.
  let told = "";
  const keep = () =>
    handler.health(o.space).then((h) => {
      const now = !CAN_ISSUE.includes(h.state)
        ? `no lease: ${h.error.message}`
        : h.state === "ok"
          ? `leased node ${h.node} of '${o.space}'`
          : `node ${h.node} of '${o.space}' is ${h.state}: no renewal succeeded for ${h.sinceRenewalMs} ms (it lapses at ${new Date(h.lapseAtMs).toISOString()})`;
      if (now !== told) log(now);
      told = now;
    });
  keep();
  const skew = Math.min(1000, Math.ceil(o.ttlMs / 2) - 1); // the handler's default
  const renewEvery = Math.floor(o.ttlMs / 3);
  const keeper = setInterval(keep, Math.max(10, Math.floor(Math.min(renewEvery, o.ttlMs - skew - renewEvery) / 2)));

  return new Promise((resolve) => {
    const stop = async (signal) => {
      if (stopping) {
        log(`${signal} again: exiting without waiting`);
        process.exit(1);
      }
      stopping = true;
      log(
        `${signal}: finishing ${inFlight} request(s) in flight (within ${o.shutdownMs} ms), then releasing the lease`,
      );
      server.close();
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([new Promise((r) => (idle = r)), sleep(o.shutdownMs)]);
      }
      server.closeAllConnections();
      clearInterval(keeper);
      const lease = handler.lease(o.space);
      await handler.close();
      if (lease !== undefined) {
        // The release `close` made (settled: a lease's release is made once).
        try {
          await lease.release();
          log(`released node ${lease.node} of '${o.space}'`);
        } catch (e) {
          log(
            `node ${lease.node} of '${o.space}' could not be released (${e.message}): it is free again after its TTL`,
          );
        }
      }
      await Promise.race([Promise.resolve(opened.close()).catch(() => {}), sleep(1000)]);
      resolve(0);
    };
    // The service ends here (a client's timers or sockets left open hold no exit).
    process.on("SIGTERM", () => stop("SIGTERM").then(() => process.exit(0)));
    process.on("SIGINT", () => stop("SIGINT").then(() => process.exit(0)));
  });
}

module.exports = { serve, USAGE };
