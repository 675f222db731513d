// The TypeScript types: types-check.ts must compile against the package (found through
// its "types" export condition), including the lines marked @ts-expect-error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

test("index.d.ts describes the API: types-check.ts compiles with tsc --strict", () => {
  const r = spawnSync(process.execPath, [`${here}node_modules/typescript/bin/tsc`, "-p", `${here}tsconfig.json`], {
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
});
