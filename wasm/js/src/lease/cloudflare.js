// `snowdrift/cloudflare`: node id leases for Cloudflare Workers. The store is the
// Durable Object below; the client (`leaseNode`, `leased`, at the end of this file) turns
// a lease from it into a fenced generator per isolate. The protocol is lease/PROTOCOL.md,
// as a Durable Object. One object per space (`namespace.idFromName(space)`)
// keeps the space's records in its SQLite storage and answers the protocol's four calls
// over RPC: acquire, renew, release and list, with the replies and the error texts of the
// Redis scripts (`lease/lua/*.lua`), so one client-side mapper serves every store; and
// `ids`, IDs it issues itself (the HTTP handler's `ids` call), from an id it takes for the
// call alone.
//
// Each call reads, decides and writes inside one `transactionSync`, with no `await`
// anywhere: a Durable Object runs one event at a time only between awaits, so nothing
// else runs between the read and the write. The storage's output gate holds the reply
// until the write is durable: a holder never hears of a grant or a renewal that the
// storage could still lose by a crash or a restart of the object.
//
// Times are Unix ms of the object's clock: `Date.now()`, never behind the newest time the
// storage recorded, and moving on at the local clock's speed while the host's clock is
// behind (see `#now` below and PROTOCOL.md, "Cloudflare Durable Objects").
// The guard against lost storage: the object's storage has an incarnation, a random
// marker written with its tables. A space's records name the incarnation that wrote them.
// Tables that are missing (a wiped storage, `deleteAll()`), a space of another
// incarnation, or a space that leased ids but has none of their records: the space starts
// over (its holders' renewals answer LOST, and they stop), and every lease granted in its
// first ttl + skew ms is fenced after that window, beyond anything a holder of the lost
// records could still issue.
import { DurableObject } from "cloudflare:workers";
import { describe, intArg, pastFence, strArg, textArg, wrongType } from "../check.mjs";
import { Backoff, HeldLease, acquireLease, leaseGenerator, leaseOptions } from "./rules.mjs";
import { MAX_HOLDER, MAX_NODE_BITS, MAX_SPACE_NAME, MAX_TOKEN, MAX_TTL_MS, MIN_TTL_MS } from "./limits.mjs";
// The package's workerd entry, beside this file once built (the build leaves it external).
import * as api from "./workerd.js";

// The widest settings any client of the protocol uses (limits.mjs).
const MAX_CAPACITY = 2 ** MAX_NODE_BITS;
const MAX_TIME_MS = Number.MAX_SAFE_INTEGER;
// The longest layout text the object stores (a layout's text has about 100 characters).
const MAX_LAYOUT_TEXT = 1024;
// Most IDs one `ids` call issues (as the HTTP handler's `maxIds`).
const MAX_IDS = 100_000;
// The layout text of lease/PROTOCOL.md, read back into a layout (and the space's region,
// if any) for the object's own generator (`ids`).
const LAYOUT_TEXT =
  /^time (\d+) bits of (\d+) ms from (-?\d+), node (\d+) bits, sequence (\d+) bits, (node above sequence|sequence above node)(?:, region (\d+) of (\d+) bits)?$/;

