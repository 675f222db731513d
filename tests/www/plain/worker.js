// A module worker with its own snowdrift/browser generator (workers have no import maps:
// the package file is imported by its path). Its Date.now reads `self.clockOffset` ms
// ahead (negative: behind), set by a message; the package is imported after that wrapper
// is in place, since the package takes Date.now once when it loads. It posts
// { loaded: true } once the package has loaded (messages that arrive during a module's
// top-level await would be lost).
// Messages: { offset: ms } moves the clock; { open: options } answers { node, storage };
// { batch: n } answers { ids: [decimal strings] }; { ready: true } answers once no
// reservation write is pending; a failure answers { error }.
const realNow = Date.now;
self.clockOffset = 0;
Date.now = () => realNow.call(Date) + self.clockOffset;
const { openSnowdrift } = await import("/pkg/offline.js");

let gen;
self.onmessage = async ({ data }) => {
  try {
    if (data.offset !== undefined) {
      self.clockOffset = data.offset;
      self.postMessage({ offset: data.offset });
    } else if (data.open) {
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
