// A module service worker that imports snowdrift/browser by its path: the package awaits its
// wasm compilation at top level, which service workers do not allow, so registering this
// worker fails (the docs say snowdrift/browser does not run in service workers).
import "/pkg/browser.js";
