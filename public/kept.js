// One value kept in IndexedDB under "me", in a database of its own: what the
// page hands the service worker (its device), and this browser's signing
// key (keys.js). IndexedDB, not localStorage, because a service worker can
// read it while the page is closed, and it keeps a CryptoKey as it is.

/** The value kept in database `name`: `read()`, `write(value)` (null forgets it). */
export function keptIn(name) {
  const open = () => new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("kept");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return {
    async read() {
      const d = await open();
      const value = await new Promise((resolve, reject) => {
        const get = d.transaction("kept").objectStore("kept").get("me");
        get.onsuccess = () => resolve(get.result || null);
        get.onerror = () => reject(get.error);
      });
      d.close();
      return value;
    },
    async write(value) {
      const d = await open();
      await new Promise((resolve, reject) => {
        const tx = d.transaction("kept", "readwrite");
        if (value) tx.objectStore("kept").put(value, "me");
        else tx.objectStore("kept").delete("me");
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      });
      d.close();
    },
  };
}
