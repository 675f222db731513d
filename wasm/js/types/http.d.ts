// snowdrift/http: node id leases over HTTP, as one Web-standard handler.
import type { Layout } from "./index.js";
import type { LeaseStore } from "./lease-store.js";
import type { LeaseHealth, Region } from "./lease.js";

export type { LeaseStore, StoreAcquire, StoreTicket } from "./lease-store.js";

/** A space the handler serves: the server decides its settings, clients only name it. */
export interface SpaceSettings {
  /** The layout of the space's IDs (default "default"); its node ids are the space's ids. */
  layout?: Layout;
  /** The space's region (none by default): clients are answered node ids with the region
   * above the leased id, and send those back. */
  region?: Region;
  /** Lease length in ms, 100 to 31,536,000,000 (default 86,400,000: a day, for devices). */
  ttlMs?: number;
  /** Allowance for the store's clock stepping back after it lost data, below `ttlMs / 2` (default 1000). */
  skewMs?: number;
}

/** A call as `authorize` sees it, checked. */
export interface LeaseCall {
  call: "acquire" | "renew" | "release" | "ids";
  space: string;
  node?: number;
  token?: string;
  issued?: number;
  count?: number;
}

export interface LeaseHandlerOptions {
  /** Where the leases are kept: `redisStore(client)`, `postgresStore(client)`, a Durable Object store. */
  store: LeaseStore;
  /** The spaces served, by name: `{ web: { layout, region, ttlMs, skewMs } }`. */
  spaces: Record<string, SpaceSettings>;
  /** Decides whether `request` may make `call` (checked before): only `true` lets it through;
   * anything else, or a throw, answers 403 (the error is not sent); no answer within
   * `storeTimeoutMs`, 503. Required. */
  authorize: (request: Request, call: LeaseCall) => boolean | Promise<boolean>;
  /** Origins allowed to call from browsers ("https://app.example"); other origins get 403. Default none. */
  origins?: string[];
  /** Let browsers send cookies and HTTP auth across origins (Access-Control-Allow-Credentials). Default false. */
  credentials?: boolean;
  /** Most IDs one `ids` call returns, 1 to 100,000 (default 1000). */
  maxIds?: number;
  /** The holder description of an acquire's lease, for operators (default "snowdrift/http client"). */
  holder?: (request: Request, call: LeaseCall) => string | Promise<string>;
  /** How long a store call, `authorize` or `holder` may take before the answer is 503, 1 to 600,000 ms (default 10,000). */
  storeTimeoutMs?: number;
  /** How long the request body may take to arrive before the answer is 408, 1 to 600,000 ms (default 10,000). */
  bodyTimeoutMs?: number;
}

/** The handler: POST `<base>/acquire`, `/renew`, `/release`, `/ids` with a JSON body. */
export interface LeaseHandler {
  (request: Request): Promise<Response>;
  /** Releases the handler's own leases (those `ids` issues from over a store without `ids`
   * of its own: Redis, PostgreSQL). */
  close(): Promise<void>;
  /** The health of the handler's own lease of `space` (the one `ids` issues from), acquired
   * when none is held and renewed when due, as an `ids` call would (state `ok` or `renewing
   * late`: it can issue); or the error an `ids` call would answer (`status` 503 or 409).
   * Over a store that issues IDs itself: `{ state: "store" }`.
   * @throws {RangeError} a space the handler does not serve. */
  health(space: string): Promise<HandlerHealth>;
  /** The handler's own lease of `space` as it stands (no store call), or undefined before
   * the first. */
  lease(
    space: string,
  ): { state: "live" | "lapsed" | "lost" | "released"; node: number; notBefore: number; until: number } | undefined;
}

/** What `LeaseHandler.health` finds. */
export type HandlerHealth =
  | Omit<LeaseHealth, "error">
  | { state: "store" }
  | { state: "unavailable"; status: number; error: { code: string; message: string } };

/**
 * The lease protocol over HTTP as JSON (lease/PROTOCOL.md, "Over HTTP"), for any runtime
 * with `Request` and `Response`.
 * @throws {TypeError | RangeError} bad options (`authorize` missing, a space's settings out of range).
 */
export declare function leaseHandler(options: LeaseHandlerOptions): LeaseHandler;

// biome-ignore-start lint/suspicious/noExplicitAny: Node's IncomingMessage and ServerResponse, without @types/node
/** The handler as a listener of Node's `http.createServer` (Node only): TRACE is 405, a
 * body the handler stopped reading closes the connection after the response, and a
 * handler's error is a 500 whose message stays on the server. */
export declare function nodeListener(handler: (request: Request) => Promise<Response>): (req: any, res: any) => void;
// biome-ignore-end lint/suspicious/noExplicitAny: Node's IncomingMessage and ServerResponse, without @types/node
