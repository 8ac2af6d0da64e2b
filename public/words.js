// Words the page makes itself: ages and this browser's name. Who asks
// ("Claude Code is asking") comes from the Worker with each question, in the
// same words as the phone's notifications (one place: the core crate's
// Cli::asking).

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

/** What a device may do, for a person: "see what needs you, answer and approve, …". */
export function mayDo(rights = []) {
  const words = { tasks: "start and stop tasks", answer: "answer and approve", pair: "pair further devices", screen: "see the agents' terminals" };
  return ["see what needs you", ...rights.map((r) => words[r]).filter(Boolean)].join(", ");
}
