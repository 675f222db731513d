// snowdrift/browser-lease: a generator for pages and workers whose node id is leased over
// HTTP from `snowdrift/http`'s handler (lease/PROTOCOL.md, "Over HTTP"), so that devices
// never share one, and that goes on issuing offline until the lease's fence.
//
// - One lease per origin and name, shared by its tabs and workers: the lease (node id,
//   token, notBefore, until, the space's settings) and `reserved`, a time at or after
//   every ID any of them may have issued under it, are one IndexedDB record (database
//   "snowdrift-lease", store "leases", key: the name), read and written under one Web Lock
//   ("snowdrift-lease:<name>").
// - Each tab issues in windows of ID time it reserves there: from `reserved` to at most
//   `reserveMs` past the clock (and never at or past the lease's `until`), written before
//   the tab issues in it. Windows of one lease in one profile never overlap, so tabs never
//   repeat each other's IDs; a reload resumes after `reserved`, whatever the clock says.
// - The fence is the lease's: no window reaches `until`, so a device that cannot renew
//   (offline) stops there with an error saying to reconnect, and the server gives the id
//   to the next holder only after it (`notBefore`).
// - Renewal by the holder's rules every client follows (`decide` in rules.mjs): a
//   third of the TTL after the last one was sent (or tried), early while the next window
//   would come near the fence, and on the `online` event. It has no lapse: its windows end
//   at the fence, in ID time, whether it can reach the server or not. A lease the server no longer holds
//   (`LOST`), or a record that is gone (storage cleared), means a new acquire: its
//   `notBefore` comes from the server, so nothing repeats even with the clock set back.
// - The database deleted or closed under a running generator (site data cleared, or
//   `indexedDB.deleteDatabase` in another tab): it lets go of its connection at once (a
//   deletion is never blocked by it), opens the database again at its next call, and its
//   next window takes a new lease. Every IndexedDB call is bounded by `storageTimeoutMs`.
//
// Built on the package's public API (Snowdrift, layoutInfo, maxIdAt) and the lease rules.
import {
  boolArg,
  describe,
  intArg,
  MAX_U32,
  numberRefused,
  optFn,
  optInt,
  options as checkOptions,
  pastFence,
  strArg,
  textArg,
  wrongType,
} from "../check.mjs";
import { MAX_SPACE_NAME } from "./limits.mjs";
import { leaseDb, locked, openDb } from "./browser-store.mjs";
import { Backoff, decide, layoutFacts, leaseGenerator, newToken, usable } from "./rules.mjs";
import { persistence } from "../browser/persist.mjs";
import { workerEvents } from "../browser/worker-events.mjs";

// In a worker, events that arrive while the package loads are kept for the handlers the
// worker's module sets (worker-events.mjs): the core is imported after.
const early = workerEvents();
// The package's browser entry, beside this file once built (the build leaves it external).
const { Snowdrift, layoutInfo, maxIdAt } = await import("./index.js");
early?.release();

const api = { Snowdrift, layoutInfo, maxIdAt };
const OPTIONS = [
  "lease",
  "space",
  "name",
  "layout",
  "reserveMs",
  "headers",
  "fetch",
  "timeoutMs",
  "persist",
  "storageTimeoutMs",
];

