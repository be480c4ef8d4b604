#!/usr/bin/env python3
"""Counts passed and failed test cases from Bazel's test.xml files.

Usage: count_tests.py TESTLOGS_DIR "TARGET TARGET ..."
Prints "N passed, N failed" and exits 1 if anything failed. A test target
without a test.xml (it did not build, or it crashed before writing one)
counts as one failed case. A test that is not GoogleTest (an sh_test) has
Bazel's own test.xml with one test case: it counts as one case.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def xml_paths(testlogs, target):
    """The test.xml files of a target's last run: one per shard when sharded.

    A sharded test writes shard_I_of_N/test.xml and no top-level test.xml.
    Files of an earlier layout may remain beside the last run's (a top-level
    test.xml from before the target was sharded, shard folders from before
    it was not, or of another shard count): the newest layout is read.
    """
    package, name = target.lstrip("/").split(":")
    folder = os.path.join(testlogs, package, name)
    top = os.path.join(folder, "test.xml")
    shards = [d for d in (os.listdir(folder) if os.path.isdir(folder) else [])
              if re.fullmatch(r"shard_\d+_of_\d+", d)]
    if shards:
        newest = max(shards, key=lambda d: os.path.getmtime(os.path.join(folder, d)))
        if not (os.path.exists(top) and
                os.path.getmtime(top) > os.path.getmtime(os.path.join(folder, newest))):
            total = int(newest.rsplit("_", 1)[1])
            return [os.path.join(folder, f"shard_{i}_of_{total}", "test.xml")
                    for i in range(1, total + 1)]
    return [top]


def count_target(testlogs, target):
    passed = failed = 0
    for xml_path in xml_paths(testlogs, target):
        p, f = count_xml(xml_path, target)
        passed += p
        failed += f
    return passed, failed


def count_xml(xml_path, target):
    if not os.path.exists(xml_path):
        print(f"FAILED {target}: no {os.path.basename(os.path.dirname(xml_path))}/test.xml "
              "(did not build or run)")
        return 0, 1
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError as e:
        print(f"FAILED {target}: unreadable test.xml ({e})")
        return 0, 1
    passed = failed = 0
    cases = list(root.iter("testcase"))
    for case in cases:
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            # Bazel's own XML (shell tests) has one case and no classname.
            label = ".".join(filter(None, (case.get("classname"), case.get("name"))))
            print(f"FAILED {target}: {label}")
        elif case.get("status", "run") == "run":
            passed += 1
    if not cases:
        # Bazel's own XML for a target that exited non-zero without gtest output.
        errors = sum(int(s.get("failures", 0)) + int(s.get("errors", 0))
                     for s in root.iter("testsuite"))
        if errors:
            print(f"FAILED {target}: test binary failed")
            return 0, 1
        return 1, 0
    return passed, failed


def main():
    testlogs = sys.argv[1]
    targets = sys.argv[2].split()
    passed = failed = 0
    for target in targets:
        p, f = count_target(testlogs, target)
        passed += p
        failed += f
    if not targets:
        failed = 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
