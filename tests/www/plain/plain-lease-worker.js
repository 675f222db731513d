// A module worker written the plain way, as wasm/README.md shows it for
// snowdrift/browser-lease: it imports the client statically (by its path: workers have no
// import maps), starts opening a generator and sets its handlers at once. Messages posted
// right after `new Worker()` / a shared worker's connect arrive while the package is still
// loading. The lease URL comes in the worker's query string (`?lease=`).
// Each message { count } answers { node, ids: [decimal strings] } (or { error }).
import { openLeased } from "/pkg/browser-lease.js";

const lease = new URL(self.location.href).searchParams.get("lease");
const opening = openLeased({ lease, space: "web", headers: { authorization: "Bearer device" } });

async function answer(post, data) {
  try {
    const generator = await opening;
    post({ node: generator.node, ids: Array.from(generator.nextBatch(data.count), String) });
  } catch (e) {
    post({ error: `${e.name}: ${e.message}` });
  }
}

if (typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = (e) => {
    const port = e.ports[0];
    port.onmessage = ({ data }) => answer((m) => port.postMessage(m), data);
  };
} else {
  self.onmessage = ({ data }) => answer((m) => self.postMessage(m), data);
}
