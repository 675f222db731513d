// One cold start, run by bench.mjs in a fresh Node process: the time from the import of a
// package to its first ID, printed in milliseconds. No static imports, so nothing the
// measured import needs is loaded before the clock starts.
//   node cold-start.mjs snowdrift | snowdrift/seal | @sapphire/snowflake | floor
const which = process.argv[2];
const EPOCH = 1704067200000;
let id;
const t0 = performance.now();
if (which === "snowdrift") {
  const { Snowdrift } = await import("snowdrift");
  id = new Snowdrift({ node: 1 }).next();
} else if (which === "snowdrift/seal") {
  const { Sealer } = await import("snowdrift/seal");
  id = new Sealer(new Uint8Array(16)).seal(1n);
} else if (which === "@sapphire/snowflake") {
  const { Snowflake } = await import("@sapphire/snowflake");
  id = new Snowflake(EPOCH).generate();
} else if (which === "floor") {
  // The least a wasm package can take: a package as light as @sapphire/snowflake (its own
  // cold start, the bare specifier's resolution included) that also compiles and
  // instantiates a wasm module (floor.wat, 58 bytes; the first compile in a process sets
  // up the engine) and calls it once.
  const { Snowflake } = await import("@sapphire/snowflake");
  new Snowflake(EPOCH).generate();
  const { floor } = await import("./floor.mjs");
  id = floor()();
} else {
  throw new Error(`unknown cold start ${which}`);
}
const ms = performance.now() - t0;
if (typeof id !== "bigint") throw new Error(`${which} gave no bigint`);
console.log(ms.toFixed(4));
