// What the leases of a process report (docs/observability.md): counters of each space's
// acquires, renewals, renewal failures and their time, LOSTs and lapses; per live lease
// its health, fence, the generator's distance to it and its clock's trouble (the
// generator's `stats()`, read at collection); `node:diagnostics_channel`
// channels where the runtime has them; and the app's `onEvent` callback. Every holder of
// lease-rules.mjs reports here, whatever its runtime and store, and `snowdrift/metrics`
// reads it as Prometheus text or as metric families (`collect`).
//
// Several bundles of the package include this module (`snowdrift/redis`,
// `snowdrift/postgres`, `snowdrift/http`, `snowdrift/metrics`): they share one registry,
// kept on `globalThis` under a registered symbol, so that one export covers every lease of
// the process. Nothing here runs on a generator's `next()`: events come from a lease's
// calls to its store, and gauges are read when collected.

const KEY = Symbol.for("snowdrift.lease-metrics");

/** The diagnostics channels' names, one per event (`snowdrift:lease:<event>`). */
export const EVENTS = ["acquire", "renew", "renew-failed", "lost", "lapse", "release"];
export const CHANNELS = Object.fromEntries(EVENTS.map((e) => [e, `snowdrift:lease:${e}`]));

/** The process's registry, made on first use. */
function registry() {
  let r = globalThis[KEY];
  if (r === undefined) {
    r = { spaces: new Map(), leases: new Set(), listings: new Map(), channels: undefined };
    Object.defineProperty(globalThis, KEY, { value: r });
  }
  return r;
}

/** Node's (and Deno's, Bun's) diagnostics channels, or null where the runtime has none. */
function channels(r) {
  if (r.channels === undefined) {
    let dc = null;
    try {
      dc = globalThis.process?.getBuiltinModule?.("node:diagnostics_channel") ?? null;
    } catch {}
    r.channels = dc && Object.fromEntries(EVENTS.map((e) => [e, dc.channel(CHANNELS[e])]));
  }
  return r.channels;
}

const COUNTERS = {
  acquires: 0,
  renewals: 0,
  renewalFailures: 0,
  renewalSeconds: 0,
  lost: 0,
  lapses: 0,
};

function counters(r, space) {
  let c = r.spaces.get(space);
  if (c === undefined) r.spaces.set(space, (c = { ...COUNTERS }));
  return c;
}

/** A live lease to read gauges from at collection (`health()`), until it stops. */
export function track(lease, live) {
  const r = registry();
  if (live) r.leases.add(lease);
  else r.leases.delete(lease);
}

/**
 * Records `event` of a lease of `space` (`data`: what the event carries, `space` and
 * `node` included): counts it, publishes it to its channel when someone subscribed, and
 * passes it to `onEvent` (whose errors are dropped: a callback cannot stop a lease).
 */
export function report(space, event, data, onEvent) {
  const r = registry();
  const c = counters(r, space);
  if (event === "acquire") c.acquires++;
  else if (event === "renew") {
    c.renewals++;
    c.renewalSeconds += data.latencyMs / 1000;
  } else if (event === "renew-failed") {
    c.renewalFailures++;
    c.renewalSeconds += data.latencyMs / 1000;
  } else if (event === "lost") c.lost++;
  else if (event === "lapse") c.lapses++;
  const ch = channels(r)?.[event];
  if (ch?.hasSubscribers) ch.publish(data);
  if (onEvent !== undefined) {
    try {
      onEvent(event, data);
    } catch {}
  }
}

/** How many node ids an acquire could take now in a space's `listing` (`list` of
 * `snowdrift/redis` or `snowdrift/postgres`): those never leased and those whose fence
 * passed by the store's clock; null when the space does not exist. */
export function freeIds(listing) {
  if (listing?.capacity == null || listing.next == null) return null;
  const ended = listing.leases.filter((l) => l.untilMs <= listing.nowMs).length;
  return Math.max(0, listing.capacity - listing.next) + ended;
}

/** Records the free and total node ids of `space` from its `listing`, taken on the app's
 * schedule (a store call), for the gauges `snowdrift_space_free_ids` and
 * `snowdrift_space_capacity`. */
export function recordListing(space, listing) {
  const free = freeIds(listing);
  if (free === null) registry().listings.delete(space);
  else registry().listings.set(space, { free, capacity: listing.capacity });
}

