"""Which modules scripts/mutation.sh mutates, and the test files that cover each.

Every ``.py`` file of ``cvfilters/`` and ``cli/`` with code (package ``__init__`` files and
``__main__`` excepted) is a module, named by its path without ``.py`` and without the leading
``cvfilters/`` (``io/reading``, ``core/atomic``, ``cli/app``), or by its file name where that
is unique (``decoders``, ``atomic``). A module's tests are its mirror (``tests/io/test_reading.py``
for ``io/reading``), the test files that run its lines, the test files that import it (all of
them without a coverage map, else up to ``MAX_IMPORTERS``), and the extra files in ``EXTRA``,
less the tests in ``FORK_UNSAFE`` (but its mirror) where others cover the module.

"The test files that run its lines" come from ``COVERAGE_MAP``, written by ``--map`` from a
run of the suite under coverage with a context per test: for each module, the fewest test
files that together run every line the whole suite runs there (a greedy set cover, the mirror
first). A filter module is reached through the registry and the command line, which no import
of it shows.

    python scripts/mutation_plan.py --list          every module, one a line
    python scripts/mutation_plan.py MODULE          its source file, mutmut's isolation, its test files
                                                    (isolation "none": no function, nothing to mutate)
    python scripts/mutation_plan.py --map DATA      write COVERAGE_MAP from a coverage data file
                                                    (the suite run with dynamic_context = test_function)
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COVERAGE_MAP = ROOT / "mutation-results" / "coverage-map.json"
MAX_IMPORTERS = 5  # beside the coverage map's cover (see tests_for)
# module -> test files (or test ids) that exercise it without importing it
EXTRA: dict[str, list[str]] = {
    "registry/policies": ["tests/properties/test_registry_contract.py", "tests/filters/test_filters_oracles.py",
                          "tests/filters/test_blend.py"],
    "engine/fusion": ["tests/engine/test_pipeline.py"],
    # the distortions' references (scikit-image's swirl, GPUImage's bulge) live with the warps' tests
    "filters/distort": ["tests/filters/test_warp.py"],
    # the import-time kernels and the outline decisions, checked on their own
    "filters/warp": ["tests/filters/test_warp_kernel.py"],
    "filters/cartoon": ["tests/filters/test_cartoon_decisions.py"],
    "filters/_shared/histograms": ["tests/filters/test_histogram.py", "tests/filters/test_histogram_overlay.py"],
    # the mirror's tests split by job: the two-pass footprint factory, the overlay's placement, the reference
    "filters/histogram": ["tests/filters/test_histogram_passes.py", "tests/filters/test_histogram_overlay.py",
                          "tests/filters/test_match_histogram_references.py"],
    "registry/params": ["tests/properties/test_registry_contract.py", "tests/engine/test_pipeline.py",
                        "tests/cli/test_front_door.py::test_colours_are_rgb_as_people_write_them",
                        "tests/cli/test_front_door.py::test_colour_forms_and_errors"],
    "engine/pipeline": ["tests/engine/test_fusion.py", "tests/cli/test_front_door.py::test_spec_errors_suggest",
                        "tests/cli/test_front_door.py::test_pipeline_file_errors_name_file_line_and_key"],
    "io/reading": ["tests/io/test_io.py", "tests/properties/test_corpus.py", "tests/io/test_decoders.py",
                   "tests/io/test_orientation.py"],
    "io/writing": ["tests/io/test_io.py", "tests/properties/test_corpus.py", "tests/io/test_durability.py",
                   "tests/io/test_decoders.py", "tests/core/test_depths.py"],
    "io/decoders": ["tests/io/test_io.py", "tests/io/test_orientation.py", "tests/properties/test_corpus.py"],
    "io/encoders": ["tests/io/test_io.py", "tests/io/test_formats_outside.py"],
    "io/frames": ["tests/io/test_frame_writers.py", "tests/io/test_frame_reading.py"],  # newer than the coverage map
    "io/orientation": ["tests/io/test_io.py"],
    "filters/_shared/correlation": ["tests/filters/test_convolve.py", "tests/filters/test_filters_oracles.py",
                                    "tests/filters/test_blur.py", "tests/properties/test_modes.py"],
    "core/atomic": ["tests/io/test_durability.py"],
    "core/boundary": ["tests/api/test_python_api.py", "tests/properties/test_channel_order.py"],
    "core/arrays": ["tests/api/test_python_api.py", "tests/properties/test_channel_order.py"],
    "core/depths": ["tests/properties/test_modes.py"],
    "engine/parallel": ["tests/run/test_batch.py"],
    "run/executors": ["tests/run/test_batch.py"],
    "run/lifeline": ["tests/run/test_batch.py"],
    # split out of run/batch, newer than the coverage map: run/batch's cover there (test_batch.py is fork-unsafe)
    **{name: ["tests/cli/test_outcomes.py", "tests/io/test_orientation.py", "tests/cli/test_streaming.py",
              "tests/io/test_durability.py", "tests/properties/test_nonfinite.py", "tests/cli/test_cli.py",
              "tests/io/test_video.py"] for name in ("run/planning", "run/processing")},
    # crop's and pad's footprints (which rows and columns a tile reads) run only where a pipeline is tiled
    "filters/geometry": ["tests/engine/test_tiles.py",
                         *(f"tests/properties/test_tiling.py::test_tiled_equals_whole[{case}]"
                           for case in ("crop-uint8-4", "crop-uint16-1", "crop-float32-3", "pad-uint8-1",
                                        "pad-uint16-3", "pad-float32-4"))],
    # the factories (point_filter, color_kernel, matrix_filter) run at import: only tests that call them reach a mutant
    "filters/color": ["tests/filters/test_color_factories.py"],
    "backends/cuda_capabilities": ["tests/backends/test_cuda_backend.py", "tests/backends/test_cuda_capabilities.py"],
}
# Every filter family's module: the catalogue-wide oracles (each filter against cv2 called
# directly) and the documented defaults, choices and identities.
FILTER_WIDE = ["tests/filters/test_filters_oracles.py", "tests/properties/test_documented.py"]
_SKIP = {"__init__.py", "__main__.py"}
# Test files that start processes outliving a test: mutmut's fork runner reaps them with
# os.wait() and stops (KeyError on an unknown pid); they also take minutes. Another module's
# run leaves them out, but a module's own mirror is kept (every run uses forkserver isolation:
# run/lifeline's run without its mirror left `alive`'s mutants to tests that never call it).
FORK_UNSAFE = {"tests/run/test_lifeline.py", "tests/run/test_batch.py"}


def modules() -> dict[str, Path]:
    """Every module's name -> its source file (relative to the repository)."""
    found: dict[str, Path] = {}
    for base in ("cvfilters", "cli"):
        for path in sorted((ROOT / base).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if path.name in _SKIP or relative.parts[:2] == ("cvfilters", "cli"):  # the link to cli/
                continue
            name = str(relative.with_suffix("")).removeprefix("cvfilters/")
            found[name] = relative
    return found


def has_functions(source: Path) -> bool:
    """Whether the file defines a function: mutmut mutates function bodies only, so a module of
    data or type aliases alone (``core/types``, the generated ``registry/manifest``) has no mutant."""
    tree = ast.parse((ROOT / source).read_text())
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) for node in ast.walk(tree))


