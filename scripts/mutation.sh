#!/usr/bin/env bash
# Mutation testing with mutmut 3, one module at a time (not part of CI: hours on 2 cores).
#
# Usage: scripts/mutation.sh MODULE...              (names: python scripts/mutation_plan.py --list)
#        scripts/mutation.sh --all                  every module of cvfilters/ and cli/
#        MUTATION_TIMEOUT=600 scripts/mutation.sh decoders atomic io/reading
#        (MUTATION_TIMEOUT_MULTIPLIER: mutmut's per-mutant timeout_multiplier, default 3;
#         MUTATION_BACKENDS: the tests' --backend, default cpu: cpu,opencl for a device backend's module;
#         MUTATION_TESTS: test files used instead of the plan's selection, e.g. a new mirror alone where
#         the selection's stats pass outlasts the bound; the result's header names the files used;
#         MUTATION_MUTANTS: mutmut names or globs to check, the others left "not checked", e.g. the
#         functions a fix changed, "cvfilters.io.apng.x_write_frames*"; use its own MUTATION_OUT)
#
# scripts/mutation_plan.py names each module's source file and the test files that cover it
# (its mirror, every test file importing it, and listed extras) and mutmut's process isolation
# (forkserver: a forked mutant would reuse the caches of the stats run). Each module runs in a scratch
# copy of the working tree (git ls-files), so the worktree is never touched: the
# [tool.mutmut] table of pyproject.toml gets `only_mutate` (the module) and
# `pytest_add_cli_args_test_selection` (its tests), then `mutmut run` mutates that module
# alone under `nice -n 19` and `timeout` (MUTATION_TIMEOUT seconds per module, default
# 1800; a module cut short keeps the mutants checked so far). Results go to
# mutation-results/<module>.txt (a header line, then mutmut's export-cicd-stats JSON) with
# the survivors' diffs in mutation-results/<module>-survivors.txt (module names with / -> .; also
# timeouts, "no tests", and the mutants a cut run did not reach, marked "not checked");
# scripts/mutation_summary.py writes the table in docs/mutation.md from them.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${MUTATION_OUT:-$ROOT/mutation-results}"
LIMIT="${MUTATION_TIMEOUT:-1800}"  # seconds per module
PYTHON="${PYTHON:-python}"

