#!/usr/bin/env bash
# Writes the id of the D1 database named needs-you into a wrangler.toml, under
# its binding's `database_name`, once. It reads the account's databases as
# `wrangler d1 list --json` prints them (the API's list: `name`, `uuid`, …).
# Wrangler provisions a database at a deploy but writes its id back only into
# a JSON configuration, and `wrangler d1 migrations apply --remote` needs it.
#
#   wrangler d1 list --json | bash scripts/write-d1-id.sh wrangler.toml
#
# Exits 3, writing nothing, when the account has no database of that name.
set -euo pipefail
file=$1
if grep -q '^database_id *=' "$file"; then
  echo "write-d1-id: $file already names a database_id" >&2; exit 1
fi
grep -q '^database_name = "needs-you"$' "$file" ||
  { echo "write-d1-id: $file has no database_name = \"needs-you\"" >&2; exit 1; }
# Anything wrangler prints before the list is skipped.
id=$(node -e '
  let s = "";
  process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const list = JSON.parse(s.slice(s.indexOf("[")));
    console.log(list.find((db) => db.name === "needs-you")?.uuid ?? "");
  });')
[ -n "$id" ] || exit 3
[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]] ||
  { echo "write-d1-id: not a D1 database id: $id" >&2; exit 1; }
sed -i "s/^database_name = \"needs-you\"$/&\ndatabase_id = \"$id\"/" "$file"
