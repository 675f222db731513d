#!/usr/bin/env node
"use strict";
// npx snowdrift decode <id> [--layout discord] [--json]
// npx snowdrift generate [-n 10] [--node 3] [--layout twitter]
// npx snowdrift layout [discord] [--json]
// npx snowdrift lease ids:orders [--redis redis://127.0.0.1:6379] [--json]
// npx snowdrift lease ids:orders --postgres postgres://app@127.0.0.1/app [--schema snowdrift]
// npx snowdrift seal <id> --key-file F [--layout twitter] [--tweak HEX] [--form base62]
// npx snowdrift open <sealed> --key-file F [--layout twitter] [--tweak HEX] [--form base62]
// npx snowdrift serve --redis redis://127.0.0.1:6379 --token-file /etc/snowdrift/token (bin/serve.cjs)
const { readFileSync } = require("node:fs");
const net = require("node:net");
const { peer } = require("./peer.cjs");
const { Snowdrift, decode, layoutInfo, toBase32, parseId } = require("../node.cjs");

// The core's preset names (snowdrift::Layout::PRESETS), written in by `cargo xtask npm`.
const PRESETS = "@PRESETS";
const USAGE = `usage:
  snowdrift decode <id> [--layout NAME|JSON] [--json]   the parts of an ID: decimal, a signed
                                                         64-bit column's negative, hex (0x...
                                                         or 16 digits) or base32 (hyphens allowed)
  snowdrift generate [-n COUNT] [--node N] [--layout NAME|JSON] [--json]
                                                         new IDs, one per line
  snowdrift layout [NAME|JSON] [--json]                  a layout's fields, tick, epoch, node
                                                         range and when it runs out
  snowdrift lease <space> [--redis URL] [--json]         the node id leases of a space
                                                         (default redis://127.0.0.1:6379)
  snowdrift lease <space> --postgres URL [--schema NAME] [--json]
                                                         the same, in PostgreSQL (schema
                                                         default snowdrift; needs the pg
                                                         package in the current project)
  snowdrift seal <id> --key-file F [--tweak HEX] [--layout NAME|JSON] [--form FORM] [--json]
                                                         the ID's sealed public form (FF1 over
                                                         AES; F holds the key: 16, 24 or 32
                                                         bytes, raw or as hex)
  snowdrift open <sealed> --key-file F [--tweak HEX] [--layout NAME|JSON] [--form FORM] [--json]
                                                         the ID a sealed ID opens to (any
                                                         value opens to some ID: look it up)
  snowdrift serve (--redis URL | --postgres URL) (--token-file F | --no-auth) [--port N] ...
                                                         an ID service over HTTP: POST /ids,
                                                         GET /health, GET /metrics (all its
                                                         options: snowdrift serve --help)
forms: base62 (default, 11 characters), base32 (13), decimal, hex
layouts: ${PRESETS}, or a JSON object
         such as '{"timeBits":41,"nodeBits":10,"sequenceBits":12,"epochMs":1704067200000}'`;

function parseArgs(argv) {
  const flags = { json: false };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new TypeError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--json") flags.json = true;
    else if (a === "--layout" || a === "-l") flags.layout = value();
    else if (a === "-n" || a === "--count") flags.n = value();
    else if (a === "--node") flags.node = value();
    else if (a === "--redis") flags.redis = value();
    else if (a === "--postgres") flags.postgres = value();
    else if (a === "--schema") flags.schema = value();
    else if (a === "--key-file") flags.keyFile = value();
    else if (a === "--tweak") flags.tweak = value();
    else if (a === "--form") flags.form = value();
    else if (a === "-h" || a === "--help") flags.help = true;
    else if (a.startsWith("-") && !/^-?\d/.test(a)) throw new TypeError(`unknown option ${a}`);
    else rest.push(a);
  }
  return { flags, rest };
}

function layoutOf(text) {
  if (text === undefined) return undefined;
  return text.trim().startsWith("{") ? JSON.parse(text) : text;
}

function integer(name, text, fallback) {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new RangeError(`${name} ${JSON.stringify(text)} is not a non-negative integer`);
  return Number(text);
}