def resolve(name: str) -> str:
    """The full module name for ``name`` (a full name, or a file name that is unique)."""
    table = modules()
    if name in table:
        return name
    matches = [full for full in table if full.rsplit("/", 1)[-1] == name]
    if len(matches) != 1:
        raise SystemExit(f"unknown or ambiguous module {name!r}: " + (", ".join(matches) or "see --list"))
    return matches[0]


def mirror_of(name: str) -> Path:
    """The test file that mirrors module ``name`` (it may not exist)."""
    return ROOT / "tests" / Path(name).parent / f"test_{Path(name).name}.py"


def importers_of(name: str) -> list[str]:
    """The test files whose text imports module ``name``."""
    dotted = "cvfilters." + name.replace("/", ".")
    package, _, leaf = dotted.rpartition(".")
    imports = re.compile(rf"{re.escape(dotted)}\b|from {re.escape(package)} import [^\n]*\b{leaf}\b")
    return [str(path.relative_to(ROOT)) for path in sorted((ROOT / "tests").rglob("test_*.py"))
            if imports.search(path.read_text())]


def tests_for(name: str) -> list[str]:
    """The test files (and test ids) that cover module ``name``: mirror, covering files, extras."""
    mirror = mirror_of(name)
    selected = [str(mirror.relative_to(ROOT))] if mirror.exists() else []
    covering = json.loads(COVERAGE_MAP.read_text()) if COVERAGE_MAP.exists() else {}
    # The cover, and the importers where they are few: the test files that import a module are
    # usually the ones written for it (the cover alone gave filters/_shared/model_files one file
    # that runs its lines, not the learned-style tests that check what it refuses), but a module
    # most tests import (engine/pipeline: 23 files) spent a 300 s bound on mutmut's two passes
    # over them before checking one mutant.
    importers = importers_of(name)
    if name in covering:
        selected += [test for test in covering[name] if (ROOT / test).exists()]
        selected += importers if len(importers) <= MAX_IMPORTERS else []
    else:
        selected += importers
    if name.startswith("filters/") and not name.startswith("filters/_shared/"):
        selected += FILTER_WIDE
    selected += [test for test in EXTRA.get(name, []) if (ROOT / test.split("::")[0]).exists()]
    selected = list(dict.fromkeys(selected))
    own = str(mirror.relative_to(ROOT))
    safe = [test for test in selected if test.split("::")[0] not in FORK_UNSAFE or test == own]
    return safe or selected


