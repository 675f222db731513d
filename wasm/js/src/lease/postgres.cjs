"use strict";
// `snowdrift/postgres`: node id leases in PostgreSQL, for fleets that run PostgreSQL and
// not Redis. It runs the protocol's SQL (lease/postgres/*.sql, copied into the package's
// `postgres/` by `cargo xtask npm`) as it is, through the caller's node-postgres (`pg`)
// Pool or Client; the package does not depend on `pg`. The holder is `holder.cjs`,
// shared with `snowdrift/redis`.
//
// The connection is the caller's, so its session is left as it was: each call is one
// query of the simple protocol (transaction.sql, connect.sql for that transaction only,
// the call's statement, its parameters written in as escaped literals, and search_path
// put back). PostgreSQL runs them as one implicit transaction: one round trip, and
// nothing of it outlives the call. On a connection inside a transaction of the
// application's, the call does not run: its first argument is NULL there (the functions
// are STRICT), and the call is refused without changing that transaction. Every call is
// bounded by a timeout (the lease's TTL).
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { Lease, lease, leaseOptions, storeError, within } = require("./holder.cjs");
const { describe, wrongType, strArg, options: checkOptions } = require("../check.mjs");

const DEFAULT_SCHEMA = "snowdrift";
// The bounds of the calls that have no TTL: list, and a release of a lease this store
// did not acquire; and of setup.
const LIST_MS = 10_000;
const SETUP_MS = 30_000;

const files = new Map();
/** The statement of `postgres/<name>.sql`, without its comment lines. */
function sql(name) {
  let text = files.get(name);
  if (text === undefined) {
    text = readFileSync(join(__dirname, "postgres", `${name}.sql`), "utf8")
      .split("\n")
      .filter((line) => !line.startsWith("--"))
      .join("\n")
      .trim();
    files.set(name, text);
  }
  return text;
}

/** A parameter as an SQL literal: an integer, a boolean, or text quoted (an E'' string
 * when it holds a backslash). */
function literal(v) {
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new RangeError(`${describe(v)} is not an integer PostgreSQL can take`);
    return String(v);
  }
  if (typeof v === "boolean") return String(v);
  if (v.includes("\0")) throw new RangeError(`${describe(v)} holds a NUL character, which PostgreSQL text cannot`);
  const quoted = v.replaceAll("'", "''");
  return v.includes("\\") ? ` E'${quoted.replaceAll("\\", "\\\\")}'` : `'${quoted}'`;
}

/** The statement `name` with its parameters `$1`, `$2`, ... written in; `$1` as
 * `first` makes it. */
const inline = (name, params, first = (v) => v) =>
  sql(name).replace(/\$(\d+)/g, (_, i) => {
    const v = literal(params[Number(i) - 1]);
    return i === "1" ? first(v) : v;
  });

/** The call `name` with its parameters written in, the first one NULL unless the
 * statement runs in a transaction this query began (a transaction's `now()` is when it
 * began, `statement_timestamp()` when the current query came): the functions are STRICT,
 * so inside the application's transaction the call does not run. */
const guarded = (name, params) =>
  inline(name, params, (v) => `(CASE WHEN now() = statement_timestamp() THEN ${v} END)`);

// A no-op 'error' listener. An idle pooled connection (or a Client) that dies, as every
// connection does when the server restarts, emits 'error', which ends the process when
// nothing listens; the calls see the failure themselves.
const quiet = () => {};
function hear(emitter) {
  if (typeof emitter.on === "function" && !emitter.listeners?.("error").includes(quiet)) emitter.on("error", quiet);
}

/** A pg Pool (whose `query` may use a different connection for every statement) is told
 * from a Client (or a client checked out of a pool) by its counters. */
function connectionsOf(client) {
  if (client === null || typeof client !== "object" || typeof client.query !== "function") {
    throw wrongType("the PostgreSQL client", "a pg Pool or Client", client);
  }
  hear(client);
  if (typeof client.totalCount === "number" && typeof client.connect === "function") {
    return {
      async take() {
        const c = await client.connect();
        // A connection that dies while checked out emits "error" on its client, which the
        // pool listens to only while the client is idle.
        c.on("error", quiet);
        return c;
      },
      // A connection that failed outside SQL is dropped from the pool.
      give(c, failed) {
        c.removeListener("error", quiet);
        c.release(failed);
      },
    };
  }
  return { take: async () => client, give: () => {} };
}

