// Compiled (not run) by types.test.mjs: the package's types resolve through its
// `exports` "types" condition and describe the API as documented.
import {
  Snowdrift,
  ObjectId,
  decode,
  compose,
  toBase32,
  fromBase32,
  minIdAt,
  maxIdAt,
  layoutInfo,
  parseId,
  errorCodes,
} from "snowdrift";
import type { ErrorCode, IdInput, LayoutInfo, Parts, SnowdriftError, SnowdriftOptions } from "snowdrift";
import { openSnowdrift, collisionOdds, BROWSER_LAYOUT, decode as decodeBrowser } from "snowdrift/browser";
import type { BrowserSnowdrift, NodeGrant, OpenOptions } from "snowdrift/browser";
import { leaseNode } from "snowdrift/redis";
import type { Lease, LeaseHealth, LeaseOptions, LeaseState, RedisClient, Region } from "snowdrift/redis";
import { CHANNELS, collect, prometheusText, PROMETHEUS_CONTENT_TYPE } from "snowdrift/metrics";
import type { LeaseEvent, MetricFamily } from "snowdrift/metrics";
import { leaseNode as leasePostgres, list, setup } from "snowdrift/postgres";
import type { Listing, PostgresClient, PostgresLeaseOptions } from "snowdrift/postgres";
import { redisStore } from "snowdrift/redis";
import { postgresStore } from "snowdrift/postgres";
import { leaseHandler } from "snowdrift/http";
import type { HandlerHealth, LeaseCall, LeaseHandler } from "snowdrift/http";
import { openLeased } from "snowdrift/browser-lease";
import type { LeasedSnowdrift } from "snowdrift/browser-lease";
import {
  SnowdriftLeases,
  durableObjectStore,
  leased as leasedPerIsolate,
  leaseNode as leaseFromObject,
} from "snowdrift/cloudflare";
import type { LeasesNamespace, WaitUntil } from "snowdrift/cloudflare";
import { Sealer } from "snowdrift/seal";
import type { SealedForm, SealerOptions } from "snowdrift/seal";

const options: SnowdriftOptions = {
  layout: "twitter",
  datacenter: 1,
  worker: 2,
  onClockBackwards: "wait",
  maxWaitMs: 10,
  clock: () => Date.now(),
  resumeAfter: "123",
};
const gen = new Snowdrift(options);
const id: bigint = gen.next();
const s: string = gen.nextString();
const batch: BigUint64Array = gen.nextBatch(10);
const maybe: bigint | undefined = gen.tryNext();
const parts: Parts = gen.decode(id);
const ms: number = parts.timeMs;
const date: Date = parts.date;
const dc: number | undefined = parts.datacenter;
const back: bigint = compose(decode(s, "twitter"), "twitter");
const custom = new Snowdrift({ layout: { timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: 0 } });
const text: string = toBase32(back);
const again: bigint = fromBase32(text);
const range: [bigint, bigint] = [minIdAt(ms), maxIdAt(ms, "discord")];
const info: LayoutInfo = layoutInfo("sonyflake");
const order: "node-sequence" | "sequence-node" = info.order;
const runsOut: number =
  layoutInfo({ timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: 0 }).exhaustsAtMs + info.maxNode;
const parsed: bigint = parseId("04W86-BB0G4-007");
const oid: ObjectId = ObjectId.generate();
const seconds: number = ObjectId.parse(oid.toString()).timestamp;
// @ts-expect-error an ObjectId holds no wasm memory: nothing to free
oid.free();

// snowdrift/browser: the same API plus a persistent generator.
const browserOptions: OpenOptions = { name: "notes", layout: BROWSER_LAYOUT, node: async () => 3, reserveMs: 5000 };
async function persistent(): Promise<[bigint, number, string]> {
  const g: BrowserSnowdrift = await openSnowdrift(browserOptions);
  const next: bigint = g.next();
  const asNumber: number = g.nextNumber();
  const where: "indexeddb" | "localstorage" = g.storage;
  await g.ready;
  const kept: boolean = await g.persisted;
  await g.close();
  // After storage loss: the node id with the newest ID the server has from it.
  const grant: NodeGrant = { node: 17, resumeAfter: "383822283821842432" };
  await openSnowdrift({ node: async () => grant, persist: kept, maxAheadMs: 1000, storage: "indexeddb" });
  return [next, g.node, where];
}
const odds: number = collisionOdds(100, "instagram");

