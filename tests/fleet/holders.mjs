// Shared by the fleet tests: bounded waits for leases, IDs taken from generators, and the
// check that two holders never issued the same ID.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { leaseNode } from "snowdrift/redis";
import { connect } from "./clients.mjs";
import { sleep } from "./redis-server.mjs";

/** Runs `f(client)` with a fresh client of `kind` to 127.0.0.1:port, closing it after. */
export async function withClient(kind, port, f) {
  const { client, close } = await connect(kind, port);
  try {
    return await f(client);
  } finally {
    close();
  }
}

/** A stand-in for a generator that comes later (a holder that leases mid-test): its
 * `nextBatch` gives nothing until `set(gen)`, then the generator's IDs. */
export function later() {
  let gen;
  return { set: (g) => (gen = g), nextBatch: (n) => (gen ? gen.nextBatch(n) : []) };
}

/** Polls `f` every 10 ms until it returns a truthy value, at most `ms`. */
export async function until(what, f, ms) {
  const end = performance.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (performance.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(10);
  }
}

/** A lease of `opts` as soon as one of its ids is free (at most `ms`), by `lease`
 * (`snowdrift/redis`'s `leaseNode` unless given). */
export const leaseWhenFree = (client, opts, ms, lease = leaseNode) =>
  until(
    `a free id of '${opts.key}'`,
    () =>
      lease(client, opts).catch((e) => {
        if (/are leased/.test(e.message)) return undefined;
        throw e;
      }),
    ms,
  );

/** Takes IDs from `gen` every 2 ms for `ms` (a refused call, e.g. past the fence, is
 * skipped); returns them. */
export async function issueFor(gen, ms) {
  const ids = [];
  const end = performance.now() + ms;
  for (let i = 0; i < 100_000 && performance.now() < end; i++) {
    try {
      ids.push(...gen.nextBatch(64));
    } catch {
      // past its fence
    }
    await sleep(2);
  }
  return ids;
}

/** Fails with the count and an example if any ID is in two of the lists. */
export function assertDisjoint(lists, what) {
  const owner = new Map();
  let dups = 0;
  let example;
  lists.forEach((ids, k) => {
    for (const id of ids) {
      const o = owner.get(id);
      if (o !== undefined && o !== k) {
        dups++;
        example ??= id;
      }
      owner.set(id, k);
    }
  });
  assert.equal(dups, 0, `${what}: ${dups} IDs issued by two holders, e.g. ${example}`);
}

/** Runs `program` in this folder (SIGKILLed after `timeoutMs`); resolves with its exit
 * code, signal and output. `onLine(line, child)` hears each line it prints. */
export function runChild(program, args, { onLine, timeoutMs = 15000 } = {}) {
  const c = spawn(program, args, { cwd: dirname(fileURLToPath(import.meta.url)), stdio: ["ignore", "pipe", "pipe"] });
  let out = "",
    err = "";
  c.stdout.on("data", (d) => {
    out += d;
    if (onLine) for (const line of String(d).split("\n").filter(Boolean)) onLine(line, c);
  });
  c.stderr.on("data", (d) => (err += d));
  const t = setTimeout(() => c.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    c.on("exit", (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, out, err });
    }),
  );
}
