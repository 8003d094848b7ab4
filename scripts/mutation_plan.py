"""Which modules scripts/mutation.sh mutates, and the test files that cover each.

Every ``.py`` file of ``cvfilters/`` and ``cli/`` with code (package ``__init__`` files and
``__main__`` excepted) is a module, named by its path without ``.py`` and without the leading
``cvfilters/`` (``io/images``, ``core/atomic``, ``cli/app``), or by its file name where that
is unique (``decoders``, ``atomic``). A module's tests are its mirror (``tests/io/test_images.py``
for ``io/images``), every test file that imports it, and the extra files in ``EXTRA`` (tests
that reach it through the CLI or the registry without importing it), less the tests in
``FORK_UNSAFE`` where others cover the module.

    python scripts/mutation_plan.py --list          every module, one a line
    python scripts/mutation_plan.py MODULE          its source file, mutmut's isolation, its test files
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# module -> test files (or test ids) that exercise it without importing it
EXTRA: dict[str, list[str]] = {
    "registry/policies": ["tests/properties/test_registry_contract.py", "tests/filters/test_filters_oracles.py",
                          "tests/filters/test_blend.py"],
    "engine/fusion": ["tests/engine/test_pipeline.py"],
    "filters/_shared/histograms": ["tests/filters/test_histogram.py"],
    "registry/params": ["tests/properties/test_registry_contract.py", "tests/engine/test_pipeline.py",
                        "tests/cli/test_front_door.py::test_colours_are_rgb_as_people_write_them",
                        "tests/cli/test_front_door.py::test_colour_forms_and_errors"],
    "engine/pipeline": ["tests/engine/test_fusion.py", "tests/cli/test_front_door.py::test_spec_errors_suggest",
                        "tests/cli/test_front_door.py::test_pipeline_file_errors_name_file_line_and_key"],
    "io/images": ["tests/io/test_io.py", "tests/properties/test_corpus.py", "tests/io/test_durability.py",
                  "tests/io/test_decoders.py", "tests/io/test_animation.py", "tests/io/test_orientation.py",
                  "tests/core/test_depths.py"],
    "io/decoders": ["tests/io/test_io.py", "tests/io/test_orientation.py", "tests/properties/test_corpus.py"],
    "io/encoders": ["tests/io/test_io.py", "tests/io/test_formats_outside.py"],
    "io/animation": ["tests/io/test_orientation.py"],
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
    # crop's and pad's footprints (which rows and columns a tile reads) run only where a pipeline is tiled
    "filters/geometry": ["tests/properties/test_documented.py", "tests/engine/test_tiles.py",
                         *(f"tests/properties/test_tiling.py::test_tiled_equals_whole[{case}]"
                           for case in ("crop-uint8-4", "crop-uint16-1", "crop-float32-3", "pad-uint8-1",
                                        "pad-uint16-3", "pad-float32-4"))],
    "filters/photo": ["tests/properties/test_documented.py"],
    "filters/looks": ["tests/properties/test_documented.py"],
    "filters/learned": ["tests/properties/test_documented.py"],
    "backends/cuda_capabilities": ["tests/backends/test_cuda_backend.py", "tests/backends/test_cuda_capabilities.py"],
}
_SKIP = {"__init__.py", "__main__.py"}
# Test files that start processes outliving a test: mutmut's fork runner reaps them with
# os.wait() and stops (KeyError on an unknown pid). Another module's run leaves them out;
# a module they alone cover runs them under mutmut's forkserver isolation.
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


def resolve(name: str) -> str:
    """The full module name for ``name`` (a full name, or a file name that is unique)."""
    table = modules()
    if name in table:
        return name
    matches = [full for full in table if full.rsplit("/", 1)[-1] == name]
    if len(matches) != 1:
        raise SystemExit(f"unknown or ambiguous module {name!r}: " + (", ".join(matches) or "see --list"))
    return matches[0]


def tests_for(name: str) -> list[str]:
    """The test files (and test ids) that cover module ``name``: mirror, importers, extras."""
    dotted = "cvfilters." + name.replace("/", ".")
    package, _, leaf = dotted.rpartition(".")
    imports = re.compile(rf"{re.escape(dotted)}\b|from {re.escape(package)} import [^\n]*\b{leaf}\b")
    mirror = ROOT / "tests" / Path(name).parent / f"test_{leaf}.py"
    selected = [str(mirror.relative_to(ROOT))] if mirror.exists() else []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if imports.search(path.read_text()):
            selected.append(str(path.relative_to(ROOT)))
    selected += [test for test in EXTRA.get(name, []) if (ROOT / test.split("::")[0]).exists()]
    selected = list(dict.fromkeys(selected))
    safe = [test for test in selected if test.split("::")[0] not in FORK_UNSAFE]
    return safe or selected


def isolation(tests: list[str]) -> str:
    """mutmut's process isolation: always forkserver.

    With ``fork`` each mutant's process is a copy of the one that ran the stats and clean
    passes, caches included: a map or noise field kept by ``backend.cached`` or an
    ``lru_cache`` (looks' cell maps and grain, photo's temperature matrix) was reused, so the
    mutated function never ran and its mutants "survived". The forkserver's processes come
    from one that only collected the tests. (It also suits tests that start processes.)
    """
    del tests  # kept for callers: the choice no longer depends on them
    return "forkserver"


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        print("\n".join(modules()))
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    name = resolve(argv[0])
    tests = tests_for(name)
    print(name, modules()[name], isolation(tests), *tests)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
