// "Pair another device": a one-time code from the Worker, shown as a QR code
// (drawn as SVG elements, never as HTML text), a link and the code itself.

import { call } from "./api.js";
import { kept } from "./keys.js";
import { mayDo } from "./words.js";

const SVG = "http://www.w3.org/2000/svg";

/** The rights ticked in the dialog. */
function ticked() {
  return [...document.querySelectorAll("#pair-rights input:checked")].map((i) => i.value);
}

export async function showPairing() {
  const dialog = document.getElementById("pair-dialog");
  await draw();
  // Another choice of rights is another code.
  for (const box of document.querySelectorAll("#pair-rights input")) box.onchange = () => draw().catch(() => {});
  if (!dialog.open) dialog.showModal();
}

async function draw() {
  const { body } = await call("POST", "/v1/pairings", { body: { rights: ticked() } });
  // The owner this browser pinned goes with the link, after `#` (which no
  // browser sends to a server), made here rather than from the server's: the
  // device it pairs then sends what the person writes only sealed, as this
  // one does. No secret: only the owner's `needs-you pair` vouches for keys.
  const me = await kept().catch(() => null);
  const url = me?.owner ? `${location.origin}/pair#${body.code}..${me.owner}` : body.url;
  const { default: qrcode } = await import("./vendor/qrcode-generator-2.0.4.mjs");
  const qr = qrcode(0, "M");
  qr.addData(url);
  qr.make();
  const n = qr.getModuleCount();
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `-4 -4 ${n + 8} ${n + 8}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "QR code of the pairing link");
  const bg = document.createElementNS(SVG, "rect");
  for (const [k, v] of [["x", -4], ["y", -4], ["width", n + 8], ["height", n + 8], ["fill", "#fff"]]) {
    bg.setAttribute(k, v);
  }
  svg.append(bg);
  let d = "";
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) if (qr.isDark(r, c)) d += `M${c} ${r}h1v1h-1z`;
  }
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", d);
  path.setAttribute("fill", "#000");
  svg.append(path);
  document.getElementById("qr").replaceChildren(svg);
  const link = document.getElementById("pair-link");
  link.href = url;
  link.textContent = url;
  document.getElementById("pair-code").textContent = body.code;
  document.getElementById("pair-grants").textContent = `The device it pairs will ${mayDo(body.rights)}.`;
  document.getElementById("pair-expires").textContent =
    new Date(body.expires_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}