// name, type, help, and what each sample reads.
const SPACE_COUNTERS = [
  ["snowdrift_lease_acquires_total", "acquires", "Leases acquired."],
  ["snowdrift_lease_renewals_total", "renewals", "Renewals the store accepted."],
  [
    "snowdrift_lease_renewal_failures_total",
    "renewalFailures",
    "Renewals answered with an error (the store unreachable, or LOST); one that never answers is not counted.",
  ],
  [
    "snowdrift_lease_renewal_seconds_total",
    "renewalSeconds",
    "Time from sending a renewal to its answer, summed over every renewal (accepted or failed).",
  ],
  [
    "snowdrift_lease_lost_total",
    "lost",
    "Leases the store answered LOST (another holder has the id, or data was lost).",
  ],
  ["snowdrift_lease_lapses_total", "lapses", "Leases that lapsed: no renewal succeeded for ttl - skew."],
];
// Read from each live lease's `health()` at collection: name, type, help, reading (null: no sample).
const PER_LEASE = [
  [
    "snowdrift_lease_fence_seconds",
    "gauge",
    "The lease's fence (Unix seconds, the store's clock): IDs are timed before it.",
    (h) => h.fenceMs / 1000,
  ],
  [
    "snowdrift_lease_last_renewal_age_seconds",
    "gauge",
    "Seconds since the newest successful call (acquire or renewal) was sent; the lease lapses at ttl - skew.",
    (h) => h.sinceRenewalMs / 1000,
  ],
  [
    "snowdrift_lease_last_renewal_latency_seconds",
    "gauge",
    "Time the newest answered renewal took (absent before the first).",
    (h) => (h.lastRenewalLatencyMs === null ? null : h.lastRenewalLatencyMs / 1000),
  ],
  [
    "snowdrift_lease_fence_distance_seconds",
    "gauge",
    "ID time from the generator's newest ID to the fence (absent before the generator exists).",
    (h) => (h.fenceDistanceMs === null ? null : h.fenceDistanceMs / 1000),
  ],
  [
    "snowdrift_generator_ahead_seconds",
    "gauge",
    "How far the generator's newest ID is timed ahead of its clock (time borrowed ahead); 0 when not ahead.",
    (h) => (h.clock === null ? null : h.clock.aheadMs / 1000),
  ],
  [
    "snowdrift_clock_behind_total",
    "counter",
    "Calls of the lease's generator that found the clock behind its newest tick (a step back the policy waited for or refused).",
    (h) => h.clock?.behind ?? null,
  ],
  [
    "snowdrift_clock_largest_behind_seconds",
    "gauge",
    "The largest distance the lease's generator found its clock behind.",
    (h) => (h.clock === null ? null : h.clock.largestBehindMs / 1000),
  ],
  [
    "snowdrift_clock_waits_total",
    "counter",
    "Calls of the lease's generator that waited for the clock to catch up.",
    (h) => h.clock?.clockWaits ?? null,
  ],
  [
    "snowdrift_tick_waits_total",
    "counter",
    "Calls of the lease's generator that waited for the next tick, their tick's sequence used up.",
    (h) => h.clock?.tickWaits ?? null,
  ],
];
/** The states `health()` reports and the state-set gauge shows. */
export const STATES = ["ok", "renewing late", "lapsed", "lost", "released"];

/**
 * Every metric family of the process's leases, read now: `{ name, help, type ("counter"
 * or "gauge"), labelNames, values: [{ labels, value }] }`, the shape prom-client's
 * `getMetricsAsJSON` gives. Always every family, with no values while nothing reports.
 */
export function collect() {
  const r = registry();
  const families = SPACE_COUNTERS.map(([name, key, help]) => ({
    name,
    help,
    type: "counter",
    labelNames: ["space"],
    values: [...r.spaces].map(([space, c]) => ({ labels: { space }, value: c[key] })),
  }));
  for (const [name, key, help] of [
    [
      "snowdrift_space_free_ids",
      "free",
      "Node ids an acquire could take (never leased, or fence passed), as last recorded.",
    ],
    ["snowdrift_space_capacity", "capacity", "The space's node ids, as last recorded."],
  ]) {
    const values = [...r.listings].map(([space, l]) => ({ labels: { space }, value: l[key] }));
    families.push({ name, help, type: "gauge", labelNames: ["space"], values });
  }
  const healths = [...r.leases].map((l) => l.health());
  families.push({
    name: "snowdrift_lease_health",
    help: `A live lease's state: 1 for the state it is in (${STATES.slice(0, 2).join(", ")}).`,
    type: "gauge",
    labelNames: ["space", "node", "state"],
    values: healths.flatMap((h) =>
      STATES.slice(0, 2).map((state) => ({
        labels: { space: h.space, node: String(h.node), state },
        value: h.state === state ? 1 : 0,
      })),
    ),
  });
  for (const [name, type, help, read] of PER_LEASE) {
    const values = [];
    for (const h of healths) {
      const value = read(h);
      if (value !== null) values.push({ labels: { space: h.space, node: String(h.node) }, value });
    }
    families.push({ name, help, type, labelNames: ["space", "node"], values });
  }
  return families;
}

const escapeLabel = (v) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const escapeHelp = (v) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

/** `value` as the text format writes a sample's value. */
function sampleValue(value) {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/**
 * The metrics of every lease of the process in Prometheus's text format (version 0.0.4,
 * the `Content-Type` `text/plain; version=0.0.4; charset=utf-8`), ready to serve at
 * `/metrics` or to append to prom-client's `register.metrics()`.
 */
export function prometheusText() {
  let out = "";
  for (const f of collect()) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const { labels, value } of f.values) {
      const l = Object.entries(labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(",");
      out += `${f.name}{${l}} ${sampleValue(value)}\n`;
    }
  }
  return out;
}

/** The `Content-Type` of `prometheusText()`. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
