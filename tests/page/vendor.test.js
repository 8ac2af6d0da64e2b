// The page's one library is vendored from npm at the version package.json
// pins: the served copy must be that version's file, unchanged.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../worker/helpers.js";

test("the vendored QR code library is npm's qrcode-generator at the pinned version, unchanged", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const version = pkg.devDependencies["qrcode-generator"];
  const installed = JSON.parse(readFileSync(join(ROOT, "node_modules/qrcode-generator/package.json"), "utf8"));
  assert.equal(installed.version, version);
  const served = readFileSync(join(ROOT, `public/vendor/qrcode-generator-${version}.mjs`));
  assert.ok(served.equals(readFileSync(join(ROOT, "node_modules/qrcode-generator/dist/qrcode.mjs"))));
});
