// What one operation costs must not grow with the deployment: the D1 rows
// each reads and writes (D1's own result metadata), its Durable Object
// requests and subrequests, measured with bench/meter/index.js around the
// build, on a fresh database and on one seeded with 1,000 and then 10,000
// owners of 10 tasks each (each with an open question) and the measured
// owner's 5,000 and then 50,000 closed questions of history. A statement that
// scanned (a lost index, a new query without one) would read thousands of rows
// more on the seeded ones. bench/capacity.sh prints the same as a table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { costs } from "../support/capacity.js";


test("every operation costs the same rows, objects and subrequests with 10,000 owners and 50,000 closed questions as with 1,000 and 5,000, and within a row a statement of a fresh database", async () => {
  const fresh = await costs(null);
  const mid = await costs({ owners: 1000, history: 5000 });
  const big = await costs({ owners: 10000, history: 50000 });
  for (let i = 0; i < fresh.length; i++) {
    const [f, m, b] = [fresh[i], mid[i], big[i]];
    const what = `${b.operation}: ${JSON.stringify({ fresh: f.rows_read, mid: m.rows_read, big: b.rows_read })}`;
    // Constant in the size: the same at ten times the owners and the history.
    assert.equal(b.rows_read, m.rows_read, what);
    assert.equal(b.rows_written, m.rows_written, what);
    // Beside an empty database, an index seek may step on one more entry per statement.
    assert.ok(b.rows_read - f.rows_read <= b.statements, what);
    assert.equal(b.rows_written, f.rows_written, what);
    assert.deepEqual([b.statements, b.d1_calls, b.do_requests, b.subrequests], [f.statements, f.d1_calls, f.do_requests, f.subrequests], what);
  }
  // What each costs, as the bench's table states it: a change that makes one
  // dearer is seen here first.
  const byName = Object.fromEntries(fresh.map((r) => [r.operation, r]));
  assert.equal(byName["report: open a dialog"].d1_calls, 1, "a report is one D1 batch");
  assert.equal(byName["list read (304)"].rows_read, 2, "an unchanged list reads the credential and the revision");
  assert.equal(byName["alarm that notifies, 3 channels"].subrequests, 3, "one request per channel");
});
