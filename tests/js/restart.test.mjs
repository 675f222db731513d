// A Node process restarted with a fixed node id, for real: two processes in turn, each
// taking IDs faster than its layout's ceiling under the default "borrow" policy (so it
// runs up to a second ahead of the clock; 4 sequence bits keep the runs small). Without a
// stored mark the second repeats the first one's IDs whenever it starts before the first
// one's newest ID time; with the README's recipe (a mark stored ahead of the IDs, the
// generator fenced there, the next run resuming after it) it repeats none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const LAYOUT = { timeBits: 41, nodeBits: 10, sequenceBits: 4, epochMs: 1_735_689_600_000 };
const COUNT = 20_000; // a second and a quarter at 16 IDs per ms

// One run: the README's recipe when MARK_FILE is set, else a bare generator. Prints its
// first clock reading and its IDs as JSON.
const RUN = `
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Snowdrift, maxIdAt } from "snowdrift";
const layout = ${JSON.stringify(LAYOUT)};
const startedMs = Date.now();
const markFile = process.env.MARK_FILE;
let generator;
if (markFile) {
  const stored = existsSync(markFile) ? maxIdAt(Number(readFileSync(markFile, "utf8")), layout) : undefined;
  generator = new Snowdrift({ node: 7, layout, resumeAfter: stored });
  const mark = Math.max(Date.now(), generator.issuedThroughMs) + 10_000;
  writeFileSync(markFile, String(mark));
  generator.setFenceMs(mark);
} else {
  generator = new Snowdrift({ node: 7, layout });
}
const ids = [];
for (let i = 0; i < ${COUNT}; i++) ids.push(String(generator.next()));
console.log(JSON.stringify({ startedMs, ids }));
`;

function run(markFile) {
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", RUN], {
    cwd: here,
    encoding: "utf8",
    timeout: 60_000,
    killSignal: "SIGKILL",
    maxBuffer: 64 << 20,
    env: { ...process.env, MARK_FILE: markFile ?? "" },
  });
  assert.equal(r.status, 0, `the run exited with ${r.status}: ${r.stderr}`);
  const { startedMs, ids } = JSON.parse(r.stdout);
  return { startedMs, ids: ids.map(BigInt) };
}

const newestMs = async (ids) => {
  const { decode } = await import("snowdrift");
  return decode(
    ids.reduce((a, b) => (b > a ? b : a)),
    LAYOUT,
  ).timeMs;
};

const repeated = (first, second) => {
  const seen = new Set(first);
  return second.filter((id) => seen.has(id)).length;
};

test("a restart sooner than the lead repeats IDs without a stored mark", async () => {
  const first = run();
  const second = run();
  const leadMs = await newestMs(first.ids);
  if (second.startedMs < leadMs) {
    assert.ok(
      repeated(first.ids, second.ids) > 0,
      `the second run started ${leadMs - second.startedMs} ms before the first one's newest ID time, yet repeated none`,
    );
  }
});

test("a restart with the README's stored-mark recipe repeats no ID", () => {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-restart-"));
  try {
    const markFile = join(dir, "node-7.mark");
    const first = run(markFile);
    const second = run(markFile);
    assert.equal(repeated(first.ids, second.ids), 0);
    const max = first.ids.reduce((a, b) => (b > a ? b : a));
    assert.ok(
      second.ids.every((id) => id > max),
      "the second run went below the first one's newest ID",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
