// The shop's service worker: the shell (stylesheets, scripts, the offline
// page, the icon) cached at install; pages always come from the network
// (prices and balances are never served stale), and when it is gone the
// cached offline page answers a page request.
const CACHE = "shell-v1";
const SHELL = [
  "/offline",
  "/dashboard/assets/storefront.css",
  "/dashboard/assets/style.css",
  "/dashboard/assets/shop.css",
  "/dashboard/assets/install.js",
  "/brand/icon.svg",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim())
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match("/offline")));
    return;
  }
  const url = new URL(request.url);
  if (url.origin === self.location.origin && SHELL.includes(url.pathname)) {
    event.respondWith(fetch(request).catch(() => caches.match(request)));
  }
});
