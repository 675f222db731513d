// The lease store interface of lease-rules.mjs over the Durable Object `SnowdriftLeases`
// (cloudflare.js): one object per space (`namespace.idFromName(space)`), called over RPC.
// What `snowdrift/http`'s handler and the Workers client take as their store; errors of
// the protocol arrive as the object threw them (their message starts with the code word).

/** The protocol's calls on the objects of `namespace` (a Durable Object binding of the
 * `SnowdriftLeases` class). */
export function durableObjectStore(namespace) {
  if (typeof namespace?.idFromName !== "function" || typeof namespace?.get !== "function") {
    throw new TypeError(
      `the Durable Object namespace must be a binding of the SnowdriftLeases class (env.LEASES), got ${typeof namespace}`,
    );
  }
  const object = (space) => namespace.get(namespace.idFromName(space));
  return {
    name: "Durable Object",
    acquire: (a) => object(a.space).acquire(a),
    async renew(t, ttl) {
      const { until } = await object(t.space).renew({ space: t.space, node: t.node, token: t.token, ttl });
      return until;
    },
    release: (t, issued) => object(t.space).release({ space: t.space, node: t.node, token: t.token, issued }),
  };
}
