import type { LeaseHealthState } from "./lease.js";
import type { Listing } from "./lease-store.js";

/** The events every lease reports, to its diagnostics channel and its `onEvent` option. */
export type LeaseEvent = "acquire" | "renew" | "renew-failed" | "lost" | "lapse" | "release";

/** The events in order. */
export declare const EVENTS: readonly LeaseEvent[];
/** Each event's `node:diagnostics_channel` name: `snowdrift:lease:<event>`. */
export declare const CHANNELS: { readonly [E in LeaseEvent]: `snowdrift:lease:${E}` };
/** The states `lease.health()` reports. */
export declare const STATES: readonly LeaseHealthState[];
/** The `Content-Type` of `prometheusText()`. */
export declare const PROMETHEUS_CONTENT_TYPE: "text/plain; version=0.0.4; charset=utf-8";

/** One metric family, in the shape prom-client's `getMetricsAsJSON` gives. */
export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge";
  labelNames: string[];
  values: { labels: Record<string, string>; value: number }[];
}

/** Every metric family of the process's leases, read now (always every family; no values
 * while nothing reports). */
export declare function collect(): MetricFamily[];

/** The same in Prometheus's text format 0.0.4: serve it at `/metrics`, or append it to
 * prom-client's `await register.metrics()`. */
export declare function prometheusText(): string;

/** How many node ids an acquire could take now in a space's listing (`list` of
 * `snowdrift/redis` or `snowdrift/postgres`): never leased, or their fence passed by the
 * store's clock; null when the space does not exist. */
export declare function freeIds(listing: Listing): number | null;

/** Records the free and total node ids of `space` from its listing, for the gauges
 * `snowdrift_space_free_ids` and `snowdrift_space_capacity`. */
export declare function recordListing(space: string, listing: Listing): void;
