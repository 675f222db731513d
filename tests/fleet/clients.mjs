// Redis clients of both kinds `snowdrift/redis` takes, made and closed alike.
import { createClient, createCluster } from "redis";
import Redis from "ioredis";

export const KINDS = ["redis", "ioredis"];

/** A connected client of `kind` to 127.0.0.1:port (errors while a server is down are
 * expected here: the lease sees them as failed calls). */
export async function connect(kind, port) {
  if (kind === "redis") {
    const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: () => 50 } });
    client.on("error", () => {});
    await client.connect();
    return { client, close: () => client.destroy() };
  }
  const client = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    retryStrategy: () => 50,
    maxRetriesPerRequest: 2,
  });
  client.on("error", () => {});
  await client.connect();
  return { client, close: () => client.disconnect() };
}

/** A cluster client of `kind`, given the cluster's nodes. */
export async function connectCluster(kind, nodes) {
  if (kind === "redis") {
    const client = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    client.on("error", () => {});
    await client.connect();
    return { client, close: () => client.destroy() };
  }
  const client = new Redis.Cluster(nodes, { lazyConnect: true });
  client.on("error", () => {});
  await client.connect();
  return { client, close: () => client.disconnect() };
}
