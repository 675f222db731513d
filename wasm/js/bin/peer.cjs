// The packages a command loads from the project it runs in (the user's peer dependencies:
// redis, ioredis, pg), not from this package's own node_modules.
const { createRequire } = require("node:module");
const { join } = require("node:path");

/** The package `name` of the current project, or undefined when it is not installed. */
function peer(name) {
  try {
    return createRequire(join(process.cwd(), "index.js"))(name);
  } catch (e) {
    if (e?.code === "MODULE_NOT_FOUND" && e.message.includes(`'${name}'`)) return undefined;
    throw e;
  }
}

module.exports = { peer };