# mutmut's process isolation, for every module. With ``fork`` each mutant's process is a copy
# of the one that ran the stats and clean passes, caches included: a map or noise field kept by
# ``backend.cached`` or an ``lru_cache`` (looks' cell maps and grain, photo's temperature matrix)
# was reused, so the mutated function never ran and its mutants "survived". The forkserver's
# processes come from one that only collected the tests. (It also suits tests that start
# processes.) MUTATION_ISOLATION overrides it in scripts/mutation.sh.
ISOLATION = "forkserver"


def test_file(context: str) -> str | None:
    """The test file of a coverage context (``tests.io.test_images.test_x`` or ``...Class.test_x``)."""
    parts = context.split(".")
    for end in range(len(parts), 1, -1):
        path = Path(*parts[:end]).with_suffix(".py")
        if path.parts[0] == "tests" and (ROOT / path).exists():
            return str(path)
    return None


def cover(lines_by_file: dict[str, set[int]], first: str | None) -> list[str]:
    """The fewest files (greedily) whose lines together are every line of ``lines_by_file``."""
    left = set().union(*lines_by_file.values())
    chosen: list[str] = []
    while left:
        best = first if first in lines_by_file and not chosen else max(
            sorted(lines_by_file), key=lambda path: len(lines_by_file[path] & left))
        chosen.append(best)
        left -= lines_by_file[best]
    return chosen


def coverage_map(data_file: Path) -> dict[str, list[str]]:
    """Module -> its covering test files, from coverage data recorded with a context per test.

    The data's paths are those of the tree the suite ran in, the data file's folder.
    """
    import coverage  # mutmut's dependency; only this command needs it

    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    run_root = data_file.resolve().parent
    by_source = {str(path): name for name, path in modules().items()}
    result: dict[str, list[str]] = {}
    for measured in data.measured_files():
        name = by_source.get(str(Path(measured).relative_to(run_root)).replace("cvfilters/cli/", "cli/", 1))
        if name is None:
            continue
        lines_by_file: dict[str, set[int]] = {}
        for line, contexts in data.contexts_by_lineno(measured).items():
            for test in filter(None, map(test_file, contexts)):
                lines_by_file.setdefault(test, set()).add(line)
        mirror = str(mirror_of(name).relative_to(ROOT))
        result[name] = cover(lines_by_file, mirror)
    return dict(sorted(result.items()))


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        print("\n".join(modules()))
        return 0
    if len(argv) == 2 and argv[0] == "--map":
        COVERAGE_MAP.write_text(json.dumps(coverage_map(Path(argv[1])), indent=1) + "\n")
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    name = resolve(argv[0])
    source = modules()[name]
    if not has_functions(source):
        print(name, source, "none")
        return 0
    print(name, source, ISOLATION, *tests_for(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
