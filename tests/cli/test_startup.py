"""Start-up: what each command imports, the lazily loaded filter families and their manifest.

Every check runs in a fresh interpreter (a subprocess), as a shell would start it: the
point is what a command loads, which the test process (that imported everything) cannot
show. The timing targets are measured by ``bench/startup.py``, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.filters import FAMILIES
from cvfilters.registry import catalog as registry

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "rich", "matplotlib", "dask", "distributed", "PIL", "skimage", "scipy")
FAMILY_MODULES = tuple(f"cvfilters.filters.{family}" for family in FAMILIES)

# Runs the CLI in this interpreter and reports the modules it imported.
_CLI_MODULES = """
import json, sys
from cvfilters.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def cli_modules(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    report = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", _CLI_MODULES, str(report), *args], check=True, capture_output=True,
                   timeout=120)
    data = json.loads(report.read_text())
    return data["code"], set(data["modules"])


def python_modules(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    return set(json.loads(out.splitlines()[-1]))


def families(modules: set[str]) -> set[str]:
    return {m for m in modules if m in FAMILY_MODULES}


def heavy(modules: set[str], allow: tuple[str, ...] = ()) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HEAVY and m.split(".")[0] not in allow}


def test_manifest_is_fresh() -> None:
    """Fails when a built-in filter was added or changed without ``python scripts/update_manifest.py``."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "update_manifest.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_manifest_matches_the_registry() -> None:
    """The same facts in-process: every built-in is listed with its declaration, in its own family."""
    from cvfilters.registry.manifest import FILTERS

    builtins = {flt.name: flt for flt in cvf.list_filters() if flt.name in FILTERS}
    assert set(builtins) == set(FILTERS)
    assert {flt.name for flt in registry.loaded()} >= set(FILTERS)  # what update_manifest.py lists
    for name, entry in FILTERS.items():
        info = builtins[name].info()
        assert (entry["category"], entry["summary"], entry["params"]) == (
            info["category"], info["summary"], info["params"]), name
        assert entry["module"] in FAMILIES


def test_the_listing_from_the_manifest_is_the_declarations() -> None:
    """``catalog()`` in a fresh process (the manifest alone) lists what the loaded filters declare here."""
    code = "import json; from cvfilters.registry import catalog; print(json.dumps(catalog.catalog()))"
    fresh = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                                      check=True).stdout)
    cvf.list_filters()  # every family loaded: each entry comes from its filter's declaration
    names = {e["name"] for e in fresh}
    declared = [{key: e[key] for key in ("name", "category", "summary", "params")}
                for e in json.loads(json.dumps(registry.catalog())) if e["name"] in names]
    assert fresh == declared and len(fresh) >= 92


def test_import_cvfilters_loads_no_family_and_no_opencv() -> None:
    modules = python_modules("import cvfilters")
    assert not families(modules) and not heavy(modules)
    assert "cv2" not in modules and "numpy" not in modules


def test_lookup_imports_only_the_family_it_needs() -> None:
    modules = python_modules("import cvfilters as cvf, numpy as np\n"
                             "out = cvf.apply(np.zeros((4, 4, 3), np.uint8), 'INVERT', backend='cpu')\n"
                             "assert out.min() == 255")
    assert families(modules) == {"cvfilters.filters.color"}
    assert not heavy(modules, allow=("PIL",))


def test_listing_imports_no_family() -> None:
    modules = python_modules("from cvfilters.registry import catalog as registry\n"
                             "entries = registry.catalog('Blur')\n"
                             "assert entries and {e['category'] for e in entries} == {'blur'}\n"
                             "assert all('params' in e for e in entries)")
    assert not families(modules) and "cv2" not in modules


def test_help_list_info_apply_load_only_what_they_need(tmp_path: Path) -> None:
    for args in (["--help"], ["list"], ["list", "--category", "blur", "--json"]):
        code, modules = cli_modules(tmp_path, *args)
        assert code == 0
        assert not families(modules), args
        assert "cv2" not in modules and not heavy(modules), (args, heavy(modules))
    code, modules = cli_modules(tmp_path, "info", "gaussian_blur")
    assert code == 0 and "cvfilters.filters.blur" in families(modules)
    assert families(modules) <= {"cvfilters.filters.blur", "cvfilters.filters.convolve"}
    assert not heavy(modules)
    source = tmp_path / "in.png"
    cv2.imwrite(str(source), np.full((8, 8, 3), 7, np.uint8))
    code, modules = cli_modules(tmp_path, "apply", str(source), "-o", str(tmp_path / "out.png"), "-f", "invert")
    assert code == 0 and cv2.imread(str(tmp_path / "out.png"))[0, 0].tolist() == [248, 248, 248]
    assert families(modules) == {"cvfilters.filters.color"}
    assert not heavy(modules), heavy(modules)  # a plain PNG's header is read without Pillow
    assert "cvfilters.io.video" not in modules


@pytest.mark.parametrize("args", [["list"], ["list", "--json"], ["info", "invert"], ["backends", "--json"],
                                  ["apply", "{in}", "-o", "{out}", "-f", "invert"],
                                  ["apply", "{in}", "-o", "{out}", "--backend=cpu", "-finvert", "--quality", "90"]])
def test_plain_core_commands_take_the_fast_path_without_typer(tmp_path: Path, args: list[str]) -> None:
    """Fails if the fast path stops being taken (a Typer import costs as much as a small apply)."""
    source = tmp_path / "in.jpg"
    cv2.imwrite(str(source), np.full((8, 8, 3), 7, np.uint8))
    code, modules = cli_modules(tmp_path, *[a.format(**{"in": source, "out": tmp_path / "out.jpg"}) for a in args])
    assert code == 0
    assert not {m for m in modules if m.split(".")[0] in ("typer", "click", "PIL")}, args
    assert "cvfilters.cli.app" not in modules


def test_other_lines_still_run_through_typer(tmp_path: Path) -> None:
    code, modules = cli_modules(tmp_path, "list", "--bogus")
    assert code == 2 and "typer" in modules


def test_user_filters_are_listed_and_may_replace_a_builtin_before_its_family_loads() -> None:
    code = """
