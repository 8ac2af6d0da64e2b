// How a question and a task are put into words on the page. The service
// worker's notifications get their words from the Worker (one place for the
// push text: src/channels/webpush.rs).

const CLIS = {
  "claude-code": "Claude Code",
  codex: "Codex",
  opencode: "OpenCode",
  hermes: "Hermes",
};

export function cliName(cli) {
  return CLIS[cli] || cli || "An agent";
}

/** "Claude Code is asking", "Codex needs your permission", "OpenCode asked in a reply". */
export function who(q) {
  const name = cliName(q.cli);
  if (q.kind === "permission") return `${name} needs your permission`;
  if (q.kind === "reply") return `${name} asked in a reply`;
  return `${name} is asking`;
}

/** "just now", "3 min ago", "2 h ago", "4 days ago". */
export function ago(ms, now = Date.now()) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h} h ago`;
  return `${Math.round(h / 24)} days ago`;
}

/** A guess at this browser's name, for the device list: "Chrome on Android". */
export function deviceName(ua = navigator.userAgent) {
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox"
    : /Chrome\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS"
    : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows"
    : /Linux/.test(ua) ? "Linux" : "a device";
  return `${browser} on ${os}`;
}
