// A module worker written the plain way, as wasm/README.md shows it for
// snowdrift/browser-lease: it imports the client statically (by its path: workers have no
// import maps), starts opening a generator and sets its handlers at once. Messages posted
// right after `new Worker()` / a shared worker's connect arrive while the package is still
// loading. The lease URL comes in the worker's query string (`?lease=`), and `reserveMs`
// if the test sets it.
// Each message { count } answers { node, ids: [decimal strings] } (or { error }); { ready }
// answers { ready: true } once no reservation is in progress.
import { openLeased } from "/pkg/browser-lease.js";

const query = new URL(self.location.href).searchParams;
const reserveMs = query.has("reserveMs") ? Number(query.get("reserveMs")) : undefined;
const opening = openLeased({
  lease: query.get("lease"),
  space: "web",
  reserveMs,
  headers: { authorization: "Bearer device" },
});

async function answer(post, data) {
  try {
    const generator = await opening;
    if (data.ready) {
      await generator.ready.catch(() => {});
      post({ ready: true });
      return;
    }
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
