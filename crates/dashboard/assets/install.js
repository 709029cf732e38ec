// Installable: the service worker (scope /) caches the shell and shows the
// offline page when the network is gone. Every page works without it.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {});
}
