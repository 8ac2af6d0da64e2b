#!/usr/bin/env bash
# Writes a D1 database's id into a wrangler.toml, under the binding's
# `database_name`, once: wrangler provisions a database at the first deploy but
# writes its id back only into a JSON configuration, and `wrangler d1
# migrations apply --remote` needs the id.
#
#   bash scripts/write-d1-id.sh wrangler.toml 0a1b2c3d-…
set -euo pipefail
file=$1 id=$2
[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]] ||
  { echo "write-d1-id: not a D1 database id: $id" >&2; exit 1; }
if grep -q '^database_id *=' "$file"; then
  echo "write-d1-id: $file already names a database_id" >&2; exit 1
fi
grep -q '^database_name = "needs-you"$' "$file" ||
  { echo "write-d1-id: $file has no database_name = \"needs-you\"" >&2; exit 1; }
sed -i "s/^database_name = \"needs-you\"$/&\ndatabase_id = \"$id\"/" "$file"