import numpy as np
import cvfilters as cvf
from cvfilters.registry import catalog as registry
try:
    cvf.register("invert", category="color", summary="mine")(lambda ctx, img: img)
except ValueError as exc:
    assert "registered already" in str(exc), exc
else:
    raise AssertionError("a built-in name was taken silently")
mine = cvf.register("invert", category="color", summary="mine", replace=True)(lambda ctx, img: img)
assert cvf.get_filter("Invert") is mine
cvf.register("my_tint", category="color", summary="tint")(lambda ctx, img: img)
entries = {e["name"]: e for e in registry.catalog("color")}
assert entries["invert"]["summary"] == "mine" and entries["my_tint"]["summary"] == "tint"
image = np.full((2, 2, 3), 9, np.uint8)
assert (cvf.apply(image, "invert", backend="cpu") == 9).all()
assert (cvf.apply(image, "grayscale", backend="cpu") == 9).all()  # the rest of the family loads as usual
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_registry_names_are_case_insensitive_and_suggest() -> None:
    assert cvf.get_filter("GAUSSIAN_BLUR") is cvf.get_filter("gaussian_blur")
    assert {f.name for f in cvf.list_filters("Blur")} == {f.name for f in cvf.list_filters("blur")}
    with pytest.raises(cvf.UsageError, match=r"category 'blurr' .*did you mean 'blur'"):
        registry.catalog("blurr")
    with pytest.raises(cvf.UsageError, match="did you mean gaussian_blur"):
        cvf.get_filter("gausian_blur")


def test_batch_summary_counts_from_process_start(tmp_path: Path) -> None:
    for i in range(2):
        cv2.imwrite(str(tmp_path / f"in{i}.png"), np.full((4, 4), i, np.uint8))
    env = {**os.environ, "COLUMNS": "80"}
    start = __import__("time").perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "in0.png"),
                           str(tmp_path / "in1.png"), "-o", str(tmp_path / "out"), "-f", "invert"],
                          capture_output=True, text=True, env=env, timeout=120)
    wall = __import__("time").perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    seconds = float(proc.stderr.strip().splitlines()[-1].split(" in ")[1].split(" s")[0])
    # the interpreter and imports alone take well over 0.1 s; the summary counts them, never more than the wall time
    assert 0.1 <= seconds <= wall + 0.05, (seconds, wall)


def test_first_lookups_from_many_threads_wait_for_the_family() -> None:
    """Threads looking up filters of a family another thread is importing get the filter, not an error."""
    code = """
import threading
import numpy as np
import cvfilters as cvf
names = ["gaussian_blur", "box_blur", "median_blur", "sobel", "invert", "sepia", "pixellate", "equalize"] * 3
errors, barrier = [], threading.Barrier(len(names))
def run(name):
    barrier.wait()
    try:
        cvf.apply(np.zeros((8, 8, 3), np.uint8), name, backend="cpu")
    except Exception as exc:
        errors.append(f"{name}: {exc!r}")
threads = [threading.Thread(target=run, args=(name,)) for name in names]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert not errors, errors
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
