// The page's service worker: keeps the page, its script and style and the wasm in a cache
// named after the build (`cargo xtask www` fills in the name and the files), so the page
// loads and works with the network off. A new build installs a new cache and drops the old.
const CACHE = "snowdrift-__BUILD__";
const FILES = __FILES__;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("snowdrift-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// Cache first: the files of one build never change; a new build comes with a new worker.
// Every navigation gets the page ("./"): it is the only one.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== location.origin) return;
  const key = request.mode === "navigate" ? "./" : request;
  event.respondWith(caches.open(CACHE).then((c) => c.match(key, { ignoreSearch: true })).then((hit) => hit ?? fetch(request)));
});
