#!/usr/bin/env python3
"""Each crate's lib.rs, and each folder's mod.rs, keeps a short map of its
modules in its doc comment: every module it declares (but `tests`) is named
there (as [`name`] or `name`). In a lib.rs every name in the map is also a
module it declares (a mod.rs may name its items beside). A module added,
renamed or removed without its line fails here.

    python3 scripts/module-maps.py src/lib.rs crates/*/src/lib.rs $(find src crates -path '*/src/*' -name mod.rs)
"""
import re
import sys
from pathlib import Path


def check(path):
    text = Path(path).read_text(encoding="utf-8")
    declared = set(re.findall(r"^\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+);", text, re.MULTILINE)) - {"tests"}
    doc = "\n".join(line[3:] for line in text.splitlines() if line.startswith("//!"))
    # A module is named by a link, [`name`] (or [`mod@name`]), or at a map line's start, "* `name`"
    # (a private one, which rustdoc does not link).
    lib = path.endswith("lib.rs")
    # In a mod.rs, any name in backticks on a map line (`* `a`, `b`: …`).
    listed = r"^\s*\* `([a-z_0-9]+)`" if lib else r"^\s*\*.*"
    mapped = set(re.findall(r"\[`(?:mod@)?([a-z_0-9]+)`\]", doc))
    for line in re.findall(listed, doc, re.MULTILINE):
        mapped |= {line} if lib else set(re.findall(r"`([a-z_0-9]+)`", line))
    errors = []
    for name in sorted(declared - mapped):
        errors.append(f"{path}: module `{name}` is missing from the map in its doc comment")
    for name in sorted(mapped - declared) if lib else []:
        errors.append(f"{path}: the map names `{name}`, which is no module here")
    return errors


def main():
    errors = [e for path in sys.argv[1:] for e in check(path)]
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
