#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU and an OpenCV build with CUDA, run the
# cuda and opencl-on-GPU test subsets and the backends benchmark (cpu, opencl, cuda),
# in under 5 minutes, record both in bench/results.json and bench/RESULTS.md (section
# "GPU check" and the backends section; the other sections are kept), and print what
# ran where.
#
#   bench/gpu_check.sh                     # from the repository root or anywhere
#
# Environment:
#   PYTHON                   interpreter (default: python3, else python)
#   GPU_CHECK_OUT            folder of results.json/RESULTS.md to update (default bench;
#                            docs/benchmarks.md is not touched)
#   GPU_CHECK_ALLOW_MISSING  1: run even without a GPU or a CUDA build (cuda tests skip,
#                            the benchmark reports cuda as unavailable); default: stop
#   PYTEST_LIMIT, BENCH_LIMIT  seconds for each step (default 110 and 170)
#
# Exit status: 0 all ran and passed; 1 a step failed or timed out; 2 no GPU/CUDA build.
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-$(command -v python3 || command -v python)}
OUT=${GPU_CHECK_OUT:-bench}
PYTEST_LIMIT=${PYTEST_LIMIT:-110}
BENCH_LIMIT=${BENCH_LIMIT:-170}
started=$(date +%s)
status=0

say() { printf '\n== %s\n' "$*"; }

say "machine"
echo "host: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  have_gpu=1
else
  echo "gpu: none (nvidia-smi not found)"
  have_gpu=0
fi
"$PYTHON" - <<'EOF'
import re
import cv2
info = cv2.getBuildInformation()
cuda = re.search(r"NVIDIA CUDA:\s*(.*)", info)
print(f"opencv: {cv2.__version__}; built with CUDA: {cuda.group(1).strip() if cuda else 'NO'}; "
      f"CUDA devices seen: {cv2.cuda.getCudaEnabledDeviceCount()}")
print(f"OPENCV_OPENCL_DEVICE={__import__('os').environ.get('OPENCV_OPENCL_DEVICE', '(unset)')}")
EOF
cuda_devices=$("$PYTHON" -c "import cv2; print(cv2.cuda.getCudaEnabledDeviceCount())" 2>/dev/null || echo 0)

say "backends (cvfilters backends): where each backend runs"
"$PYTHON" -m cvfilters backends

if [[ "$have_gpu" != 1 || "$cuda_devices" -lt 1 ]]; then
  echo
  echo "No usable CUDA device for OpenCV here (GPU found: $have_gpu, OpenCV CUDA devices: $cuda_devices)."
  echo "Needs an NVIDIA GPU and OpenCV built with CUDA and the contrib CUDA modules (the PyPI wheels have none)."
  if [[ "${GPU_CHECK_ALLOW_MISSING:-0}" != 1 ]]; then
    echo "Stopping (set GPU_CHECK_ALLOW_MISSING=1 to run anyway: cuda then skips)."
    exit 2
  fi
  echo "GPU_CHECK_ALLOW_MISSING=1: running anyway; cuda tests skip and the benchmark notes cuda as unavailable."
else
  # On a GPU machine a missing backend is a failure, not a skip.
  export CVFILTERS_REQUIRE_BACKENDS=cuda
fi

# The device subsets: every test parametrised over device backends (parity with cpu, the
# cuda primitives, fusion and pipelines on the device, the families' device tests).
TESTS=(tests/properties/test_backend_parity.py tests/backends/test_cuda_backend.py tests/engine/test_pipeline.py tests/engine/test_fusion.py
       tests/filters/test_blur.py tests/filters/test_convolve.py tests/filters/test_warp.py tests/filters/test_feather.py tests/filters/test_histogram.py
       tests/filters/test_cartoon.py tests/filters/test_color.py)
say "tests: pytest --backend=cuda,opencl (limit ${PYTEST_LIMIT}s)"
t0=$(date +%s)
mkdir -p "$OUT"
timeout "$PYTEST_LIMIT" "$PYTHON" -m pytest --backend=cuda,opencl -q -rs -p no:cacheprovider \
  --junitxml="$OUT/gpu_tests.xml" "${TESTS[@]}" 2>&1 | tail -n 40
rc=${PIPESTATUS[0]}
tests_s=$(( $(date +%s) - t0 ))
[[ $rc -ne 0 ]] && status=1

say "benchmark: bench/run.py --quick --only backends --backends cpu,opencl,cuda (limit ${BENCH_LIMIT}s)"
t0=$(date +%s)
timeout "$BENCH_LIMIT" "$PYTHON" bench/run.py --quick --only backends --backends cpu,opencl,cuda --out "$OUT" \
  --readme none >"$OUT/gpu_bench_stdout.md" 2>"$OUT/gpu_bench_stderr.txt"
brc=$?
bench_s=$(( $(date +%s) - t0 ))
tail -n 15 "$OUT/gpu_bench_stderr.txt"
[[ $brc -ne 0 ]] && status=1

say "recording the tests in $OUT/results.json and $OUT/RESULTS.md"
"$PYTHON" bench/gpu_record.py "$OUT" "pytest --backend=cuda,opencl (${#TESTS[@]} files): exit $rc after ${tests_s}s" \
  || status=1
if [[ -f "$OUT/RESULTS.md" ]]; then
  sed -n '/^## Backends/,/^## Peak memory/p' "$OUT/RESULTS.md" | sed '$d'
  sed -n '/^## GPU check/,$p' "$OUT/RESULTS.md"
fi

say "what ran where"
echo "tests     : exit $rc after ${tests_s}s ($( [[ $rc -eq 124 ]] && echo 'TIMED OUT' || echo 'see the pytest summary above'))"
echo "benchmark : exit $brc after ${bench_s}s ($( [[ $brc -eq 124 ]] && echo 'TIMED OUT' || echo "results in $OUT"))"
"$PYTHON" -m cvfilters backends | sed 's/^/backend   : /'
echo "total     : $(( $(date +%s) - started ))s (budget 300s)"
exit $status