if [[ $# -eq 0 ]]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
if [[ "$1" == "--all" ]]; then
  mapfile -t names < <("$PYTHON" "$ROOT/scripts/mutation_plan.py" --list)
else
  names=("$@")
fi

mkdir -p "$OUT"
read -r -a mutants <<<"${MUTATION_MUTANTS:-}"  # an array: a glob is mutmut's to match, not the shell's
scratch=""
trap '[[ -n "$scratch" ]] && rm -rf "$scratch"' EXIT
for requested in "${names[@]}"; do
  read -r module source isolation tests < <("$PYTHON" "$ROOT/scripts/mutation_plan.py" "$requested")
  tests="${MUTATION_TESTS:-$tests}"
  [[ "$isolation" != none ]] || { echo "[$module] $source defines no function: nothing to mutate" >&2; continue; }
  [[ -n "$tests" ]] || { echo "[$module] no test file covers $source: skipped" >&2; continue; }
  isolation="${MUTATION_ISOLATION:-$isolation}"  # fork where forkserver fails mutmut's clean pass (core/atomic)
  stem="${module//\//.}"
  scratch="$(mktemp -d)"
  (cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 cp -P --parents -t "$scratch")
  # cvfilters/cli is a link to cli/: mutmut's copy into mutants/ skips links, which left no
  # cvfilters.cli there (every CLI test failed). A real copy makes it part of the package, and
  # a cli/ module is mutated there, where `import cvfilters.cli` finds it.
  if [[ -L "$scratch/cvfilters/cli" ]]; then
    rm "$scratch/cvfilters/cli"
    cp -r "$scratch/cli" "$scratch/cvfilters/cli"
  fi
  [[ "$source" == cli/* ]] && source="cvfilters/$source"
  # shellcheck disable=SC2086  # the test list is split on purpose
  "$PYTHON" - "$scratch/pyproject.toml" "$source" "$isolation" $tests <<'PY'
import json, os, sys
from pathlib import Path
path, source, isolation, tests = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
text = path.read_text()
# timeout_multiplier: mutmut stops a mutant after (its tests' time + 1 s) * multiplier * 2 seconds of
# CPU (default 15: minutes for one endless loop, a quarter of a 900 s bound); 3 is ample for CPU time.
extra = (f"only_mutate = {json.dumps([source])}\npytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
         f"process_isolation = {json.dumps(isolation)}\n"
         f"timeout_multiplier = {float(os.environ.get('MUTATION_TIMEOUT_MULTIPLIER', '3'))}\n")
# MUTATION_BACKENDS: the backends the tests run on (pytest --backend); cpu unless a device
# backend's module is measured (cpu,opencl on pocl: its kernels compile on first use, slowly).
text = text.replace('"--backend=cpu"', json.dumps("--backend=" + os.environ.get("MUTATION_BACKENDS", "cpu")), 1)
path.write_text(text.replace("[tool.mutmut]\n", "[tool.mutmut]\n" + extra, 1))
PY
  echo "[$module] mutating $source against $tests ($isolation isolation, timeout ${LIMIT}s)" >&2
  status=0
  start=$(date +%s)
  # PYTHONPATH: a test's subprocess (`python -m cvfilters` in a temporary folder) imports the
  # mutated copy too; without it the editable install's path entry gave it the worktree's code,
  # so no mutant could fail a CLI test run that way. mutants/ must exist before Python starts:
  # a PYTHONPATH folder missing at start-up is cached as "nothing here" and never searched, so
  # the tests imported the worktree's code and mutmut found no test for any mutant.
  mkdir -p "$scratch/mutants"
  # mutmut's stats pass (MUTANT_UNDER_TEST=stats) records which test calls which function from
  # the trampolines; in a test's subprocess (`python -m cvfilters` in a temporary folder) that
  # recording looks for pyproject.toml in the working folder and fails the test, and it could not
  # be attributed to a test anyway. Python imports sitecustomize from PYTHONPATH at start-up.
  # No bytecode is written there either: a test's subprocess writing the .pyc files of mutants/
  # while a forkserver process imported them failed the clean pass with "marshal data too short"
  # (io/frames; core/atomic's unexplained "Failed to run clean test" before it).
  printf '%s\n' 'import os, sys' 'sys.dont_write_bytecode = True' \
    'if os.environ.get("MUTANT_UNDER_TEST") == "stats":' \
    '    os.environ["MUTANT_UNDER_TEST"] = ""  # a subprocess of the stats pass runs the original code' \
    >"$scratch/mutants/sitecustomize.py"
  # </dev/null: a mutant that reads standard input stopped the whole background run (SIGTTIN)
  # past its bound; -k: a run that ignores the bound's SIGTERM is killed a minute later.
  (cd "$scratch" && PYTHONPATH="$scratch/mutants" nice -n 19 timeout -k 60 "$LIMIT" \
     "$PYTHON" -m mutmut run --max-children 1 "${mutants[@]}" </dev/null >"$OUT/$stem.log" 2>&1) \
    || status=$?
  seconds=$(( $(date +%s) - start ))
  (cd "$scratch" && nice -n 19 "$PYTHON" -m mutmut export-cicd-stats >/dev/null 2>&1 || true
   { echo "module: $module; source: $source; tests: $tests;${MUTATION_MUTANTS:+ mutants: $MUTATION_MUTANTS;}" \
          "exit: $status; seconds: $seconds; limit: $LIMIT;" \
          "date: $(date -u +%Y-%m-%d)"
     [[ -f mutants/mutmut-cicd-stats.json ]] && cat mutants/mutmut-cicd-stats.json; echo; } >"$OUT/$stem.txt"
   # the survivors' diffs from one process: a `mutmut show` per mutant took minutes for a few
   # hundred (a Python start-up each, under nice on loaded cores)
   "$PYTHON" - "${mutants[@]}" >"$OUT/$stem-survivors.txt" <<'PY' || true
import sys

from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files

for path in walk_mutatable_files():
    data = SourceFileMutationData(path=path)
    data.load()
    for name, code in data.exit_code_by_key.items():
        status = status_by_exit_code[code]
        # "not checked": what a run cut by its bound never reached, to be checked by hand or re-run
        # (not listed where MUTATION_MUTANTS, the arguments here, left the others out on purpose)
        listed = ("survived", "timeout", "suspicious", "no tests") + (() if sys.argv[1:] else ("not checked",))
        if status in listed:
            print(f"=== {name}\n# {name}: {status}")
            try:
                print(get_diff_for_mutant(name, path=path))
            except Exception as exc:  # one mutant's diff failing must not end the listing
                print(f"(no diff for {name}: {exc})")
PY
  )
  cat "$OUT/$stem.txt" >&2
  rm -rf "$scratch"
  scratch=""
done
