// What the wasm imports (wasm/src/clock.rs), found by the wasm-bindgen glue next to this
// file. `now` is Date.now itself: the wasm calls it with no JS in between. `clock` (a
// user's clock function), `random` (crypto.getRandomValues over wasm memory) and `raise`
// (throws the error a call recorded) need the JS layer's state: api.mjs provides them
// once, before it instantiates the module.
export const now = Date.now;
export let clock, random, raise;

export function provide(hooks) {
  ({ clock, random, raise } = hooks);
}
