// A module worker written the plain way: it imports snowdrift/browser statically (its path:
// workers have no import maps) and then sets its handlers. Messages posted right after
// `new Worker()` / a shared worker's connect arrive while the package is still loading.
// Each message { open: options, batch: n } answers { node, ids: [decimal strings] }.
import { openSnowdrift } from "/pkg/browser.js";

async function answer(post, data) {
  try {
    const gen = await openSnowdrift(data.open);
    post({ node: gen.node, ids: Array.from(gen.nextBatch(data.batch), String) });
    await gen.close();
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
