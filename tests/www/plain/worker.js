// A module worker (dedicated or shared) with its own snowdrift/browser generator (workers
// have no import maps: the package file is imported by its path). Its Date.now reads
// `self.clockOffset` ms ahead (negative: behind), set by a message; the package is
// imported after that wrapper is in place, since the package takes Date.now once when it
// loads. Each port gets { loaded: true } once the package has loaded (messages that
// arrive during a module's top-level await would be lost, so the handlers are set first).
// Messages: { withoutIndexedDB: true } hides IndexedDB; { slowWrites: ms } makes every
// IndexedDB write confirm `ms` later (a slow disk); { offset: ms } moves the clock;
// { open: options } answers { node, storage };
// { batch: n } answers { ids: [decimal strings] }; { ready: true } answers once no
// reservation write is pending; a failure answers { error }.
const realNow = Date.now;
self.clockOffset = 0;
Date.now = () => realNow.call(Date) + self.clockOffset;
const loading = import("/pkg/browser.js");

let gen;
/** Answers the messages of one port (a dedicated worker answers on `self`). */
function serve(port) {
  const post = (m) => port.postMessage(m);
  port.onmessage = async ({ data }) => {
    try {
      if (data.withoutIndexedDB) {
        Object.defineProperty(self, "indexedDB", { value: undefined });
        post({ withoutIndexedDB: true });
      } else if (data.slowWrites) {
        const { get, set } = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "oncomplete");
        Object.defineProperty(IDBTransaction.prototype, "oncomplete", {
          get,
          set(f) {
            set.call(this, f && ((e) => setTimeout(() => f.call(this, e), data.slowWrites)));
          },
        });
        post({ slowWrites: data.slowWrites });
      } else if (data.offset !== undefined) {
        self.clockOffset = data.offset;
        post({ offset: data.offset });
      } else if (data.open) {
        gen = await (await loading).openSnowdrift(data.open);
        post({ node: gen.node, storage: gen.storage });
      } else if (data.batch) {
        post({ ids: Array.from(gen.nextBatch(data.batch), String) });
      } else if (data.ready) {
        await gen.ready;
        post({ ready: true });
      }
    } catch (e) {
      post({ error: `${e.name}: ${e.message}` });
    }
  };
  loading.then(
    () => post({ loaded: true }),
    (e) => post({ error: `cannot load the package: ${e}` }),
  );
}

// The same script runs as a shared worker (new SharedWorker): one port per page.
if (typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = ({ ports }) => serve(ports[0]);
} else {
  serve(self);
}