function main(argv) {
  const [command, ...args] = argv;
  if (command === "serve") return require("./serve.cjs").serve(args);
  const { flags, rest } = parseArgs(args);
  if (command === undefined || flags.help || ["help", "--help", "-h"].includes(command)) {
    console.log(USAGE);
    return 0;
  }
  const layout = layoutOf(flags.layout);
  if (command === "decode") {
    if (rest.length !== 1) throw new TypeError("decode takes one ID");
    const id = parseId(rest[0]);
    const p = decode(id, layout);
    const out = {
      id: id.toString(),
      timeMs: p.timeMs,
      date: p.date.toISOString(),
      node: p.node,
      ...(p.datacenter === undefined ? {} : { datacenter: p.datacenter, worker: p.worker }),
      sequence: p.sequence,
      base32: toBase32(id),
    };
    if (flags.json) {
      console.log(JSON.stringify(out));
    } else {
      for (const [k, v] of Object.entries(out)) console.log(`${k.padEnd(12)}${v}`);
    }
    return 0;
  }
  if (command === "generate") {
    if (rest.length !== 0) throw new TypeError(`generate takes no arguments, got ${rest.join(" ")}`);
    const n = integer("-n", flags.n, 1);
    const generator = new Snowdrift({ layout, node: integer("--node", flags.node, 0) });
    const ids = generator.nextBatch(n);
    const text = Array.from(ids, (id) => id.toString());
    console.log(flags.json ? JSON.stringify(text) : text.join("\n"));
    return 0;
  }
  if (command === "layout") {
    if (rest.length > 1) throw new TypeError("layout takes one layout");
    const info = layoutInfo(layoutOf(rest[0] ?? flags.layout));
    // A Date holds times up to year 275760; a custom layout may run out later.
    const exhaustsAt = info.exhaustsAtMs <= 8.64e15 ? new Date(info.exhaustsAtMs).toISOString() : null;
    const out = { ...info, exhaustsAt };
    if (flags.json) console.log(JSON.stringify(out));
    else for (const [k, v] of Object.entries(out)) console.log(`${k.padEnd(15)}${v}`);
    return 0;
  }
  if (command === "lease") {
    if (rest.length !== 1) throw new TypeError("lease takes one space name");
    if (flags.redis !== undefined && flags.postgres !== undefined)
      throw new TypeError("lease takes --redis or --postgres, not both");
    if (flags.schema !== undefined && flags.postgres === undefined)
      throw new TypeError("--schema goes with --postgres");
    const listing =
      flags.postgres === undefined
        ? listRedis(flags.redis ?? "redis://127.0.0.1:6379", rest[0])
        : listPostgres(flags.postgres, flags.schema, rest[0]);
    return listing.then((l) => lease(rest[0], l, flags.json));
  }
  if (command === "seal" || command === "open") {
    if (rest.length !== 1) throw new TypeError(`${command} takes one ID`);
    const sealer = sealerOf(flags, layout);
    const form = flags.form ?? "base62";
    const id = command === "seal" ? parseId(rest[0]) : sealer.openString(rest[0], form);
    const out = {
      id: id.toString(),
      sealed: sealer.sealString(id, form),
      form,
      bits: sealer.bits,
    };
    if (flags.json) console.log(JSON.stringify(out));
    else console.log(command === "seal" ? out.sealed : out.id);
    return 0;
  }
  throw new TypeError(`unknown command ${JSON.stringify(command)}`);
}

/** The sealer of `seal` and `open`: the key read from --key-file (raw bytes, or hex
 * digits with any whitespace around them), --tweak in hex, the layout's width. */
function sealerOf(flags, layout) {
  if (flags.keyFile === undefined) throw new TypeError("seal and open need --key-file FILE");
  const { Sealer } = require("../seal.cjs");
  const raw = readFileSync(flags.keyFile);
  const text = raw.toString("latin1");
  // A file of printable text is a key in hex or no key at all: read as raw bytes, text
  // that is almost hex (a digit missing, a stray character) would seal with another key
  // than the one meant. A raw 16-byte key from a random source is all printable less
  // than once in four million.
  let key = new Uint8Array(raw);
  if (/^[\x20-\x7e\t\n\r]*$/.test(text)) {
    const digits = text.trim();
    const file = `the key file ${flags.keyFile}`;
    if (!/^[0-9a-fA-F]*$/.test(digits)) throw new RangeError(`${file} holds text that is not a key in hex`);
    if (![32, 48, 64].includes(digits.length)) {
      throw new RangeError(`${file} holds ${digits.length} hex digits: a hex key has 32, 48 or 64`);
    }
    key = digits;
  }
  const width = typeof layout === "object" ? { fitsI64: layoutInfo(layout).fitsI64 } : layout;
  return new Sealer(key, { layout: width, tweak: flags.tweak });
}

