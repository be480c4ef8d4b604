#!/usr/bin/env python3
"""Checks that what docs/*.md point at exists: every Bazel label
(//pkg:target, //pkg, //pkg:all) names a package with a BUILD file that
declares the target, and every repository path in backquotes
(`converter/windowed.h`, `tests/golden/`) exists.

  check_docs.py WORKSPACE_ROOT DOC...

Prints each dangling reference as DOC: REFERENCE: why, and exits 1 if
there is one."""

import os
import re
import sys

# A label starts a word ("http://host" and "dns:///host" are not labels).
LABEL = re.compile(r"(?<![\w:/])//([a-z_][a-z0-9_/]*)?(?::([A-Za-z0-9_.\-/]+))?")
CODE = re.compile(r"`([^`\n]+)`")
# A path: a top-level package of the tree, then a file or folder name.
PATH = re.compile(r"^([a-z_]+/[A-Za-z0-9_.\-/]*)$")
# Targets a package's macros declare beside the one named (fuzz/fuzz.bzl:
# <name>_replay).
MACRO_SUFFIXES = ("_replay",)


def label_problem(root, package, target):
    build = os.path.join(root, package, "BUILD")
    if not os.path.isfile(build):
        return "no package %s" % package
    if target in (None, "all", "*"):
        target = None if target else os.path.basename(package)
    if target is None:
        return None
    with open(build) as f:
        text = f.read()
    names = [target] + [target[: -len(s)] for s in MACRO_SUFFIXES if target.endswith(s)]
    if any('"%s"' % n in text for n in names) or os.path.exists(os.path.join(root, package, target)):
        return None
    return "%s/BUILD declares no %s" % (package, target)


def path_problem(root, path):
    top = path.split("/", 1)[0]
    if not os.path.isdir(os.path.join(root, top)):
        return None  # not a path of this tree (e.g. an ONNX type name)
    clean = path.rstrip("/")
    if "<" in clean or "*" in clean or "..." in clean:
        clean = clean.split("<", 1)[0].split("*", 1)[0].split("...", 1)[0].rstrip("/")
    if os.path.exists(os.path.join(root, clean)):
        return None
    return "no such file or folder"


def main():
    root, docs = sys.argv[1], sys.argv[2:]
    problems = []
    for doc in docs:
        with open(doc) as f:
            text = f.read()
        name = os.path.basename(doc)
        for match in LABEL.finditer(text):
            package, target = match.group(1), match.group(2)
            if package is None:
                continue
            why = label_problem(root, package.rstrip("/"), target)
            if why:
                problems.append("%s: %s: %s" % (name, match.group(0), why))
        for match in CODE.finditer(text):
            for word in match.group(1).split():
                if word.startswith("//") or not PATH.match(word):
                    continue
                why = path_problem(root, word)
                if why:
                    problems.append("%s: %s: %s" % (name, word, why))
    for problem in problems:
        print(problem)
    print("%d docs, %d dangling references" % (len(docs), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
