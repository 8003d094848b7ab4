#!/usr/bin/env bash
# Mutation testing of the core modules with mutmut 3 (not part of CI: it takes hours on 2 cores).
#
# Usage: scripts/mutation.sh [MODULE...]      (default: every module in MODULES, smallest first)
#        MUTATION_TIMEOUT=1800 scripts/mutation.sh policies fusion
#
# Each module runs in a scratch copy of the working tree (git ls-files), so the worktree is
# never touched: the [tool.mutmut] table of pyproject.toml gets `only_mutate` (the module)
# and `pytest_add_cli_args_test_selection` (the test files that cover it), then
# `mutmut run` mutates that module alone under `nice -n 19` and `timeout`. The scores go to
# mutation-results/<module>.txt (killed, survived, timeouts, not checked) with the survivors'
# diffs in mutation-results/<module>-survivors.txt; docs/mutation.md records a run.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${MUTATION_OUT:-$ROOT/mutation-results}"
LIMIT="${MUTATION_TIMEOUT:-3600}"  # seconds per module
PYTHON="${PYTHON:-python}"

# module -> source file and the test files that exercise it (smallest modules first)
declare -A FILES=(
  [policies]="cvfilters/registry/policies.py"
  [fusion]="cvfilters/engine/fusion.py"
  [histograms]="cvfilters/filters/_shared/histograms.py"
  [params]="cvfilters/registry/params.py"
  [pipeline]="cvfilters/engine/pipeline.py"
  [io]="cvfilters/io/images.py"
  [convolve]="cvfilters/filters/_shared/correlation.py"
)
declare -A TESTS=(
  [policies]="tests/registry/test_policies.py tests/properties/test_registry_contract.py tests/filters/test_filters_oracles.py tests/filters/test_blend.py"
  [fusion]="tests/engine/test_fusion.py tests/engine/test_pipeline.py"
  [histograms]="tests/filters/test_histograms.py tests/filters/test_histogram.py"
  [params]="tests/registry/test_params.py tests/properties/test_registry_contract.py tests/engine/test_pipeline.py tests/cli/test_front_door.py::test_colours_are_rgb_as_people_write_them tests/cli/test_front_door.py::test_colour_forms_and_errors"
  [pipeline]="tests/engine/test_pipeline_text.py tests/engine/test_pipeline.py tests/engine/test_fusion.py tests/cli/test_front_door.py::test_spec_errors_suggest tests/cli/test_front_door.py::test_pipeline_file_errors_name_file_line_and_key"
  [io]="tests/io/test_io.py tests/properties/test_corpus.py tests/io/test_durability.py tests/io/test_decoders.py tests/io/test_frames.py tests/io/test_formats.py tests/io/test_video.py tests/core/test_depths.py"
  [convolve]="tests/filters/test_convolve.py tests/filters/test_filters_oracles.py tests/filters/test_blur.py tests/properties/test_modes.py"
)
MODULES=(policies fusion histograms params pipeline io convolve)

mkdir -p "$OUT"
for module in "${@:-${MODULES[@]}}"; do
  [[ -n "${FILES[$module]:-}" ]] || { echo "unknown module: $module (choose from ${MODULES[*]})" >&2; exit 2; }
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  (cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$scratch")
  "$PYTHON" - "$scratch/pyproject.toml" "${FILES[$module]}" ${TESTS[$module]} <<'PY'
import json, sys
from pathlib import Path
path, source, tests = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
text = path.read_text()
extra = f"only_mutate = {json.dumps([source])}\npytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
path.write_text(text.replace("[tool.mutmut]\n", "[tool.mutmut]\n" + extra, 1))
PY
  echo "[$module] mutating ${FILES[$module]} against ${TESTS[$module]} (timeout ${LIMIT}s)" >&2
  status=0
  (cd "$scratch" && nice -n 19 timeout "$LIMIT" "$PYTHON" -m mutmut run --max-children 1 >"$OUT/$module.log" 2>&1) \
    || status=$?
  (cd "$scratch" && "$PYTHON" -m mutmut export-cicd-stats >/dev/null 2>&1 || true
   { echo "module: $module (${FILES[$module]}); tests: ${TESTS[$module]}; exit: $status"
     [[ -f mutants/mutmut-cicd-stats.json ]] && cat mutants/mutmut-cicd-stats.json; echo; } >"$OUT/$module.txt"
   "$PYTHON" -m mutmut results 2>/dev/null | grep -E "survived|timeout|suspicious" | while read -r name _; do
     name="${name%:}"; echo "=== $name"; "$PYTHON" -m mutmut show "$name" </dev/null 2>/dev/null; done >"$OUT/$module-survivors.txt" || true)
  cat "$OUT/$module.txt" >&2
  rm -rf "$scratch"
done
