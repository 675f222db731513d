// What the Node entries written as ES modules (node.mjs, seal-node.mjs) share: their wasm
// arrives as base64 text inside the bundle (`cargo xtask npm` writes it), so an import reads
// no other file, loads no builtin module and reads no `import.meta`; and one instance per
// version of the package is kept on globalThis, under the key the CommonJS entries
// (node.cjs, seal.cjs) use, so a program that both imports and requires the package has
// one module state. The build writes the version in place of `@VERSION`.

/** The package's instance `name`, made by `make` unless an entry made it. */
export function shared(name, make) {
  const key = Symbol.for(`snowdrift @VERSION ${name}`);
  return (globalThis[key] ??= make());
}

/** A compiled wasm module from its bytes in base64. */
export function compileBase64(text) {
  const bytes =
    typeof Buffer === "function" ? Buffer.from(text, "base64") : Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new WebAssembly.Module(bytes);
}
