// wrangler.toml and the first deploy's one edit of it: scripts/write-d1-id.sh
// writes the database's id where wrangler reads it, once, and changes nothing
// else; a bad id or a second write is refused and leaves the file as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, wranglerConfig } from "./helpers.js";

const ID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

async function read(file) {
  const { experimental_readRawConfig } = await import("wrangler");
  return (await experimental_readRawConfig({ config: file })).rawConfig;
}

function write(file, id) {
  return spawnSync("bash", [join(ROOT, "scripts/write-d1-id.sh"), file, id], { encoding: "utf8" });
}

test("the first deploy's id is written under the database's binding, and nothing else changes", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "needs-you-config-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "wrangler.toml");
  copyFileSync(join(ROOT, "wrangler.toml"), file);
  const before = await wranglerConfig();
  assert.equal(before.d1_databases[0].database_id, undefined, "the committed configuration names no database");

  const bad = write(file, "not-an-id; rm -rf /");
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /not a D1 database id/);
  assert.equal(readFileSync(file, "utf8"), readFileSync(join(ROOT, "wrangler.toml"), "utf8"));

  const good = write(file, ID);
  assert.equal(good.status, 0, good.stderr);
  const after = await read(file);
  assert.deepEqual(after.d1_databases, [{ ...before.d1_databases[0], database_id: ID }]);
  assert.deepEqual({ ...after, d1_databases: null }, { ...before, d1_databases: null });

  const written = readFileSync(file, "utf8");
  const again = write(file, "ffffffff-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
  assert.notEqual(again.status, 0);
  assert.match(again.stderr, /already names a database_id/);
  assert.equal(readFileSync(file, "utf8"), written);
});