/** Where the client connects, for messages. */
function whereOf(client) {
  const o = client.options ?? {};
  let host = client.host ?? o.host;
  let port = client.port ?? o.port;
  if (host === undefined && typeof o.connectionString === "string") {
    try {
      const url = new URL(o.connectionString);
      host = url.hostname || undefined;
      port = url.port || undefined;
    } catch {}
  }
  return host === undefined ? "PostgreSQL" : `PostgreSQL at ${host}:${port ?? 5432}`;
}

const IN_TRANSACTION =
  "the pg Client is inside a transaction (BEGIN without COMMIT or ROLLBACK): a lease runs each call as a transaction of its own; pass a pg Pool, or a Client the lease uses alone";

/** A failure SQL reported (with its SQLSTATE), which leaves the connection usable. */
const fromSql = (e) => typeof e?.code === "string" && /^[0-9A-Z]{5}$/.test(e.code);

/** The error of a failed call, saying what to do when the lease functions or tables are
 * out of reach (PostgreSQL skips a schema of search_path that does not exist or that the
 * role may not use, and reports a missing function with a hint about casts). */
function explain(e, schema) {
  // SET TRANSACTION in a transaction that already ran a query, at another isolation.
  if (e?.code === "25001") return new Error(IN_TRANSACTION, { cause: e });
  if (["42883", "42P01", "42501"].includes(e?.code) && /snowdrift_/.test(e.message)) {
    return new Error(
      `the snowdrift lease functions are not in schema ${JSON.stringify(schema)}, or this role may not use them: run setup (setup() of snowdrift/postgres, or lease/postgres/setup.sql) for that schema, or grant this role USAGE on the schema and the rights on its tables (PostgreSQL: ${e.message})`,
      { cause: e },
    );
  }
  return e;
}

/** Runs `text` on a connection of `connections`, failing with `message` after `ms`; a
 * pooled connection still busy then is dropped from the pool (its reply would come to
 * nobody). */