const iso = (ms) => (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The clock in whole milliseconds. */
function clockMs() {
  const t = Date.now();
  return Number.isFinite(t) ? Math.max(Math.ceil(t), 0) : 0;
}

const closedError = () => new Error("this snowdrift/browser-lease generator is closed");

/** A failed call to the handler: `offline` when it did not answer (or answered 503). */
class CallError extends Error {
  constructor(message, code, offline) {
    super(message);
    this.code = code;
    this.offline = offline;
  }
}

/**
 * `await openLeased({ lease, space, name, layout, reserveMs, headers, fetch, timeoutMs, persist, storageTimeoutMs })`:
 * a generator on a node id leased from the handler at the URL `lease`, shared by this
 * origin's tabs and workers, issuing offline until the lease's end.
 */
export async function openLeased(options) {
  options = checkOptions("openLeased", options, OPTIONS);
  const url = strArg("lease", options.lease).replace(/\/+$/, "");
  try {
    new URL(url, globalThis.location?.href);
  } catch {
    throw new RangeError(`lease ${describe(options.lease)} is not a URL`);
  }
  const space = textArg("space", options.space, 1, MAX_SPACE_NAME);
  const name = options.name === undefined ? space : strArg("name", options.name);
  if (name === "") throw new RangeError("name must not be empty");
  // The layout the app expects, if it says: the server's space must have it.
  const expected = options.layout === undefined ? undefined : layoutFacts(api, options.layout).text;
  const reserveMs = optInt(options, "reserveMs", 10, 3_600_000, 2000);
  const timeoutMs = optInt(options, "timeoutMs", 100, 600_000, 10_000);
  const headers = options.headers ?? {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    throw wrongType("headers", "an object of header names and values", headers);
  }
  const fetchFn = optFn("fetch", options.fetch, "a function like fetch") ?? globalThis.fetch.bind(globalThis);
  boolArg("persist", options.persist ?? true);
  const storageTimeoutMs = optInt(options, "storageTimeoutMs", 1, 600_000, 10_000);
  if (!globalThis.navigator?.locks) {
    throw new Error(
      "snowdrift/browser-lease needs the Web Locks API (navigator.locks) to share its lease between tabs; browsers offer it on https:// pages and on http://localhost",
    );
  }

  /** POSTs `body` to the handler's `call`; its JSON reply, or a CallError. The call is
   * given up after `timeoutMs`, or `ms` when less. */
  async function post(call, body, ms = timeoutMs) {
    let res;
    try {
      res = await fetchFn(`${url}/${call}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(Math.max(1, Math.min(ms, timeoutMs))),
      });
    } catch (e) {
      throw new CallError(`${url}/${call} did not answer (${e?.name}: ${e?.message})`, undefined, true);
    }
    const json = await res.json().catch(() => undefined);
    if (!res.ok) {
      const err = json?.error;
      throw new CallError(
        `${url}/${call} answered ${res.status}${err ? ` ${err.code}: ${err.message}` : ""}`,
        err?.code,
        res.status === 503,
      );
    }
    return json;
  }

  const db = leaseDb(await openDb(storageTimeoutMs), storageTimeoutMs);
  const gen = new LeasedSnowdrift({
    db,
    url,
    space,
    name,
    expected,
    reserveMs,
    post,
    lock: `snowdrift-lease:${name}`,
    persisted: persistence(options.persist ?? true),
  });
  try {
    await gen._start();
  } catch (e) {
    gen.close();
    throw e;
  }
  return gen;
}

/** A generator from `openLeased`: `next()` and `nextBatch()` are synchronous. */
export class LeasedSnowdrift {
  #s;
  #gen; // the generator of this tab's window
  #window; // { node, leaseId, hi }: the window the generator issues in (IDs timed at or before hi)
  #lease; // the lease as last read: { node, notBefore, until, ... }
  #facts;
  #soft = -1n; // past this ID, reserve the next window in the background
  #pending;
  #again = -1;
  #failure; // why the last reservation failed
  #backoff = new Backoff(); // after a failed reservation, when the next may start
  #triedAt = Number.NEGATIVE_INFINITY; // when this tab last sent a renewal (clockMs)
  #renewals = new Backoff(); // after a failed renewal, when the next may be sent
  #timer;
  #onOnline;
  #closed = false;
  #lost; // the LOST answer to this tab's renewal, until a new lease replaces the lost one
  #renewed = 0; // this tab's renewals that succeeded, and those that failed
  #renewFailures = 0;
  #renewLatency = null; // ms, this tab's newest successful renewal

  constructor(state) {
    this.#s = state;
  }

  async _start() {
    await this.#reserve(0, true);
    const half = Math.floor(this.#s.reserveMs / 2);
    const every = Math.max(half, 50);
    // Keep the window ahead of the clock between calls, and renew when due. A check
    // reserves if less than half the window would be left at the next one, so the next
    // window always has at least that half to be stored, whenever the timer fires.
    this.#timer = setInterval(() => {
      const now = clockMs();
      if (now + every + half >= this.#window.hi || this.#renewDue(this.#lease, this.#facts, now, 0)) this.#ahead(0);
    }, every);
    this.#onOnline = () => this.#ahead(0, true);
    globalThis.addEventListener?.("online", this.#onOnline);
  }

  /**
   * Whether the holder's rules (`decide`, rules.mjs) say to renew `lease` (of the
   * layout `facts`) now, before a window `span` ms past the clock plus `reserveMs`. Times
   * are the device's clock, which the origin's tabs share (`renewedAt` is in the record);
   * a clock set back before the last renewal renews at once; after a failed renewal, the
   * next waits (`Backoff`). The client has no lapse (its windows end at the fence, in ID
   * time, online or not), so the newest success counts as now.
   */
  #renewDue(lease, facts, now, span) {
    const tick = facts.tickMs;
    if (now < lease.renewedAt) return true;
    if (this.#renewals.waiting(performance.now()) !== undefined) return false;
    const sentAt = Math.max(lease.renewedAt, this.#triedAt);
    const d = decide({
      live: true,
      now,
      acquireSentAt: sentAt,
      okSentAt: now,
      sentAt,
      pending: false,
      until: lease.until,
      notBefore: lease.notBefore,
      // The end of the window it would reserve: renewals come early while that nears the fence.
      issuedThrough: Math.max(now, lease.reserved, lease.notBefore) + span + this.#s.reserveMs + tick,
      ttl: lease.ttlMs,
      skew: lease.skewMs,
      renewEvery: Math.floor(lease.ttlMs / 3),
      tick,
      background: true,
    });
    return d.action === "renew";
  }

  /** The error of a lease whose ID time is used up and that could not be renewed (`why`). */
  #ended(lease, why) {
    return new Error(
      `the lease of node ${lease.node} of '${lease.space}' ended at ${iso(lease.until)} and could not be renewed (${why.message}): reconnect to go on`,
    );
  }

  /**
   * Under the origin's lock: reads the lease, renews it when due (or `force`), acquires a
   * new one when there is none or it was lost, and reserves this tab's next window,
   * `span` ms past the clock plus `reserveMs`. Resolves once the window is stored.
   */
  #reserve(span, force = false) {
    const { db, name, space, url, reserveMs, post, lock, expected } = this.#s;
    return locked(lock, async () => {
      let lease = await db.store("readonly", (s) => s.get(name), "reading the lease");
      if (lease && (lease.url !== url || lease.space !== space)) lease = undefined;
      if (lease) lease.leaseId ??= lease.token; // a record stored before leases had ids
      let now = clockMs();
      let failed;
      const left = (l) => l.until - 1 - Math.max(now, l.reserved, l.notBefore);
      if (lease) {
        const facts = layoutFacts(api, lease.layout);
        // A window that needs more of the lease than is left renews whatever the rules say.
        if (force || left(lease) < span + facts.tickMs || this.#renewDue(lease, facts, now, span)) {
          this.#triedAt = now;
          try {
            // The token changes at every renewal (lease/PROTOCOL.md, "Tokens"): the next one
            // is stored before it is sent, and sent again until a renewal with it succeeds,
            // so a reply that is lost, or a tab closed before it came, costs nothing. A copy
            // of this origin's storage (a copied profile, a restored backup) holds the old
            // token: whichever of the two renews second gets LOST and leases anew.
            if (lease.next === undefined) {
              lease.next = newToken();
              await db.store("readwrite", (s) => s.put(lease, name), "writing the lease");
            }
            const sent = performance.now();
            const r = await post("renew", { space, node: lease.node, token: lease.token, next: lease.next });
            this.#renewLatency = performance.now() - sent;
            this.#renewed++;
            lease.until = Math.max(lease.until, r.until);
            lease.token = lease.next;
            lease.next = undefined;
            lease.renewedAt = now;
            await db.store("readwrite", (s) => s.put(lease, name), "writing the lease");
            this.#renewals.succeeded();
          } catch (e) {
            if (!(e instanceof CallError)) throw e;
            this.#renewals.failed(e, performance.now());
            this.#renewFailures++;
            if (e.code === "LOST") {
              lease = undefined;
              this.#lost = e;
            } else failed = e;
          }
        }
        now = clockMs();
        if (lease && left(lease) < facts.tickMs) {
          if (failed) throw this.#ended(lease, failed);
          // Renewed, and still no time left: the clock is past it, or windows used it up.
          if (now < lease.until - facts.tickMs) lease = undefined; // a new lease follows it
        }
      }
      if (!lease) lease = await this.#acquire();
      this.#lease = lease;
      this.#lost = undefined;
      this.#facts = layoutFacts(api, lease.layout);
      // A clock past the lease's end even right after its renewal is ahead of the server's
      // by more than the TTL: no lease can help (a new one would end as soon), so say so.
      now = clockMs();
      if (now >= lease.until - this.#facts.tickMs) {
        throw new Error(
          `this device's clock reads ${iso(now)}, past the end of its lease of node ${lease.node} of '${space}' (${iso(lease.until)}: the server's clock plus ${lease.ttlMs} ms): set the clock right to go on`,
        );
      }
      if (expected !== undefined && expected !== this.#facts.text) {
        throw new RangeError(
          `space '${space}' at ${url} has the layout "${this.#facts.text}"; this app expects "${expected}"`,
        );
      }
      // The window: after every ID any tab reserved, before the fence.
      now = clockMs();
      const lo = Math.max(lease.reserved, lease.notBefore);
      const hi = Math.min(Math.max(now, lo) + span + reserveMs, lease.until - 1);
      if (hi - lo < this.#facts.tickMs) throw this.#ended(lease, failed ?? new Error("its time is used up"));
      const continues = this.#window?.leaseId === lease.leaseId && this.#window.hi === lease.reserved;
      lease.reserved = hi;
      await db.store("readwrite", (s) => s.put(lease, name), "writing the lease");
      if (this.#closed) return;
      if (continues) {
        this.#gen.setFenceMs(hi + 1);
      } else {
        this.#gen?.free();
        this.#gen = leaseGenerator(
          api,
          { layout: lease.layout, facts: this.#facts, node: lease.node, notBefore: lo, until: hi + 1 },
          { maxAheadMs: MAX_U32 },
        );
      }
      this.#window = { node: lease.node, leaseId: lease.leaseId, hi };
      const soft = hi - Math.floor(reserveMs / 2);
      this.#soft = soft >= this.#facts.epochMs ? maxIdAt(soft, lease.layout) : -1n;
    });
  }

  /** A new lease from the handler (under the lock), usable and stored. */
  async #acquire() {
    const { db, name, space, url, post } = this.#s;
    let g;
    const sentAt = performance.now();
    try {
      g = await post("acquire", { space });
    } catch (e) {
      if (e instanceof CallError && e.offline) {
        throw new Error(`no lease of space '${space}' is stored here and ${e.message}: reconnect to go on`);
      }
      throw e;
    }
    const facts = layoutFacts(api, g.layout);
    // A new space's first leases start after its skew: renew until there is a tick to issue
    // in, by the holder's rules (rules.mjs), a call at a time, each bounded by the lapse.
    const { ttlMs: ttl, skewMs: skew } = g;
    const times = { acquireSentAt: sentAt, okSentAt: sentAt, sentAt };
    let next; // the token a renewal sent without an answer yet (lease/PROTOCOL.md, "Tokens")
    for (let i = 0; i < 100_000 && !usable(g.until, g.notBefore, facts.tickMs); i++) {
      const now = performance.now();
      const d = decide({
        ...times,
        live: true,
        now,
        pending: false,
        until: g.until,
        notBefore: g.notBefore,
        issuedThrough: null,
        ttl,
        skew,
        renewEvery: Math.floor(ttl / 3),
        tick: facts.tickMs,
        background: false,
      });
      if (d.action === "sleep") await sleep(d.next);
      else if (d.action === "renew") {
        times.sentAt = now;
        next ??= newToken();
        const r = await post("renew", { space, node: g.node, token: g.token, next }, times.okSentAt + ttl - skew - now);
        g.until = Math.max(g.until, r.until);
        g.token = next;
        next = undefined;
        times.okSentAt = now;
      } else {
        const why = d.action === "lapse" ? `no renewal succeeded for ${ttl - skew} ms` : `after ${ttl + skew} ms`;
        throw new Error(`the lease of space '${space}' is not usable (${why})`);
      }
    }
    const lease = {
      url,
      space,
      node: g.node,
      token: g.token,
      notBefore: g.notBefore,
      until: g.until,
      layout: g.layout,
      ttlMs: g.ttlMs,
      skewMs: g.skewMs,
      reserved: g.notBefore,
      renewedAt: clockMs(),
      leaseId: g.token, // names this lease for its tabs (its token changes at every renewal)
    };
    await db.store("readwrite", (s) => s.put(lease, name), "writing the lease");
    return lease;
  }

  /** Reserves the next window in the background, one at a time; after a failure, not
   * before the backoff's wait is over (the app may call `next()` every few ms), unless
   * `force` (the browser came back online). */
  #ahead(span, force = false) {
    if (this.#closed) return;
    if (this.#pending) {
      this.#again = Math.max(this.#again, span);
      return;
    }
    if (!force && this.#backoff.waiting(performance.now()) !== undefined) return;
    this.#pending = this.#reserve(span, force)
      .then(
        () => {
          this.#failure = undefined;
          this.#backoff.succeeded();
        },
        (e) => {
          this.#failure = e;
          this.#backoff.failed(e, performance.now());
        },
      )
      .finally(() => {
        this.#pending = undefined;
        const again = this.#again;
        this.#again = -1;
        if (again >= 0 && !this.#failure) this.#ahead(again);
      });
  }

  /** A call of `n` IDs failed with `e`: at the window's end, reserve the next one and say so. */
  #refused(e, n) {
    if (this.#closed) throw closedError();
    if (!pastFence(e)) throw e;
    this.#ahead(Math.ceil(n / (layoutInfo(this.#lease.layout).maxSequence + 1)) * this.#facts.tickMs + 1000);
    throw this.#failure
      ? new Error(`IDs reached the end of this tab's reservation: ${this.#failure.message}`)
      : new Error(
          "IDs reached the end of this tab's reservation before the next one was stored; await generator.ready, then call again",
        );
  }

  /** The next ID. */
  next() {
    let id;
    try {
      id = this.#gen.next();
    } catch (e) {
      this.#refused(e, 1);
    }
    if (id > this.#soft) this.#ahead(0);
    return id;
  }

  /** The next ID as a decimal string (safe in JSON). */
  nextString() {
    return String(this.next());
  }

  /** The next ID as a Number, on a layout of at most 53 bits; on a wider one a
   * RangeError, and no ID is issued. */
  nextNumber() {
    const { bits } = this.#facts;
    if (bits > 53) throw numberRefused(bits);
    return Number(this.next());
  }

  /** `n` (1 to 1,048,576) increasing IDs. */
  nextBatch(n) {
    intArg("n", n, 1, 1 << 20);
    let ids;
    try {
      ids = this.#gen.nextBatch(n);
    } catch (e) {
      this.#refused(e, n);
    }
    if (ids[ids.length - 1] > this.#soft) this.#ahead(0);
    return ids;
  }

  /** Resolves when no reservation is in progress; rejects with why the last one failed. */
  get ready() {
    if (this.#pending) return this.#pending.then(() => this.ready);
    return this.#failure ? Promise.reject(this.#failure) : Promise.resolve();
  }

  /** The parts of an ID of the lease's layout. */
  decode(id) {
    return this.#gen.decode(id);
  }

  /** The leased node id this tab issues on now. */
  get node() {
    return this.#window.node;
  }

  /** The lease as this tab last read it: node, notBefore, until (Unix ms of the server's
   * clock), the space's layout, ttlMs and skewMs. */
  get lease() {
    const { node, notBefore, until, layout, ttlMs, skewMs, space } = this.#lease;
    return { space, node, notBefore, until, layout, ttlMs, skewMs };
  }

  /**
   * The lease's health now, in the states every lease client reports
   * (docs/observability.md), by this device's clock and the lease as this tab last read it:
   * - `ok`: the newest renewal (by any tab of the origin) was less than half of
   *   `ttlMs - skewMs` ago;
   * - `renewing late`: half of that or more ago (offline, say): the tab still issues within
   *   the lease;
   * - `lapsed`: the lease's ID time is used up (the clock within a tick of its end): no ID
   *   until a renewal succeeds (online again);
   * - `lost`: the server answered LOST to a renewal and no new lease was had yet;
   * - `released`: this tab released the lease or was closed.
   * Times are Unix ms; `clock` is the `stats()` of this tab's generator.
   */
  health() {
    const l = this.#lease;
    const now = clockMs();
    const { ttlMs: ttl, skewMs: skew, tickMs } = { ...l, tickMs: this.#facts.tickMs };
    const since = Math.max(0, now - l.renewedAt);
    let state = "ok";
    if (this.#closed) state = "released";
    else if (this.#lost) state = "lost";
    else if (now >= l.until - tickMs) state = "lapsed";
    else if (2 * since >= ttl - skew) state = "renewing late";
    const clock = this.#closed ? null : this.#gen.stats();
    const through = this.#closed ? null : this.#gen.issuedThroughMs;
    return {
      state,
      space: l.space,
      node: l.node,
      fenceMs: l.until,
      notBeforeMs: l.notBefore,
      lastRenewalMs: l.renewedAt,
      sinceRenewalMs: since,
      lateAtMs: l.renewedAt + (ttl - skew) / 2,
      lapseAtMs: l.until - tickMs,
      issuedThroughMs: through,
      fenceDistanceMs: through === null ? null : Math.max(0, l.until - through),
      aheadMs: clock?.aheadMs ?? null,
      clock,
      renewals: this.#renewed,
      renewalFailures: this.#renewFailures,
      lastRenewalLatencyMs: this.#renewLatency,
      error: this.#lost ?? this.#failure,
    };
  }

  /** Resolves to whether the browser keeps this origin's storage (`navigator.storage.persist()`). */
  get persisted() {
    return this.#s.persisted;
  }

  /** Stops this tab's generator; the lease stays with the origin's other tabs and reloads. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    globalThis.removeEventListener?.("online", this.#onOnline);
    this.#gen?.free();
    this.#s.db.close();
  }

  /**
   * Hands the lease back to the server for every tab of this origin: the next holder of
   * the node id starts after the newest ID any of them may have issued. Closes this tab's
   * generator; the others acquire a new lease at their next window.
   */
  async release() {
    const { db, name, post, lock, space } = this.#s;
    const wasOpen = !this.#closed;
    this.#closed = true;
    clearInterval(this.#timer);
    globalThis.removeEventListener?.("online", this.#onOnline);
    await this.#pending;
    this.#gen?.free();
    if (!wasOpen) return;
    try {
      await locked(lock, async () => {
        const lease = await db.store("readonly", (s) => s.get(name), "reading the lease");
        if (!lease || (lease.leaseId ?? lease.token) !== this.#lease.leaseId) return;
        await post("release", {
          space,
          node: lease.node,
          token: lease.token,
          issued: Math.max(lease.reserved, lease.notBefore),
          next: lease.next,
        });
        await db.store("readwrite", (s) => s.delete(name), "deleting the lease");
      });
    } finally {
      db.close();
    }
  }
}
Object.defineProperty(LeasedSnowdrift, "name", { value: "LeasedSnowdrift" });
