#!/usr/bin/env python3
"""Markdown tables of a conformance run, for the READMEs.

    tools/conformance_tables.py REPORT.json [--per-target] [--reasons MIN] [--cases]

REPORT.json is what tests/conformance/ort_conformance.py writes (its JSON
path is printed at the end of a run). Prints the table by direction (with
--per-target, by target too), the refusal reasons seen at least MIN times
(--reasons 0: all, with the table by class), and with --cases each case's
outcome at every target (runs with --per-case).
"""

import argparse
import json

COLUMNS = ["pairs", "converted", "refused", "inexpressible", "op_gone", "pass", "mismatch",
           "ort_error", "runtime_gap", "rate", "ops_rate"]
MARKS = {"pass": "P", "mismatch": "M", "ort_error": "E", "runtime_gap": "G", "unsupported": "U",
         "failed": "F", "refused": "R", "inexpressible": "X"}


def cell(row, column):
    """A table cell: a rate as a percentage, a count with separators."""
    value = row.get(column, 0)
    return f"{100 * value:.1f}%" if column in ("rate", "ops_rate") else f"{value:,}"


def direction_table(report, per_target):
    """The table by direction (and by target)."""
    lines = ["| pairs of | " + " | ".join(COLUMNS) + " |", "| --- |" + " --- |" * len(COLUMNS)]
    for direction in ("up", "down", "ml-up", "ml-down"):
        row = report["by_direction"].get(direction)
        if row:
            lines.append(f"| {direction} | " + " | ".join(cell(row, c) for c in COLUMNS) + " |")
    if per_target:
        for row in report["by_target"]:
            label = f"{row['direction']} -> {row['target']}"
            lines.append(f"| {label} | " + " | ".join(cell(row, c) for c in COLUMNS) + " |")
    return "\n".join(lines)


def where(report, reason, direction):
    """'case -> t1, t2; ...' for the pairs refused with `reason`, when the
    report lists them and they are few."""
    pairs = [p for p in report.get("refused_pairs", [])
             if p["reason"] == reason and p["direction"] == direction]
    if not pairs or len(pairs) > 12:
        return ""
    targets = {}
    for p in pairs:
        targets.setdefault(p["case"].split("/", 1)[-1], []).append(str(p["target"]))
    return "; ".join(f"{case} -> {', '.join(t)}" for case, t in targets.items())


def reasons_table(report, minimum):
    """The refusal reasons seen at least `minimum` times (and, for a few
    pairs, which)."""
    lines = ["| pairs | direction | class | reason | where |", "| --- | --- | --- | --- | --- |"]
    for r in report["refusals"]:
        if r["count"] >= minimum:
            reason = r["reason"].replace("|", "/")
            lines.append(f"| {r['count']:,} | {r['direction']} | {r['class']} | {reason} | "
                         f"{where(report, r['reason'], r['direction'])} |")
    return "\n".join(lines)


def classes_table(report):
    """The refusals by class."""
    lines = ["| direction | class | pairs |", "| --- | --- | --- |"]
    for c in report["refusal_classes"]:
        lines.append(f"| {c['direction']} | {c['class']} | {c['count']:,} |")
    return "\n".join(lines)


def cases_table(report):
    """Each case's outcome at every target (· its own opset)."""
    cases = report.get("cases", {})
    targets = sorted({int(t) for c in cases.values() for t in c["targets"]} |
                     {c["source"] for c in cases.values()})
    lines = ["| model | opset | " + " | ".join(map(str, targets)) + " |",
             "| --- | --- |" + " --- |" * len(targets)]
    for name, case in cases.items():
        marks = ["·" if t == case["source"] else MARKS.get(case["targets"].get(str(t), "failed"), "?")
                 for t in targets]
        lines.append(f"| {name.split('/', 1)[-1]} | {case['source']} | " + " | ".join(marks) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--per-target", action="store_true")
    parser.add_argument("--reasons", type=int, default=None)
    parser.add_argument("--cases", action="store_true")
    args = parser.parse_args()
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    blocks = [direction_table(report, args.per_target)]
    if args.reasons is not None:
        if args.reasons == 0:
            blocks.append(classes_table(report))
        blocks.append(reasons_table(report, args.reasons))
    if args.cases:
        blocks.append(cases_table(report))
    print("\n\n".join(blocks))


if __name__ == "__main__":
    main()
