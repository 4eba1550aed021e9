"""Holds every registered test to the two rules that keep a check from passing unseen.

1. A test that runs Python runs it through DFI_PYTHON_CHECK (`cmake -E env
   --unset=PYTHONOPTIMIZE python ...`): the Python checks assert with `assert`, which
   PYTHONOPTIMIZE in the caller's environment would strip.
2. A GoogleTest run reports a GTEST_SKIP as skipped (SKIP_REGULAR_EXPRESSION), never as passed.

Reads what ctest itself would run (`ctest --show-only=json-v1` in the build tree), so a test
registered by hand, outside the helpers, is held to the same rules.

usage: check_test_registrations.py CTEST BUILD_DIR
"""
import json
import subprocess
import sys

ctest, build = sys.argv[1], sys.argv[2]
listing = json.loads(subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True,
                                    capture_output=True, text=True).stdout)
failures = []
checked = {"python": 0, "gtest": 0}
for test in listing["tests"]:
    command = test.get("command", [])
    properties = {p["name"]: p["value"] for p in test.get("properties", [])}
    if not command:
        continue
    runs_python = any("python" in part.rsplit("/", 1)[-1] for part in command)
    if runs_python:
        checked["python"] += 1
        if not (len(command) > 3 and command[1:4] == ["-E", "env", "--unset=PYTHONOPTIMIZE"]):
            failures.append(f"{test['name']}: runs Python without DFI_PYTHON_CHECK: {' '.join(command[:3])}")
    # A GoogleTest executable: one of ours built in the tree, not Python, not a fuzzer, not Qt Test.
    executable = command[0].rsplit("/", 1)[-1]
    if not runs_python and executable.startswith("test_") and not executable.startswith("test_ui_"):
        checked["gtest"] += 1
        if "SKIP_REGULAR_EXPRESSION" not in properties:
            failures.append(f"{test['name']}: a GTEST_SKIP would count as passed (no SKIP_REGULAR_EXPRESSION)")

if failures:
    print("\n".join(failures))
    sys.exit(1)
if checked["python"] == 0 or checked["gtest"] == 0:
    sys.exit(f"nothing checked ({checked}): the listing format changed?")
print(f"ok: {checked['python']} Python tests, {checked['gtest']} GoogleTest runs")
