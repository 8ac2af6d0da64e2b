// See bench/capacity.sh. Arguments: [--owners N] [--history N] [--json FILE].
import { writeFileSync } from "node:fs";
import { costs } from "../tests/support/capacity.js";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const OWNERS = Number(arg("--owners", 10000));
const HISTORY = Number(arg("--history", 50000));


const fresh = await costs(null);
const big = await costs({ owners: OWNERS, history: HISTORY });
const lines = [
  `| operation | D1 calls / statements | rows read (1 owner → ${OWNERS.toLocaleString("en")} owners, ${HISTORY.toLocaleString("en")} closed) | rows written | Durable Object requests | subrequests |`,
  "| --- | --- | --- | --- | --- | --- |",
];
for (let i = 0; i < fresh.length; i++) {
  const [f, b] = [fresh[i], big[i]];
  lines.push(`| ${f.operation} | ${f.d1_calls} / ${f.statements} | ${f.rows_read} → ${b.rows_read} | ${f.rows_written} → ${b.rows_written} | ${f.do_requests} | ${f.subrequests} |`);
}
console.log(lines.join("\n"));
const file = arg("--json", null);
if (file) writeFileSync(file, JSON.stringify({ owners: OWNERS, history: HISTORY, fresh, seeded: big }, null, 2));
