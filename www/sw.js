// The page's service worker: keeps the page, its script and style and the wasm in a cache
// named after the build (`cargo xtask www` fills in the name and the files), so the page
// loads and works with the network off. A new build installs a new cache and drops the old.
// It answers only for the page's own files and the page's own address: every other
// request in its scope (other pages of the site, their files) goes to the network as if
// there were no service worker.
const CACHE = "snowdrift-__BUILD__";
const FILES = __FILES__;
// Files the page loads only when used (the lease client, for a lease URL; the sealed-ID
// module, to open a sealed ID): kept once fetched, so they work offline after their
// first use.
const LAZY = __LAZY__;

// The page's own addresses: its folder ("./") and index.html in it, with any query.
const PAGE = new URL("./", self.registration.scope).pathname;
const OWN = new Set([...FILES, ...LAZY].map((f) => new URL(f, self.registration.scope).pathname));
const LAZY_PATHS = new Set(LAZY.map((f) => new URL(f, self.registration.scope).pathname));
OWN.add(`${PAGE}index.html`);

self.addEventListener("install", (event) => {
  // Checked with the server, not taken from the HTTP cache: a copy it kept from an older
  // build must not be stored as this one (an unchanged file costs a 304, not its body).
  const requests = FILES.map((f) => new Request(f, { cache: "no-cache" }));
  event.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll(requests))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(keys.filter((k) => k.startsWith("snowdrift-") && k !== CACHE).map((k) => caches.delete(k))),
      )
      .then(() => self.clients.claim()),
  );
});

// Cache first: the files of one build never change; a new build comes with a new worker.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== location.origin || !OWN.has(url.pathname)) return;
  const key = url.pathname === PAGE || url.pathname === `${PAGE}index.html` ? "./" : request;
  event.respondWith(
    caches.open(CACHE).then(async (c) => {
      const hit = await c.match(key, { ignoreSearch: true });
      if (hit) return hit;
      const response = await fetch(request);
      if (response.ok && LAZY_PATHS.has(url.pathname)) await c.put(request, response.clone());
      return response;
    }),
  );
});