// `snowdrift lease`: the lease protocol's list.lua (lease/PROTOCOL.md), run by
// `snowdrift/redis`'s `list` over the few lines of RESP2 it needs, so the command depends
// on no Redis client.
const TIMEOUT_MS = 5000;

/** host and port of `redis://[user:pass@]host[:port]` or `host:port`. */
function address(text) {
  const url = new URL(text.includes("://") ? text : `redis://${text}`);
  if (url.protocol !== "redis:")
    throw new RangeError(`--redis ${JSON.stringify(text)} is not a redis:// URL (TLS is not supported)`);
  return {
    host: url.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1",
    port: Number(url.port || 6379),
    password: url.password ? decodeURIComponent(url.password) : undefined,
    user: url.username ? decodeURIComponent(url.username) : undefined,
  };
}

const bulk = (s) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
const command = (args) => `*${args.length}\r\n${args.map((a) => bulk(String(a))).join("")}`;

/** One RESP2 reply at `buf[i..]`: [value, next index], or undefined when incomplete.
 * Error replies become { error: message }. */
function parseReply(buf, i) {
  const eol = buf.indexOf("\r\n", i);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[i]);
  const line = buf.toString("utf8", i + 1, eol);
  const next = eol + 2;
  if (type === "+") return [line, next];
  if (type === "-") return [{ error: line }, next];
  if (type === ":") return [Number(line), next];
  if (type === "$") {
    const n = Number(line);
    if (n < 0) return [null, next];
    if (buf.length < next + n + 2) return undefined;
    return [buf.toString("utf8", next, next + n), next + n + 2];
  }
  if (type === "*") {
    const n = Number(line);
    const out = [];
    let at = next;
    for (let k = 0; k < n; k++) {
      const r = parseReply(buf, at);
      if (r === undefined) return undefined;
      out.push(r[0]);
      at = r[1];
    }
    return [out, at];
  }
  throw new Error(`unexpected reply from Redis: ${JSON.stringify(buf.toString("utf8", i, eol))}`);
}

/** Sends `commands` on one connection; resolves with their replies. */
function exchange({ host, port }, commands) {
  return new Promise((resolve, reject) => {
    const where = `${host}:${port}`;
    const socket = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const replies = [];
    const fail = (e) => {
      socket.destroy();
      reject(e);
    };
    socket.setTimeout(TIMEOUT_MS, () =>
      fail(new Error(`cannot reach Redis at ${where}: no reply within ${TIMEOUT_MS} ms`)),
    );
    socket.on("error", (e) => fail(new Error(`cannot reach Redis at ${where}: ${e.message.replace(/ \S+:\d+$/, "")}`)));
    socket.on("connect", () => socket.write(commands.map(command).join("")));
    socket.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      let r;
      try {
        while ((r = parseReply(buf, 0)) !== undefined) {
          replies.push(r[0]);
          buf = buf.subarray(r[1]);
        }
      } catch (e) {
        return fail(e);
      }
      if (replies.length === commands.length) {
        socket.end();
        resolve(replies);
      }
    });
    socket.on("end", () => fail(new Error(`Redis at ${where} closed the connection`)));
  });
}

/** A client of the shape `snowdrift/redis` takes (ioredis's `evalsha`/`eval`) over
 * `exchange`, following one MOVED redirect (Redis Cluster). Error replies reject with
 * their message (`NOSCRIPT ...` makes `list` send the script itself). */
function respClient(at) {
  const send = async (args) => {
    for (let hop = 0; ; hop++) {
      const auth = at.password === undefined ? [] : [at.user ? ["AUTH", at.user, at.password] : ["AUTH", at.password]];
      const replies = await exchange(at, [...auth, args]);
      const failed = replies.find((r) => r !== null && typeof r === "object" && "error" in r);
      if (failed === undefined) return replies[replies.length - 1];
      const moved = /^MOVED \d+ (.*):(\d+)$/.exec(failed.error);
      if (moved && hop === 0) {
        at = { ...at, host: moved[1] || at.host, port: Number(moved[2]) };
        continue;
      }
      if (/^NOSCRIPT/.test(failed.error)) throw new Error(failed.error);
      throw new Error(`Redis at ${at.host}:${at.port}: ${failed.error}`);
    }
  };
  return {
    evalsha: (sha, ...rest) => send(["EVALSHA", sha, ...rest]),
    eval: (script, ...rest) => send(["EVAL", script, ...rest]),
  };
}