// snowdrift/redis: a node id leased from Redis, and its fenced generator.
async function leased(client: RedisClient): Promise<[bigint, number, LeaseState]> {
  const region: Region = { bits: 5, id: 3 };
  const leaseOptions: LeaseOptions = { key: "ids:orders", layout: "twitter", region, ttlMs: 10_000, skewMs: 1000 };
  const lease: Lease = await leaseNode(client, leaseOptions);
  const g: Snowdrift = lease.generator({ onClockBackwards: "wait", maxWaitMs: 50 });
  g.setFenceMs(lease.until);
  const through: number = g.issuedThroughMs;
  const stopped: AbortSignal = lease.signal;
  await lease.release();
  return [g.next(), lease.notBefore + through + (stopped.aborted ? 1 : 0), lease.state];
}
// lease.health(), onEvent and snowdrift/metrics.
async function observed(client: RedisClient): Promise<string> {
  const heard: [LeaseEvent, number][] = [];
  const lease = await leaseNode(client, {
    key: "ids:orders",
    onEvent: (event, data) => heard.push([event, data.node]),
  });
  const h: LeaseHealth = lease.health();
  const distance: number | null = h.fenceDistanceMs;
  // @ts-expect-error: "stale" is not a health state
  const wrong: LeaseHealth["state"] = "stale";
  const families: MetricFamily[] = collect();
  const channel: "snowdrift:lease:lost" = CHANNELS.lost;
  return `${h.state} ${distance} ${wrong} ${families.length} ${channel} ${PROMETHEUS_CONTENT_TYPE}\n${prometheusText()}`;
}
// snowdrift/postgres: the same Lease, from a pg Pool or Client, in a schema.
async function leasedFromPostgres(pool: PostgresClient): Promise<[bigint, number | null]> {
  await setup(pool, { schema: "ids" });
  const options: PostgresLeaseOptions = { key: "ids:orders", layout: "twitter", schema: "ids" };
  const lease: Lease = await leasePostgres(pool, options);
  const listing: Listing = await list(pool, "ids:orders", { schema: "ids" });
  const id = lease.generator().next();
  await lease.release();
  return [id, listing.capacity];
}
// @ts-expect-error schema is a string
leasePostgres({ query: async () => ({}) }, { key: "k", schema: 3 });
// snowdrift/cloudflare: a lease per isolate from a Durable Object, kept per request.
const orderIds = leasedPerIsolate("LEASES", { key: "ids:orders", layout: "twitter", ttlMs: 60_000 });
async function fromWorker(env: { LEASES: LeasesNamespace }, ctx: WaitUntil): Promise<[string, bigint]> {
  const generator: Snowdrift = await orderIds(env, ctx);
  const lease = await leaseFromObject(env.LEASES, { key: "ids:other", ttlMs: 30_000 });
  await lease.keep(ctx);
  const id: bigint = lease.generator().next();
  await lease.release();
  return [generator.nextString(), id];
}
class Leases extends SnowdriftLeases {}
const fromBrowser: Parts = decodeBrowser(id);

