// wrangler.toml and the first deploy's one edit of it: scripts/write-d1-id.sh
// takes the account's databases as `wrangler d1 list --json` prints them and
// writes the id of the one named needs-you where wrangler reads it, once,
// changing nothing else. No such database, a bad id or a second write leaves
// the file as it was. (The list's shape is the D1 API's, as wrangler's
// `d1 list` passes it on; no account is reachable from here.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, readWranglerConfig, wranglerConfig } from "./helpers.js";

const ID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const db = (name, uuid) => ({ uuid, name, created_at: "2026-12-03T10:00:00.000Z", version: "production", num_tables: 0, file_size: 0 });

function write(file, list, preface = "") {
  const input = preface + JSON.stringify(list, null, 2);
  return spawnSync("bash", [join(ROOT, "scripts/write-d1-id.sh"), file], { input, encoding: "utf8" });
}

test("the first deploy's id is the one of the database named needs-you, written under its binding, and nothing else changes", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "needs-you-config-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "wrangler.toml");
  copyFileSync(join(ROOT, "wrangler.toml"), file);
  const committed = readFileSync(file, "utf8");
  const before = await wranglerConfig();
  assert.equal(before.d1_databases[0].database_id, undefined, "the committed configuration names no database");

  const none = write(file, [db("other", "ffffffff-4e5f-4a6b-8c7d-9e0f1a2b3c4d")]);
  assert.equal(none.status, 3, "no database of that name: the deploy creates it");
  assert.equal(readFileSync(file, "utf8"), committed);

  const bad = write(file, [db("needs-you", "x\"\ndatabase_id = \"injected")]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /not a D1 database id/);
  assert.equal(readFileSync(file, "utf8"), committed);

  const good = write(file, [db("other", "ffffffff-4e5f-4a6b-8c7d-9e0f1a2b3c4d"), db("needs-you", ID)], "▲ a warning wrangler printed first\n");
  assert.equal(good.status, 0, good.stderr);
  const after = await readWranglerConfig(file);
  assert.deepEqual(after.d1_databases, [{ ...before.d1_databases[0], database_id: ID }]);
  assert.deepEqual({ ...after, d1_databases: null }, { ...before, d1_databases: null });

  const written = readFileSync(file, "utf8");
  const again = write(file, [db("needs-you", "eeeeeeee-4e5f-4a6b-8c7d-9e0f1a2b3c4d")]);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /already names a database_id/);
  assert.equal(readFileSync(file, "utf8"), written);
});
