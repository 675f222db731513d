"use strict";
// `snowdrift/postgres`: node id leases in PostgreSQL, for fleets that run PostgreSQL and
// not Redis. It runs the protocol's SQL (lease/postgres/*.sql, copied into the package's
// `postgres/` by `cargo xtask npm`) as it is, through the caller's node-postgres (`pg`)
// Pool or Client; the package does not depend on `pg`. The holder is `holder.cjs`,
// shared with `snowdrift/redis`.
//
// The connection is the caller's, so its session is left as it was: each call is one
// query of the simple protocol, connect.sql for that transaction only and the call's
// statement, its parameters written in as escaped literals. PostgreSQL runs the two as
// one implicit transaction: one round trip, and nothing of it outlives the call.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { Lease, lease, leaseOptions, storeError } = require("./holder.cjs");
const { describe, wrongType, strArg, options: checkOptions } = require("./check.mjs");

const DEFAULT_SCHEMA = "snowdrift";

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

/** The statement `name` with its parameters `$1`, `$2`, ... written in. */
const inline = (name, params) => sql(name).replace(/\$(\d+)/g, (_, i) => literal(params[Number(i) - 1]));

/** A pg Pool (whose `query` may use a different connection for every statement) is told
 * from a Client (or a client checked out of a pool) by its counters. */
function connectionsOf(client) {
  if (client === null || typeof client !== "object" || typeof client.query !== "function") {
    throw wrongType("the PostgreSQL client", "a pg Pool or Client", client);
  }
  if (typeof client.totalCount === "number" && typeof client.connect === "function") {
    // A connection that dies while checked out emits "error" on its client, which the
    // pool listens to only while the client is idle: unheard, it would end the process.
    // The call sees the failure anyway.
    const ignore = () => {};
    return {
      async take() {
        const c = await client.connect();
        c.on("error", ignore);
        return c;
      },
      // A connection that failed outside SQL is dropped from the pool.
      give(c, failed) {
        c.removeListener("error", ignore);
        c.release(failed);
      },
    };
  }
  return { take: async () => client, give: () => {} };
}

/** A failure SQL reported (with its SQLSTATE), which leaves the connection usable. */
const fromSql = (e) => typeof e?.code === "string" && /^[0-9A-Z]{5}$/.test(e.code);

function schemaArg(schema) {
  if (schema === undefined) return DEFAULT_SCHEMA;
  strArg("schema", schema);
  if (schema.length === 0 || schema.length > 63 || schema.includes("\0")) {
    throw new RangeError(`schema ${describe(schema)} is not a PostgreSQL name (1 to 63 characters, no NUL)`);
  }
  return schema;
}

/** Runs the statement `name` of `postgres/` with `params` in the schema, as one
 * transaction in one round trip; resolves with its one row. */
function caller(client, schema) {
  const connections = connectionsOf(client);
  return async (name, params) => {
    const text = `${inline("connect", [schema, true])};\n${inline(name, params)}`;
    const c = await connections.take();
    let results;
    try {
      results = await c.query(text);
    } catch (e) {
      connections.give(c, fromSql(e) ? undefined : e);
      throw e;
    }
    connections.give(c);
    const { rows } = results.at(-1);
    if (rows.length !== 1) throw new Error(`${name}.sql returned ${rows.length} rows, not 1`);
    return rows[0];
  };
}

/** The protocol's calls on PostgreSQL in `schema`, as the holder takes them. */
function storeIn(client, schema) {
  const run = caller(client, schema);
  return {
    name: "PostgreSQL",
    async acquire(a) {
      const r = await run("acquire", [a.space, a.capacity, a.ttl, a.skew, a.token, a.holder, a.layout]);
      return { node: Number(r.node), notBefore: Number(r.not_before), until: Number(r.until), now: Number(r.now) };
    },
    async renew(t, ttl) {
      const r = await run("renew", [t.space, t.node, t.token, ttl]);
      return Number(r.until);
    },
    async release(t, issued) {
      const r = await run("release", [t.space, t.node, t.token, issued]);
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
 * lease-rules.mjs). */
function postgresStore(client, options) {
  options = checkOptions("postgresStore", options, ["schema"]);
  const schema = schemaArg(options.schema);
  connectionsOf(client); // checks the client now, not at the first call
  return storeIn(client, schema);
}

/** Creates the schema, its tables and functions where missing, and replaces the
 * functions (setup.sql): idempotent, and how an upgrade updates them. Needs CREATE on
 * the database, no superuser. The connection's search_path is restored afterwards. */
async function setup(client, options) {
  options = checkOptions("setup", options, ["schema"]);
  const schema = schemaArg(options.schema);
  const connections = connectionsOf(client);
  const c = await connections.take();
  let failed;
  try {
    const { rows } = await c.query("SELECT current_setting('search_path') AS path");
    try {
      await c.query(sql("connect"), [schema, false]);
      await c.query(sql("setup"));
    } finally {
      await c.query("SELECT set_config('search_path', $1, false)", [rows[0].path]);
    }
  } catch (e) {
    if (!fromSql(e)) failed = e;
    throw e;
  } finally {
    connections.give(c, failed);
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
    r = await run("list", [space]);
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
