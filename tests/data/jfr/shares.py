#!/usr/bin/env python3
# Reads `jfr print --json` of a recording on standard input and prints the
# figures the JFR parser's test checks (tests/unit/test_jfr.c):
#
#   COLUMN * SAMPLES TOTAL        the column's sample count and value
#   COLUMN FUNCTION SELF TOTAL    a method of class Burn: its self value (it
#                                 is the leaf) and total (stacks holding it,
#                                 once a stack)
#
# COLUMN is samples (jdk.ExecutionSample, 1 each) or alloc_space
# (jdk.ObjectAllocationSample, its weight in bytes). Only the methods of
# Burn are listed: their names read the same in the JDK's print and in the
# recording's own symbols.
import json
import sys

COLUMNS = {"jdk.ExecutionSample": "samples", "jdk.ObjectAllocationSample": "alloc_space"}

events = json.load(sys.stdin)["recording"]["events"]
count, value, self_, total = {}, {}, {}, {}
for ev in events:
    col = COLUMNS[ev["type"]]
    v = ev["values"].get("weight", 1) if col == "alloc_space" else 1
    count[col] = count.get(col, 0) + 1
    value[col] = value.get(col, 0) + v
    names = []
    stack = ev["values"]["stackTrace"] or {"frames": []}  # null: no stack
    for fr in stack["frames"]:
        m = fr["method"]
        names.append(m["type"]["name"].replace(".", "/") + "." + m["name"])
    if names:
        key = (col, names[0])  # JFR writes the leaf first
        self_[key] = self_.get(key, 0) + v
    for n in set(names):
        total[(col, n)] = total.get((col, n), 0) + v
for col in sorted(count):
    print(f"{col} * {count[col]} {value[col]}")
    for (c, n) in sorted(k for k in total if k[0] == col and k[1].startswith("Burn.")):
        print(f"{col} {n} {self_.get((c, n), 0)} {total[(c, n)]}")
