// Node ids: each tab and worker holds its own, claimed with a Web Lock
// ("snowdrift:<name>:<node>") for as long as it runs; the browser releases the lock when
// the tab or worker goes away, and the next one to open reuses that node id.
import { intArg, options as checkOptions, wrongType } from "../check.mjs";
import { named } from "./layout.mjs";

/** A uniform random integer in 0..n-1 (n <= 2^53), from crypto.getRandomValues. */
function randomBelow(n) {
  const words = new Uint32Array(2);
  const limit = 2 ** 53 - (2 ** 53 % n);
  for (let i = 0; i < 64; i++) {
    crypto.getRandomValues(words);
    const x = (words[0] & 0x1fffff) * 2 ** 32 + words[1];
    if (x < limit) return x % n;
  }
  throw new Error("crypto.getRandomValues gave no usable number in 64 draws");
}

/** Takes the lock if no one holds it: its release function, or null. */
function tryLock(name) {
  return new Promise((resolve, reject) => {
    navigator.locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (!lock) return resolve(null);
        return new Promise((release) => resolve(release));
      })
      .catch(reject);
  });
}

/** What the app's node function returned: a node id, or `{ node, resumeAfter }`. */
function nodeResult(r, maxNode) {
  if (typeof r === "object" && r !== null) {
    checkOptions("node function's result", r, ["node", "resumeAfter"]);
    const resumeAfter = r.resumeAfter;
    if (resumeAfter !== undefined && !["bigint", "string", "number"].includes(typeof resumeAfter)) {
      throw wrongType("the node function's resumeAfter", "an ID (a bigint, a decimal string or a number)", resumeAfter);
    }
    return { node: intArg("the node function's node", r.node, 0, maxNode), resumeAfter };
  }
  return { node: intArg("the node function's result", r, 0, maxNode) };
}

/** Why a context without localStorage (a worker) cannot take node `node`, if it cannot. */
export const windowsOnly = (storage, record, name) =>
  !storage.window && record.window
    ? `node ${record.node} (${named(name)}) was last held by a window, which keeps its newest reservation in localStorage, where workers cannot read it: open it in a window (close() there hands it back to workers), or give this worker another node id`
    : undefined;

/** Claims a node id for `name`: `node` itself, or one of this device's that no other tab or
 * worker holds, or a new one (drawn at random, or from the app's `node` function). */
export async function claimNode(storage, name, node, facts, maxNodes) {
  const lockName = (n) => `snowdrift:${name}:${n}`;
  if (typeof node === "number") {
    const release = await tryLock(lockName(node));
    if (!release) {
      throw new Error(
        `node ${node} is in use by another tab or worker of this origin (${named(name)}); give each its own node id, or leave node out to have them chosen`,
      );
    }
    return { node, release };
  }
  // This device's node ids: reuse one no other tab or worker holds. A record that cannot
  // be trusted (see checkRecord), or that a worker cannot read in full, is skipped, and
  // its node id never drawn again.
  const records = (await storage.list(name)).filter((r) => r.node <= facts.maxNode);
  const usable = records
    .filter((r) => r.problem === undefined && !windowsOnly(storage, r, name))
    .sort((a, b) => a.node - b.node);
  for (const r of usable) {
    const release = await tryLock(lockName(r.node));
    if (release) return { node: r.node, release };
  }
  if (usable.length >= maxNodes) {
    throw new Error(
      `all ${maxNodes} node ids of this origin (${named(name)}) are in use by other tabs or workers (maxNodes ${maxNodes})`,
    );
  }
  const known = records.map((r) => r.node);
  for (let attempt = 0; attempt < 16; attempt++) {
    let claim;
    if (node === undefined) {
      if (known.length > facts.maxNode) break;
      let n;
      do n = randomBelow(facts.maxNode + 1);
      while (known.includes(n));
      claim = { node: n };
    } else {
      claim = nodeResult(await node(), facts.maxNode);
      if (known.includes(claim.node)) {
        throw new RangeError(`the node function returned ${claim.node}, a node id this device already has`);
      }
    }
    const release = await tryLock(lockName(claim.node));
    if (release) return { ...claim, release };
    // Another tab of this device drew the same one a moment ago: draw again.
    known.push(claim.node);
  }
  throw new Error(`no free node id found for ${named(name)}`);
}
