// The banner above every page for what stops the daemon from remembering: a full disk (GET /health,
// which needs no token and reads no SQL, every 30 s while the dashboard is open).

import { api } from "./api.js";

const POLL_MS = 30_000;

/** Show `banner` while /health says the disk is full; hide it once writes are accepted again. */
export function watchHealth(banner) {
  const check = async () => {
    let health;
    try {
      health = await api("/health");
    } catch {
      return; // an unreachable daemon is told by the page's own requests
    }
    banner.hidden = !health?.disk_full;
    banner.textContent = health?.disk_full
      ? "The disk that holds the database is full: nothing new is remembered until space is freed. What is stored can still be read and searched; see System."
      : "";
  };
  check();
  window.setInterval(check, POLL_MS);
}