// The store row holds the incarnation and `clock`, the newest time a call used: the
// object's clock is never behind it, whatever the host's clock says after a restart or a
// move to another machine.
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS snowdrift_store (
    one INTEGER PRIMARY KEY CHECK (one = 0),
    incarnation TEXT NOT NULL,
    clock INTEGER NOT NULL
  )`,
  // One row per space: its settings (one space, one setting), when it started, the lowest
  // id never leased, and the incarnation of the storage that wrote it.
  `CREATE TABLE IF NOT EXISTS snowdrift_spaces (
    name TEXT PRIMARY KEY,
    capacity INTEGER NOT NULL,
    ttl INTEGER NOT NULL,
    skew INTEGER NOT NULL,
    layout TEXT NOT NULL,
    created INTEGER NOT NULL,
    next INTEGER NOT NULL,
    incarnation TEXT NOT NULL
  )`,
  // One row per id ever leased: its fence (the end of its newest lease), the token of the
  // lease holding it (NULL once released) and the holder's description.
  `CREATE TABLE IF NOT EXISTS snowdrift_leases (
    space TEXT NOT NULL,
    node INTEGER NOT NULL,
    fence INTEGER NOT NULL,
    token TEXT,
    holder TEXT,
    PRIMARY KEY (space, node)
  )`,
  "CREATE INDEX IF NOT EXISTS snowdrift_leases_by_fence ON snowdrift_leases (space, fence, node)",
];

/** The argument object of a call. */
function request(what, v) {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw wrongType(`the ${what} request`, "an object", v);
  return v;
}

const spaceArg = (v) => textArg("space", v, 1, MAX_SPACE_NAME);
const nodeArg = (v) => intArg("node", v, 0, MAX_CAPACITY - 1);
const tokenArg = (v) => textArg("token", v, 1, MAX_TOKEN);
// The token a renewal puts in place of the lease's (optional; see renew).
const nextArg = (v) => (v === undefined || v === "" ? undefined : textArg("next", v, 1, MAX_TOKEN));
const ttlArg = (v) => intArg("ttl", v, MIN_TTL_MS, MAX_TTL_MS);

/** The settings of a space every client of it shares, checked. */
function settingsArg(req) {
  const space = spaceArg(req.space);
  const capacity = intArg("capacity", req.capacity, 1, MAX_CAPACITY);
  const ttl = ttlArg(req.ttl);
  const skew = intArg("skew", req.skew, 0, Math.ceil(ttl / 2) - 1);
  const layout = textArg("layout", req.layout, 1, MAX_LAYOUT_TEXT);
  return { space, capacity, ttl, skew, layout };
}

/** The layout a space's layout text describes (lease/PROTOCOL.md), for `ids`, with the
 * leased `workerBits` and `base`, the node id of leased id 0 (the region's, if any). */
function layoutOf(text) {
  const m = LAYOUT_TEXT.exec(text);
  if (m === null) {
    throw new RangeError(
      `layout ${describe(text)} is not a layout's text ("time 41 bits of 1 ms from 1288834974657, node 10 bits, sequence 12 bits, node above sequence")`,
    );
  }
  const [timeBits, unitMs, epochMs, nodeBits, sequenceBits] = m.slice(1, 6).map(Number);
  const order = m[6] === "node above sequence" ? "node-sequence" : "sequence-node";
  // A region's id sits above the leased worker bits: leased id `n` is node `base + n`.
  let workerBits = nodeBits;
  let base = 0;
  if (m[7] !== undefined) {
    const [id, bits] = [Number(m[7]), Number(m[8])];
    if (bits < 1 || bits >= nodeBits || id >= 2 ** bits) {
      throw new RangeError(
        `layout ${describe(text)} has a region outside its node field (bits 1..=${nodeBits - 1}, id below 2^bits)`,
      );
    }
    workerBits = nodeBits - bits;
    base = id * 2 ** workerBits;
  }
  return { layout: { timeBits, unitMs, epochMs, nodeBits, sequenceBits, order }, workerBits, base };
}

/** The token of the rows `ids` issues from in a storage of `incarnation` (never revealed:
 * no client can send it). */
const idsToken = (incarnation) => `ids ${incarnation}`;

/** Thrown inside `ids`'s transaction (rolling it back) when the id has no tick to issue in. */
class Unusable extends Error {
  constructor(wait) {
    super("not usable yet");
    this.wait = wait;
  }
}

/** An error reply of the protocol: its message starts with the code word. */
const reply = (code, message) => new Error(`${code} ${message}`);

/** The leases of one space (any number of spaces works; one object per space spreads
 * the load and is what the clients do). */
export class SnowdriftLeases extends DurableObject {
  // The object's clock while this instance runs: a reading and the local monotonic time
  // it was taken at (see `#now`).
  #anchor;
  // The object's clock at the current call, for the generator of `ids`.
  #reading = 0;
  // The generator `ids` issues from, per space, while this instance runs: { gen, token,
  // node, fence }, valid while the space's row of that id still says `token` and `fence`.
  #issuers = new Map();

  /** Node id `node` (the lowest never leased, else the one whose fence passed longest
   * ago) of `space` for `ttl` ms: `{node, notBefore, until, now}`. Errors: LEASED (every id
   * is leased), CONFIG (the space has other settings; the message names both). */
  acquire(req) {
    request("acquire", req);
    const settings = settingsArg(req);
    const token = tokenArg(req.token);
    const holder = textArg("holder", req.holder, 0, MAX_HOLDER);
    return this.ctx.storage.transactionSync(() => {
      const { sql, incarnation, now } = this.#open();
      const s = this.#space(sql, incarnation, now, settings);
      const { node, notBefore } = this.#grant(sql, s, now, token, holder, idsToken(incarnation));
      return { node, notBefore, until: now + s.ttl, now };
    });
  }

