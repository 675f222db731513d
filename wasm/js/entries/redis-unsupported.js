// `snowdrift/redis` outside Node (browsers, workerd): leases need a Redis client over TCP.
throw new Error(
  'snowdrift/redis runs on Node.js (and runtimes with its "node" export condition): it leases node ids over a TCP Redis client',
);
