/** What a store's acquire takes: the settings every client of the space shares, and the lease's own. */
export interface StoreAcquire {
  space: string;
  /** 2^(node bits of the layout). */
  capacity: number;
  ttl: number;
  skew: number;
  token: string;
  holder: string;
  /** The layout as text (lease/PROTOCOL.md). */
  layout: string;
}

/** A lease as a store names it. */
export interface StoreTicket {
  space: string;
  node: number;
  /** The lease's token (made at the acquire, replaced at every renewal). */
  token: string;
  /**
   * The token a renewal makes the lease's (renew), or that a renewal whose reply never came
   * may have made it (release). A store finds the lease by `token` or `next`, and its renew
   * stores `next` in place of the token (lease/PROTOCOL.md, "Tokens"): a holder uses `next`
   * from the reply on, so a store that ignores it loses its leases at their second renewal.
   */
  next?: string;
}

/**
 * A lease store (the store interface of the lease rules): `snowdrift/redis`'s
 * `redisStore`, `snowdrift/postgres`'s `postgresStore`, or any object of these calls whose
 * errors start with the protocol's code word (`LEASED`, `CONFIG`, `LOST`).
 */
export interface LeaseStore {
  acquire(args: StoreAcquire): Promise<{ node: number; notBefore: number; until: number; now?: number }>;
  /** The lease's new end (Unix ms of the store's clock). */
  renew(ticket: StoreTicket, ttl: number): Promise<number>;
  release(ticket: StoreTicket, issued: number): Promise<unknown>;
  /**
   * Optional: IDs issued by the store itself (the Durable Object store has it). With it,
   * the HTTP handler's `ids` call asks the store instead of holding a lease of its own.
   */
  ids?(
    args: Omit<StoreAcquire, "token">,
    count: number,
  ): Promise<{ node: number; ids: string[] } | { node: null; ids: []; wait: number }>;
}

/** One id of a space, as `list` gives it. */
export interface ListedLease {
  /** The id as the store leases it (in a space with a region, the worker id below it). */
  node: number;
  /** The id's fence: the end of its newest lease, Unix ms of the store's clock. */
  untilMs: number;
  /** The holder's description; null once released. */
  holder: string | null;
}

/** A space's settings (null when it does not exist) and every id ever leased, oldest fence first. */
export interface Listing {
  nowMs: number;
  capacity: number | null;
  ttlMs: number | null;
  skewMs: number | null;
  createdMs: number | null;
  /** The lowest id never leased. */
  next: number | null;
  leases: ListedLease[];
}
