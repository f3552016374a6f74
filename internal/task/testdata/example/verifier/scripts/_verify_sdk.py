"""wildawm verifier SDK (docs/verifier.md). Standard library only.

A verifier script runs as `python3 /verifier/scripts/NAME.py` in a sandbox
with the initial world W0 at /worlds/initial, the final world W at
/worlds/final (both read-only) and the final answer in the file
$VERIFY_ANSWER_FILE (answer() reads it). It reports its verdict by calling
result() once, as its last output:

    from _verify_sdk import db, read_csv, result
    rows = read_csv("reports/open-orders.csv")
    result(len(rows) == 2, f"{len(rows)} rows")

An uncaught exception, a non-zero exit or no result() is a script error: the
criterion fails, it never passes. Identify rows by natural keys, never by row
ids. This file is written by wildawm (verify.WriteSDK); do not edit it.
"""

import csv
import json
import os
import re
import sqlite3
import sys
import urllib.parse

INITIAL = os.environ.get("VERIFY_INITIAL", "/worlds/initial")
FINAL = os.environ.get("VERIFY_FINAL", "/worlds/final")

_DB_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


def world_root(world="final"):
    """The directory of the "final" (default) or "initial" world."""
    if world == "final":
        return FINAL
    if world == "initial":
        return INITIAL
    raise ValueError(f'world {world!r}: want "final" or "initial"')


def answer():
    """The solver's final answer (may be empty), read whole from
    $VERIFY_ANSWER_FILE as UTF-8 (invalid bytes as U+FFFD); $VERIFY_ANSWER
    holds it too, except one with a NUL byte."""
    path = os.environ.get("VERIFY_ANSWER_FILE")
    if path:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            return f.read()
    return os.environ.get("VERIFY_ANSWER", "")


def db(name, world="final"):
    """A read-only sqlite3 connection to WORLD/db/NAME.sqlite; rows are sqlite3.Row."""
    if not _DB_NAME.match(name):
        raise ValueError(f"database name {name!r}: want lowercase letters, digits and '_'")
    path = os.path.join(world_root(world), "db", name + ".sqlite")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"database {name!r} does not exist in the {world} world")
    uri = "file:" + urllib.parse.quote(path) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA query_only = 1")
    return conn


def query(name, sql, params=(), world="final"):
    """All rows of one SELECT on database NAME, as a list of sqlite3.Row."""
    conn = db(name, world)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def home_path(rel, world="final"):
    """The path of RELative-to-home REL in the world; refuses paths leaving home."""
    if not rel or rel.startswith("/") or "\\" in rel or "\0" in rel:
        raise ValueError(f"path {rel!r}: want a path relative to home, e.g. 'docs/notes.md'")
    clean = os.path.normpath(rel)
    if clean == ".." or clean.startswith("../") or clean == ".":
        raise ValueError(f"path {rel!r} leaves the home directory")
    home = os.path.join(world_root(world), "home")
    path = os.path.join(home, clean)
    real = os.path.realpath(path)
    if real != os.path.realpath(home) and not real.startswith(os.path.realpath(home) + os.sep):
        raise ValueError(f"path {rel!r} resolves outside the home directory")
    return path


def exists(rel, world="final"):
    """Whether REL exists in the world's home."""
    return os.path.lexists(home_path(rel, world))


def read_text(rel, world="final"):
    """The content of home file REL as text (UTF-8), or None if it does not exist."""
    path = home_path(rel, world)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def read_csv(rel, world="final"):
    """The data rows of home CSV file REL as a list of dicts keyed by the header.

    Raises FileNotFoundError when the file does not exist."""
    path = home_path(rel, world)
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def result(passed, evidence=""):
    """Print the verdict line RESULT_JSON={"pass": ..., "evidence": ...}.

    Call it once, last; if called more than once the last line counts."""
    line = json.dumps({"pass": bool(passed), "evidence": str(evidence)}, ensure_ascii=False)
    sys.stdout.write("RESULT_JSON=" + line + "\n")
    sys.stdout.flush()