// @ts-expect-error a node id is a number or a function giving one, not a string
openSnowdrift({ node: "3" });
// An ID may also be a number (an integer up to 2^53 - 1, checked at run time).
const small: IdInput = 5;
const fromNumber: Parts = decode(small, "js53");
const numberText: string = toBase32(9_007_199_254_740_991);
const numberParsed: bigint = parseId(33_025);
const safeGen = new Snowdrift({ layout: "js53", node: 127, resumeAfter: 33_025 });
const safeId: number = safeGen.nextNumber();
const safeParts: Parts = safeGen.decode(safeId);
void [fromNumber, numberText, numberParsed, safeParts];
openSnowdrift({ node: () => ({ node: 3, resumeAfter: 5 }) });
// @ts-expect-error an ID is a bigint, a string or a number, not a Date
decode(new Date());
// @ts-expect-error nextNumber() returns a number
const notBig: bigint = safeGen.nextNumber();
// @ts-expect-error localStorage alone is never chosen over a working IndexedDB
openSnowdrift({ storage: "localstorage" });
// @ts-expect-error unknown layouts are not layouts
new Snowdrift({ layout: "snowflake" });
// @ts-expect-error next() returns a bigint
const wrong: number = gen.next();
// @ts-expect-error the policy names are fixed
new Snowdrift({ onClockBackwards: "retry" });
// @ts-expect-error a lease's generator takes its node from the lease
async (lease: Lease) => lease.generator({ node: 3 });

export {
  batch,
  maybe,
  date,
  dc,
  custom,
  again,
  range,
  seconds,
  wrong,
  persistent,
  odds,
  fromBrowser,
  leased,
  leasedFromPostgres,
};

// snowdrift/seal: bigint in and out, key and tweak as bytes or hex.
const sealOptions: SealerOptions = { layout: "twitter", tweak: "6b31" };
const sealer = new Sealer(new Uint8Array(16), sealOptions);
const sealedId: bigint = sealer.seal(1n);
const openedId: bigint = sealer.open(sealedId);
const sealedForm: SealedForm = "base32";
const publicId: string = sealer.sealString(openedId, sealedForm);
const fromText: bigint = sealer.openString(publicId, "base32");
const sealBits: number = sealer.bits;
new Sealer("2b7e151628aed2a6abf7158809cf4f3c", { layout: { fitsI64: false } }).free();
const sealedSmall: bigint = sealer.seal(1);
// @ts-expect-error an ID is a bigint or a number, not a string, in seal()
sealer.seal("1");
void sealedSmall;
void [fromText, sealBits];
// snowdrift/http and snowdrift/browser-lease.
declare const redisClient: RedisClient;
declare const pgClient: PostgresClient;
const httpHandler: LeaseHandler = leaseHandler({
  store: redisStore(redisClient),
  spaces: { web: { layout: "default", region: { bits: 2, id: 1 }, ttlMs: 86_400_000, skewMs: 1000 } },
  authorize: (request: Request, call: LeaseCall) => request.headers.get("authorization") === `Bearer ${call.space}`,
  origins: ["https://app.example"],
  maxIds: 100,
});
declare const leasesBinding: LeasesNamespace;
const workerHandler = leaseHandler({
  store: durableObjectStore(leasesBinding),
  spaces: { web: {} },
  authorize: () => true,
});
const pgHandler = leaseHandler({
  store: postgresStore(pgClient, { schema: "leases" }),
  spaces: {},
  authorize: async () => true,
});
const response: Promise<Response> = httpHandler(new Request("https://x.example/lease/acquire"));
const closed: Promise<void> = pgHandler.close();
const health: Promise<HandlerHealth> = httpHandler.health("web");
health.then((h) => (h.state === "unavailable" ? h.error.code : h.state === "store" ? h.state : h.fenceMs));
const heldNode: number | undefined = httpHandler.lease("web")?.node;
const workerResponse: Promise<Response> = workerHandler(new Request("https://x.example/lease/ids"));
const leasedGen: Promise<LeasedSnowdrift> = openLeased({ lease: "https://x.example/lease", space: "web" });
leasedGen.then((g) => {
  const id: bigint = g.next();
  const asNumber: number = g.nextNumber();
  const until: number = g.lease.until;
  return g.release();
});

// Errors carry a code of the ErrorCode union; errorCodes lists them all.
try {
  new Snowdrift({ node: 1024 });
} catch (e) {
  const code: ErrorCode | undefined = (e as SnowdriftError).code;
  if (code === "OutOfRange" || code === "PastFence") console.log(code);
}
const codes: readonly ErrorCode[] = errorCodes;
// @ts-expect-error: not a code of the core
const notACode: ErrorCode = "pastFence";
console.log(codes.length, notACode);
