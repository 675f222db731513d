#!/usr/bin/env node
"use strict";
// npx snowdrift decode <id> [--layout discord] [--json]
// npx snowdrift generate [-n 10] [--node 3] [--layout twitter]
const { Snowdrift, decode, toBase32, fromBase32 } = require("../node.cjs");

// The core's preset names (snowdrift::Layout::PRESETS), written in by `cargo xtask npm`.
const PRESETS = "@PRESETS";
const USAGE = `usage:
  snowdrift decode <id> [--layout NAME|JSON] [--json]   the parts of an ID (decimal or base32)
  snowdrift generate [-n COUNT] [--node N] [--layout NAME|JSON] [--json]
                                                         new IDs, one per line
layouts: ${PRESETS}, or a JSON object
         such as '{"timeBits":41,"nodeBits":10,"sequenceBits":12,"epochMs":1704067200000}'`;

function parseArgs(argv) {
  const flags = { json: false };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new TypeError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--json") flags.json = true;
    else if (a === "--layout" || a === "-l") flags.layout = value();
    else if (a === "-n" || a === "--count") flags.n = value();
    else if (a === "--node") flags.node = value();
    else if (a === "-h" || a === "--help") flags.help = true;
    else if (a.startsWith("-") && !/^-?\d/.test(a)) throw new TypeError(`unknown option ${a}`);
    else rest.push(a);
  }
  return { flags, rest };
}

function layoutOf(text) {
  if (text === undefined) return undefined;
  return text.trim().startsWith("{") ? JSON.parse(text) : text;
}

function integer(name, text, fallback) {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new RangeError(`${name} ${JSON.stringify(text)} is not a non-negative integer`);
  return Number(text);
}

function idOf(text) {
  // Decimal, or the 13-character base32 form.
  return /^\d+$/.test(text) ? text : fromBase32(text);
}

function main(argv) {
  const [command, ...args] = argv;
  const { flags, rest } = parseArgs(args);
  if (command === undefined || flags.help || ["help", "--help", "-h"].includes(command)) {
    console.log(USAGE);
    return 0;
  }
  const layout = layoutOf(flags.layout);
  if (command === "decode") {
    if (rest.length !== 1) throw new TypeError("decode takes one ID");
    const id = BigInt(idOf(rest[0]));
    const p = decode(id, layout);
    const out = {
      id: id.toString(),
      timestampMs: p.timestampMs,
      date: p.date.toISOString(),
      node: p.node,
      ...(p.datacenter === undefined ? {} : { datacenter: p.datacenter, worker: p.worker }),
      sequence: p.sequence,
      base32: toBase32(id),
    };
    if (flags.json) {
      console.log(JSON.stringify(out));
    } else {
      for (const [k, v] of Object.entries(out)) console.log(`${k.padEnd(12)}${v}`);
    }
    return 0;
  }
  if (command === "generate") {
    if (rest.length !== 0) throw new TypeError(`generate takes no arguments, got ${rest.join(" ")}`);
    const n = integer("-n", flags.n, 1);
    const gen = new Snowdrift({ layout, node: integer("--node", flags.node, 0) });
    const ids = gen.nextBatch(n);
    const text = Array.from(ids, (id) => id.toString());
    console.log(flags.json ? JSON.stringify(text) : text.join("\n"));
    return 0;
  }
  throw new TypeError(`unknown command ${JSON.stringify(command)}`);
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  console.error(`snowdrift: ${e.message}`);
  if (e instanceof TypeError && !(e.message || "").includes(" must be ")) console.error(USAGE);
  process.exitCode = 2;
}
