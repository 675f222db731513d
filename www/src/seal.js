// The page's sealed-ID module: snowdrift/seal, bundled apart from app.js and imported
// only when someone opens a sealed ID, so the page's first load carries no AES. It loads
// seal.wasm from beside itself.
export { Sealer } from "snowdrift/seal";