  /**
   * `count` IDs of `space` issued by the object itself, for callers that cannot run a
   * generator (the HTTP handler's `ids`): `{node, ids}`, the IDs as decimal strings,
   * increasing. The object takes a node id for the call alone, as an acquire would (its
   * own from the call before while nobody took it over since), issues from it and hands
   * it on at once from the newest ID issued, as a release does: no id stays held between
   * calls. A new space's first calls, while its guard window leaves no tick to issue in,
   * answer `{node: null, ids: [], wait}`: try again in `wait` ms. Errors as acquire's.
   */
  ids(req) {
    request("ids", req);
    const settings = settingsArg(req);
    const holder = textArg("holder", req.holder, 0, MAX_HOLDER);
    const count = intArg("count", req.count, 1, MAX_IDS);
    const { layout, workerBits, base } = layoutOf(settings.layout);
    if (settings.capacity > 2 ** workerBits) {
      throw new RangeError(
        `capacity ${settings.capacity} is outside the allowed range 1..=${2 ** workerBits} (the layout's node ids${workerBits < layout.nodeBits ? " below its region" : ""})`,
      );
    }
    const tickMs = layout.unitMs;
    try {
      return this.ctx.storage.transactionSync(() => {
        const { sql, incarnation, now } = this.#open();
        const s = this.#space(sql, incarnation, now, settings);
        const until = now + s.ttl;
        // A new space's guard window leaves no tick to issue in yet: its row stays (created
        // now, or before), nothing is granted.
        const guard = s.created + s.ttl + s.skew;
        if (now < guard && until - guard <= tickMs) return { node: null, ids: [], wait: guard + tickMs + 1 - until };
        const token = idsToken(incarnation);
        const own = sql
          .exec("SELECT node, fence FROM snowdrift_leases WHERE space = ? AND token = ?", s.name, token)
          .toArray()[0];
        let issuer = this.#issuers.get(s.name);
        if (
          issuer !== undefined &&
          (issuer.token !== token || issuer.node !== own?.node || issuer.fence !== own?.fence)
        ) {
          issuer.gen.free();
          issuer = undefined;
          this.#issuers.delete(s.name);
        }
        if (issuer === undefined) {
          let node;
          let notBefore;
          if (own !== undefined) {
            // Its own id from an earlier call (another instance's): every ID issued then is
            // before the fence that call wrote.
            node = own.node;
            notBefore = Math.max(own.fence - 1, now);
            if (now < guard && notBefore < guard) notBefore = guard;
            sql.exec("UPDATE snowdrift_leases SET holder = ? WHERE space = ? AND node = ?", holder, s.name, node);
          } else {
            ({ node, notBefore } = this.#grant(sql, s, now, token, holder, token));
          }
          if (until - notBefore <= tickMs) throw new Unusable(notBefore + tickMs + 1 - until);
          const clock = () => this.#reading;
          const gen = leaseGenerator(api, {
            node: base + node,
            notBefore,
            until,
            layout,
            facts: { epochMs: layout.epochMs },
            clock,
          });
          issuer = { gen, token, node };
          this.#issuers.set(s.name, issuer);
        }
        issuer.gen.setFenceMs(until);
        let ids;
        try {
          ids = Array.from(issuer.gen.nextBatch(count), String);
        } catch (e) {
          // `count` IDs do not fit before the fence yet (a new space's guard window).
          if (pastFence(e)) throw new Unusable(tickMs);
          throw e;
        }
        // Handed on from the newest ID issued: the next holder of the id issues after it.
        issuer.fence = issuer.gen.issuedThroughMs + 1;
        sql.exec(
          "UPDATE snowdrift_leases SET fence = ? WHERE space = ? AND node = ?",
          issuer.fence,
          s.name,
          issuer.node,
        );
        return { node: base + issuer.node, ids };
      });
    } catch (e) {
      if (e instanceof Unusable) return { node: null, ids: [], wait: e.wait };
      throw e;
    }
  }

  /** Renews the lease `token` of `node`: `{until, now}`, the fence moved forward only.
   * The lease's token becomes `next` when given (lease/PROTOCOL.md): a renewal that finds
   * `next` already there is the same holder's, sent again; a copy of the holder renewing
   * second finds neither. Error LOST when the id is no longer this lease's. */
  renew(req) {
    request("renew", req);
    const space = spaceArg(req.space);
    const node = nodeArg(req.node);
    const token = tokenArg(req.token);
    const ttl = ttlArg(req.ttl);
    const next = nextArg(req.next);
    return this.ctx.storage.transactionSync(() => {
      const { sql, incarnation, now } = this.#open();
      const fence = this.#held(incarnation, space, node, token, next)?.fence;
      if (fence === undefined) {
        throw reply(
          "LOST",
          `node id ${node} of '${space}' is no longer held by this lease (taken over after it ended, renewed by a copy of this holder, or the object's storage was wiped)`,
        );
      }
      const until = Math.max(fence, now + ttl);
      sql.exec(
        "UPDATE snowdrift_leases SET fence = ?, token = ? WHERE space = ? AND node = ?",
        until,
        next ?? token,
        space,
        node,
      );
      return { until, now };
    });
  }

  /** Releases the lease `token` (or `next`, which a renewal without a reply may have put
   * in its place) of `node`, its fence brought down to `issued + 1` (never up): true, or
   * false when the id was no longer this lease's. */
  release(req) {
    request("release", req);
    const space = spaceArg(req.space);
    const node = nodeArg(req.node);
    const token = tokenArg(req.token);
    const issued = intArg("issued", req.issued, 0, MAX_TIME_MS - 1);
    const next = nextArg(req.next);
    return this.ctx.storage.transactionSync(() => {
      const { sql, incarnation } = this.#open();
      const lease = this.#held(incarnation, space, node, token, next);
      if (lease === undefined) return false;
      sql.exec(
        "UPDATE snowdrift_leases SET fence = ?, token = NULL, holder = NULL WHERE space = ? AND node = ?",
        Math.min(lease.fence, issued + 1),
        space,
        node,
      );
      return true;
    });
  }

  /** The space's settings and every id ever leased with its fence and holder (`""` when
   * released), oldest fence first; the settings are null for a space that does not exist.
   * Read-only. */
  list(space) {
    spaceArg(space);
    return this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      const store = this.#store();
      const now = this.#now(store?.clock ?? 0);
      const s =
        store &&
        sql
          .exec("SELECT * FROM snowdrift_spaces WHERE name = ? AND incarnation = ?", space, store.incarnation)
          .toArray()[0];
      if (s === undefined) {
        return { now, capacity: null, ttl: null, skew: null, created: null, next: null, ids: [] };
      }
      const ids = sql
        .exec("SELECT node, fence, holder FROM snowdrift_leases WHERE space = ? ORDER BY fence, node", space)
        .toArray()
        .map((l) => ({ node: l.node, until: l.fence, holder: l.holder ?? "" }));
      const { capacity, ttl, skew, created, next } = s;
      return { now, capacity, ttl, skew, created, next, ids };
    });
  }

  /** The store row, or undefined when the tables are missing. */
  #store() {
    try {
      return this.ctx.storage.sql.exec("SELECT incarnation, clock FROM snowdrift_store").toArray()[0];
    } catch (e) {
      if (/no such table/.test(e?.message ?? "")) return undefined;
      throw e;
    }
  }

  /** The tables (made when missing: a new or wiped storage gets a new incarnation) and the
   * object's clock, recorded as the newest time used. Within a transaction. */
  #open() {
    const sql = this.ctx.storage.sql;
    let store = this.#store();
    if (store === undefined) {
      for (const statement of SCHEMA) sql.exec(statement);
      store = { incarnation: crypto.randomUUID(), clock: 0 };
      sql.exec("INSERT OR REPLACE INTO snowdrift_store VALUES (0, ?, 0)", store.incarnation);
    }
    const now = this.#now(store.clock);
    if (now > store.clock) sql.exec("UPDATE snowdrift_store SET clock = ?", now);
    return { sql, incarnation: store.incarnation, now };
  }

  /**
   * The object's clock: never behind `recorded` (the newest time the storage recorded) nor
   * behind the host's clock, and moving on at the speed of the local monotonic clock from
   * its previous reading in this instance. After a restart or a move to a host whose clock
   * is behind the last one's, it goes on from the newest time recorded at real speed,
   * ahead of the host's clock by the difference, so fences still pass and renewals still
   * move them; a host clock stepping forward moves it forward.
   */
  #now(recorded) {
    const mono = performance.now();
    const host = Date.now();
    const a = this.#anchor;
    const since = a === undefined ? -Infinity : a.at + Math.floor(mono - a.mono);
    let now = since;
    if (host > now || recorded > now) {
      now = Math.max(host, recorded);
      this.#anchor = { at: now, mono };
    }
    this.#reading = now;
    return now;
  }

  /** The space's row, made (or started over, when its records may have lost writes) for
   * `settings`; CONFIG when it has other settings. Within a transaction. */
  #space(sql, incarnation, now, { space, capacity, ttl, skew, layout }) {
    const s = sql.exec("SELECT * FROM snowdrift_spaces WHERE name = ?", space).toArray()[0];
    if (
      s === undefined ||
      s.incarnation !== incarnation ||
      (s.next > 0 && sql.exec("SELECT 1 FROM snowdrift_leases WHERE space = ? LIMIT 1", space).toArray().length === 0)
    ) {
      // New, or records that may have lost writes: the space starts over.
      sql.exec("DELETE FROM snowdrift_leases WHERE space = ?", space);
      sql.exec("DELETE FROM snowdrift_spaces WHERE name = ?", space);
      sql.exec(
        "INSERT INTO snowdrift_spaces VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
        space,
        capacity,
        ttl,
        skew,
        layout,
        now,
        incarnation,
      );
      return { name: space, capacity, ttl, skew, layout, created: now, next: 0 };
    }
    if (s.capacity !== capacity || s.ttl !== ttl || s.skew !== skew || s.layout !== layout) {
      throw reply(
        "CONFIG",
        `space '${space}' leases ${s.capacity} node ids of layout "${s.layout}" for ${s.ttl} ms (skew ${s.skew} ms); this client asked for ${capacity} node ids of layout "${layout}" for ${ttl} ms (skew ${skew} ms)`,
      );
    }
    return s;
  }

  /** Grants an id of space `s` to `token` until `now + ttl`: the lowest never leased, else
   * the one whose fence passed longest ago, else the one `ids` used last (row token
   * `spare`: nothing holds it between calls, and its fence is the newest ID issued);
   * `{node, notBefore}`, notBefore never below the object's clock nor inside the guard
   * window of a new space. LEASED when none is free. Within a transaction. */
  #grant(sql, s, now, token, holder, spare) {
    let node;
    let notBefore;
    if (s.next < s.capacity) {
      // The lowest id never leased in this space.
      node = s.next;
      notBefore = 0;
      sql.exec("UPDATE snowdrift_spaces SET next = ? WHERE name = ?", node + 1, s.name);
      sql.exec("INSERT INTO snowdrift_leases VALUES (?, ?, ?, ?, ?)", s.name, node, now + s.ttl, token, holder);
    } else {
      // The id whose lease ended longest ago, if one has ended.
      let oldest = sql
        .exec("SELECT node, fence FROM snowdrift_leases WHERE space = ? ORDER BY fence, node LIMIT 1", s.name)
        .toArray()[0];
      if (oldest === undefined || oldest.fence > now) {
        oldest = sql
          .exec("SELECT node, fence FROM snowdrift_leases WHERE space = ? AND token = ?", s.name, spare)
          .toArray()[0];
      }
      if (oldest === undefined) throw reply("LEASED", `all ${s.capacity} node ids of '${s.name}' are leased`);
      node = oldest.node;
      notBefore = oldest.fence - 1;
      sql.exec(
        "UPDATE snowdrift_leases SET fence = ?, token = ?, holder = ? WHERE space = ? AND node = ?",
        now + s.ttl,
        token,
        holder,
        s.name,
        node,
      );
    }
    // Never below the object's clock, and after the guard window of a new space.
    notBefore = Math.max(notBefore, now);
    const guard = s.created + s.ttl + s.skew;
    if (now < guard && notBefore < guard) notBefore = guard;
    return { node, notBefore };
  }

  /** The lease row of `node` if `token` (or `next`) holds it, in a space of this incarnation. */
  #held(incarnation, space, node, token, next = token) {
    return this.ctx.storage.sql
      .exec(
        `SELECT l.fence FROM snowdrift_leases l JOIN snowdrift_spaces s ON s.name = l.space
         WHERE l.space = ? AND l.node = ? AND l.token IN (?, ?) AND s.incarnation = ?`,
        space,
        node,
        token,
        next ?? token,
        incarnation,
      )
      .toArray()[0];
  }
}

