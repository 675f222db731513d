// A module worker with its own snowdrift/browser generator (workers have no import maps:
// the package file is imported by its path). It posts { loaded: true } once the package
// has loaded (messages that arrive during a module's top-level await would be lost).
// Messages: { open: options } answers { node, storage }; { batch: n } answers
// { ids: [decimal strings] }; { ready: true } answers once no reservation write is
// pending; a failure answers { error }.
import { openSnowdrift } from "/pkg/offline.js";

let gen;
self.onmessage = async ({ data }) => {
  try {
    if (data.open) {
      gen = await openSnowdrift(data.open);
      self.postMessage({ node: gen.node, storage: gen.storage });
    } else if (data.batch) {
      self.postMessage({ ids: Array.from(gen.nextBatch(data.batch), String) });
    } else if (data.ready) {
      await gen.ready;
      self.postMessage({ ready: true });
    }
  } catch (e) {
    self.postMessage({ error: `${e.name}: ${e.message}` });
  }
};

self.postMessage({ loaded: true });
