// `snowdrift/postgres` outside Node (browsers, workerd): leases need a PostgreSQL client over TCP.
throw new Error(
  'snowdrift/postgres runs on Node.js (and runtimes with its "node" export condition): it leases node ids through a pg (node-postgres) client',
);