// ---- The Workers client ----------------------------------------------------------------
// Workers have no timers between requests, so the holder of lease/PROTOCOL.md runs
// lazily: every request calls `keep(ctx)` (rules.mjs), which asks the holder's
// rules what to do and makes one object call when a renewal is due (in the background
// through `ctx.waitUntil` while the lease has time to spare, awaited when it has little,
// and never awaited past the lapse). The lapse is checked there too. An isolate that is evicted never
// releases: its lease ends by its TTL, and the id goes to the next isolate after its
// fence. Between calls of `keep`, the fence (in ID time, from the object's clock) is what
// stops the generator.

// Names this isolate in the holders `list` shows (module state is per isolate). Made on
// first use: Workers refuse random values in a module's global scope.
let isolate;

/** The protocol's calls on a Durable Object namespace bound to `SnowdriftLeases` (one
 * object per space), as every holder takes them (rules.mjs). */
export function durableObjectStore(namespace) {
  if (typeof namespace?.idFromName !== "function" || typeof namespace?.get !== "function") {
    throw wrongType("the Durable Object namespace", "a binding of the SnowdriftLeases class (env.LEASES)", namespace);
  }
  const stub = (space) => namespace.get(namespace.idFromName(space));
  return {
    name: "Durable Object",
    async acquire(a) {
      const { node, notBefore, until, now } = await stub(a.space).acquire(a);
      return { node, notBefore, until, now };
    },
    async renew(t, ttl) {
      return (await stub(t.space).renew({ ...t, ttl })).until;
    },
    release: (t, issued) => stub(t.space).release({ ...t, issued }),
    /** IDs issued by the space's object itself (`SnowdriftLeases.ids`): `{node, ids}`, or
     * `{wait}` while a new space has no tick to issue in. */
    ids: (a, count) => stub(a.space).ids({ ...a, count }),
  };
}