async function bounded(connections, text, ms, message) {
  let timedOut = false;
  let taken;
  const work = (async () => {
    const c = await connections.take();
    if (timedOut) {
      connections.give(c);
      return undefined;
    }
    taken = c;
    try {
      const results = await c.query(text);
      if (!timedOut) connections.give(c);
      return results;
    } catch (e) {
      if (!timedOut) connections.give(c, fromSql(e) ? undefined : e);
      throw e;
    }
  })();
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      if (taken !== undefined) connections.give(taken, new Error(message));
      reject(new Error(message));
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

function schemaArg(schema) {
  if (schema === undefined) return DEFAULT_SCHEMA;
  strArg("schema", schema);
  if (schema.length === 0 || schema.length > 63 || schema.includes("\0")) {
    throw new RangeError(`schema ${describe(schema)} is not a PostgreSQL name (1 to 63 characters, no NUL)`);
  }
  return schema;
}

/** Runs the statement `name` of `postgres/` with `params` in the schema, as one
 * transaction in one round trip, within `ms`; resolves with its one row. */
function caller(client, schema) {
  const connections = connectionsOf(client);
  const where = whereOf(client);
  return async (name, params, ms) => {
    // The caller's search_path is put back at the end: inside the application's
    // transaction (where the call does not run) it is left as it was.
    const text = [
      sql("transaction"),
      "SELECT set_config('snowdrift.path', current_setting('search_path'), true)",
      inline("connect", [schema, true]),
      guarded(name, params),
      "SELECT set_config('search_path', current_setting('snowdrift.path'), true)",
    ].join(";\n");
    let results;
    try {
      results = await bounded(connections, text, ms, `${where} did not answer ${name} within ${ms} ms`);
    } catch (e) {
      throw explain(e, schema);
    }
    const { rows } = results.at(-2);
    // The call did not run: its first argument was NULL.
    if (rows.length === 0 || Object.values(rows[0]).every((v) => v === null)) throw new Error(IN_TRANSACTION);
    if (rows.length !== 1) throw new Error(`${name}.sql returned ${rows.length} rows, not 1`);
    return rows[0];
  };
}

/** The protocol's calls on PostgreSQL in `schema`, as the holder takes them. */
function storeIn(client, schema) {
  const run = caller(client, schema);
  // The TTL of each lease acquired here, by space and node id: the bound of its release.
  const ttls = new Map();
  const key = (space, node) => `${node} ${space}`;
  return {
    name: "PostgreSQL",
    async acquire(a) {
      const r = await run("acquire", [a.space, a.capacity, a.ttl, a.skew, a.token, a.holder, a.layout], a.ttl);
      ttls.set(key(a.space, Number(r.node)), a.ttl);
      return { node: Number(r.node), notBefore: Number(r.not_before), until: Number(r.until), now: Number(r.now) };
    },
    async renew(t, ttl) {
      const r = await run("renew", [t.space, t.node, t.token, ttl, t.next ?? ""], ttl);
      return Number(r.until);
    },
    async release(t, issued) {
      const ms = ttls.get(key(t.space, t.node)) ?? LIST_MS;
      ttls.delete(key(t.space, t.node));
      const r = await run("release", [t.space, t.node, t.token, issued, t.next ?? ""], ms);
      return Number(r.released) === 1;
    },
  };
}

/** Leases a node id of the space `options.key` (in the tables of `options.schema`,
 * default "snowdrift"); resolves once the lease is usable. */
async function leaseNode(client, options) {
  const o = leaseOptions(options, () => {}, ["schema"]);
  const schema = schemaArg(options.schema);
  return lease(storeIn(client, schema), o);
}

/** The protocol's calls on PostgreSQL (the tables of `options.schema`, default
 * "snowdrift"), as `snowdrift/http`'s `leaseHandler` takes them (the store interface of
 * rules.mjs). */
function postgresStore(client, options) {
  options = checkOptions("postgresStore", options, ["schema"]);
  const schema = schemaArg(options.schema);
  connectionsOf(client); // checks the client now, not at the first call
  return storeIn(client, schema);
}

/** Creates the schema, its tables and functions where missing, and replaces the
 * functions (setup.sql): idempotent, and how an upgrade updates them. Needs CREATE on
 * the database, no superuser. The connection's settings are restored afterwards. */
async function setup(client, options) {
  options = checkOptions("setup", options, ["schema"]);
  const schema = schemaArg(options.schema);
  const connections = connectionsOf(client);
  let c;
  let failed;
  let late = false;
  const work = async () => {
    const taken = await connections.take();
    if (late) return connections.give(taken);
    c = taken;
    const { rows } = await c.query(
      "SELECT current_setting('search_path') AS path, current_setting('default_transaction_isolation') AS isolation, current_setting('default_transaction_read_only') AS read_only, now() = statement_timestamp() AS own",
    );
    const was = rows[0];
    // setup.sql commits: inside the application's transaction, it would commit that one.
    if (!was.own) throw new Error(IN_TRANSACTION);
    try {
      await c.query(sql("connect"), [schema, false]);
      await c.query(sql("setup"));
    } finally {
      await c.query(
        "SELECT set_config('search_path', $1, false), set_config('default_transaction_isolation', $2, false), set_config('default_transaction_read_only', $3, false)",
        [was.path, was.isolation, was.read_only],
      );
    }
  };
  const running = work();
  try {
    await within(running, SETUP_MS, `${whereOf(client)} did not finish setup within ${SETUP_MS} ms`);
  } catch (e) {
    late = true;
    running.catch(() => {}); // after a timeout, its failure is nobody's
    if (!fromSql(e)) failed = e;
    throw explain(e, schema);
  } finally {
    if (c !== undefined) connections.give(c, failed);
  }
}

/** The space `key` as its store lists it (list.sql), for operators: its settings (null
 * when it does not exist) and every id ever leased, oldest fence first. */
async function list(client, key, options) {
  options = checkOptions("list", options, ["schema"]);
  const space = strArg("key", key);
  const run = caller(client, schemaArg(options.schema));
  let r;
  try {
    r = await run("list", [space], LIST_MS);
  } catch (e) {
    throw storeError(e);
  }
  const num = (v) => (v === null ? null : Number(v));
  return {
    nowMs: Number(r.now),
    capacity: num(r.capacity),
    ttlMs: num(r.ttl),
    skewMs: num(r.skew),
    createdMs: num(r.created),
    next: num(r.next),
    leases: r.nodes.map((node, i) => ({
      node: Number(node),
      untilMs: Number(r.untils[i]),
      holder: r.holders[i] === "" ? null : r.holders[i],
    })),
  };
}

module.exports = { leaseNode, postgresStore, setup, list, Lease };
