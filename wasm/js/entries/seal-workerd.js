// snowdrift/seal in Cloudflare Workers: the seal module arrives compiled, as an import.
import wasm from "./seal.wasm";
import { createSeal } from "./seal-api.mjs";

export const { Sealer } = createSeal(wasm);