/** A node id leased from a `SnowdriftLeases` object, for one isolate: the holder of
 * rules.mjs, kept by calling `keep(ctx)` in every request that uses its generator
 * (renewals in the background through `ctx.waitUntil` while the lease has time to spare,
 * awaited when it has little, never awaited past the lapse). */
export class Lease extends HeldLease {}

/**
 * Leases a node id of the space `options.key` from the `SnowdriftLeases` objects bound
 * as `namespace` (`env.LEASES`); resolves once the lease is usable. Options as
 * `snowdrift/redis`'s `leaseNode`.
 */
export async function leaseNode(namespace, options) {
  const o = leaseOptions(api, options, {
    holder: `worker isolate ${(isolate ??= crypto.randomUUID().slice(0, 8))}`,
  });
  return acquireLease((...args) => new Lease(api, ...args), durableObjectStore(namespace), o);
}

/**
 * One fenced generator per isolate, leased and kept lazily: `const ids = leased("LEASES",
 * options)` at module level, then `const generator = await ids(env, ctx)` in each request.
 * It leases on first use, calls `keep(ctx)` on every call, and leases again (a new node id,
 * fenced like any other) after the lease lapsed or was lost.
 */
export function leased(binding, options, generatorOptions) {
  strArg("binding", binding);
  let current; // a promise of { lease, generator }
  const backoff = new Backoff(); // after a failed acquire, requests get its error for a while
  return async (env, ctx) => {
    const namespace = env?.[binding];
    if (namespace === undefined) throw new TypeError(`env.${binding} is not bound (a SnowdriftLeases namespace)`);
    for (let attempt = 0; attempt < 2; attempt++) {
      if (current === undefined) {
        const failed = backoff.waiting(performance.now());
        if (failed !== undefined) throw failed;
        current = leaseNode(namespace, options).then((lease) => ({
          lease,
          generator: lease.generator(generatorOptions),
        }));
      }
      let held;
      try {
        held = await current;
        backoff.succeeded();
      } catch (e) {
        current = undefined; // a later request tries again, once the backoff's wait is over
        backoff.failed(e, performance.now());
        throw e;
      }
      try {
        await held.lease.keep(ctx);
        return held.generator;
      } catch (e) {
        if (held.lease.state === "live") throw e;
        if (current !== undefined && (await current) === held) current = undefined;
      }
    }
    throw new Error(`no live lease of '${options?.key}' after leasing again`);
  };
}
