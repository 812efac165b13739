#!/usr/bin/env python3
"""Fails if a public symbol in the given modules' symbol graphs has no doc comment.

usage: check-doc-comments.py SYMBOLGRAPH_DIR MODULE...
"""
import glob
import json
import os
import sys


def main() -> int:
    directory, modules = sys.argv[1], sys.argv[2:]
    missing = []
    for module in modules:
        paths = glob.glob(os.path.join(directory, f"{module}.symbols.json"))
        paths += glob.glob(os.path.join(directory, f"{module}@*.symbols.json"))
        if not paths:
            print(f"no symbol graph for {module}", file=sys.stderr)
            return 1
        for path in paths:
            with open(path) as handle:
                graph = json.load(handle)
            for symbol in graph.get("symbols", []):
                identifier = symbol["identifier"]["precise"]
                if "::SYNTHESIZED::" in identifier:
                    continue
                if symbol.get("accessLevel") not in ("public", "open"):
                    continue
                if symbol.get("docComment", {}).get("lines"):
                    continue
                location = symbol.get("location", {})
                where = location.get("uri", "?").replace("file://", "")
                line = location.get("position", {}).get("line", 0) + 1
                name = ".".join(symbol.get("pathComponents", [])) or identifier
                missing.append(f"{where}:{line}: {module}.{name} has no doc comment")
    for entry in sorted(set(missing)):
        print(entry, file=sys.stderr)
    if missing:
        print(f"{len(set(missing))} public symbol(s) without a doc comment", file=sys.stderr)
        return 1
    print("every public symbol has a doc comment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