function seconds(ms) {
  const s = Math.abs(ms) / 1000;
  return s < 10 ? `${s.toFixed(1)} s` : s < 120 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`;
}

/** The space as list.lua gives it, through `snowdrift/redis`'s `list`, with the layout
 * text its meta hash records (lease/PROTOCOL.md). */
async function listRedis(redis, space) {
  const { list } = require("../redis.cjs");
  const client = respClient(address(redis));
  const listing = await list(client, space);
  const layout = await client.eval("return redis.call('HGET', KEYS[1], 'layout')", 1, `{${space}}:meta`);
  return { ...listing, layout: listing.capacity === null || typeof layout !== "string" ? null : layout };
}

/** The space as list.sql gives it, through the pg package of the current project (the
 * package itself depends on no PostgreSQL client). */
async function listPostgres(url, schema, space) {
  const pg = peer("pg");
  if (pg === undefined) throw new Error("--postgres needs the pg package in the current project: npm install pg");
  const { list } = require("../postgres.cjs");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (e) {
    throw new Error(`cannot reach PostgreSQL at ${client.host}:${client.port}: ${e.message}`);
  }
  try {
    const listing = await list(client, space, { schema });
    const table = `"${(schema ?? "snowdrift").replaceAll('"', '""')}".snowdrift_spaces`;
    const { rows } = await client.query(`SELECT layout FROM ${table} WHERE name = $1`, [space]);
    return { ...listing, layout: listing.capacity === null ? null : (rows[0]?.layout ?? null) };
  } finally {
    await client.end().catch(() => {});
  }
}

/** The region a space's layout text ends with (lease/PROTOCOL.md), or null. */
function regionOf(layout) {
  const m = /, region (\d+) of (\d+) bits$/.exec(layout ?? "");
  return m === null ? null : { id: Number(m[1]), bits: Number(m[2]) };
}

async function lease(space, listing, json) {
  const { nowMs: now, capacity, ttlMs: ttl, skewMs: skew, createdMs: created } = listing;
  // In a space with a region the store leases worker ids; IDs carry the region above them.
  const region = regionOf(listing.layout);
  const base = region === null ? 0 : region.id * capacity;
  const leases = listing.leases.map((l) => ({
    ...l,
    ...(region === null ? {} : { node: base + l.node, leased: l.node }),
    state: l.holder === null ? "released" : l.untilMs > now ? "live" : "ended",
  }));
  leases.sort((a, b) => a.node - b.node);
  if (json) {
    console.log(JSON.stringify({ space, ...listing, region, leases }));
    return 0;
  }
  if (capacity === null) {
    console.log(`space '${space}' has no leases`);
    return 0;
  }
  console.log(
    `space '${space}': ${capacity} node ids, ttl ${ttl} ms, skew ${skew} ms, created ${new Date(created).toISOString()}`,
  );
  if (region !== null) {
    console.log(
      `region ${region.id} of ${region.bits} bits: node ids ${base}..=${base + capacity - 1} (the region above the leased id)`,
    );
  }
  const width = Math.max(6, ...leases.map((l) => (l.holder ?? "").length));
  console.log(`${"node".padStart(6)}  ${"holder".padEnd(width)}  lease`);
  for (const l of leases) {
    const when =
      l.state === "released"
        ? "released"
        : l.state === "live"
          ? `ends in ${seconds(l.untilMs - now)}`
          : `ended ${seconds(now - l.untilMs)} ago`;
    console.log(`${String(l.node).padStart(6)}  ${(l.holder ?? "").padEnd(width)}  ${when}`);
  }
  return 0;
}

Promise.resolve()
  .then(() => main(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      console.error(`snowdrift: ${e.message}`);
      if (e instanceof TypeError && !(e.message || "").includes(" must be ")) console.error(e.usage ?? USAGE);
      process.exitCode = 2;
    },
  );
