"""After the README's ``pip install -e .``, static tools run from another folder find the package.

setuptools installs an explicit ``package-dir`` root as a plain path entry (a static ``.pth``
file), which mypy and pyright read; its default for a flat layout is an import-hook finder that
they cannot follow (``import-not-found``). These tests use the installed copy of the
interpreter running them and skip when that copy is not an editable install of this checkout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = '''
import numpy as np
from numpy.typing import NDArray

import cvfilters as cvf


def soften(path: str) -> NDArray[np.uint8]:
    image = cvf.read(path)
    pipe = cvf.Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
    return np.asarray(cvf.fx.sepia(pipe(image)), dtype=np.uint8)


reveal_type(cvf.apply(cvf.read("in.png"), "sepia"))
'''


@pytest.fixture
def user_folder(tmp_path: Path) -> Path:
    """A folder outside the checkout holding a user's script; skips unless this checkout is installed."""
    code = "import json, cvfilters; print(json.dumps(cvfilters.__file__))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    if proc.returncode != 0 or Path(json.loads(proc.stdout)).resolve().parent != ROOT / "cvfilters":
        pytest.skip("this interpreter has no editable install of this checkout (pip install -e .)")
    (tmp_path / "user_script.py").write_text(SCRIPT)
    return tmp_path


def test_editable_install_is_a_plain_path_entry() -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    if not list(site.glob("__editable__*cvfilters*.pth")):
        pytest.skip("cvfilters is not installed in editable mode here")
    assert not list(site.glob("__editable__*cvfilters*finder*.py")), "an import-hook finder static tools cannot read"
    pth_files = site.glob("__editable__*cvfilters*.pth")
    entries = {line.strip() for pth in pth_files for line in pth.read_text().splitlines()}
    assert str(ROOT) in entries


def test_mypy_strict_finds_the_installed_package_from_another_folder(user_folder: Path, mypy_cache: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(mypy_cache), "user_script.py"],
                          capture_output=True, text=True, timeout=300, cwd=user_folder)
    output = proc.stdout + proc.stderr
    assert "import-not-found" not in output and "error:" not in output, output
    assert 'Revealed type is "numpy.ndarray[' in output, output


def test_pyright_finds_the_installed_package_from_another_folder(user_folder: Path) -> None:
    beside = [Path(sys.executable).with_name(name) for name in ("basedpyright", "pyright")]
    exe = next((str(path) for path in beside if path.exists()), shutil.which("basedpyright") or shutil.which("pyright"))
    if exe is None:
        pytest.skip("neither pyright nor basedpyright is installed (pip install basedpyright)")
    proc = subprocess.run([exe, "--pythonpath", sys.executable, "user_script.py"],
                          capture_output=True, text=True, timeout=300, cwd=user_folder)
    output = proc.stdout + proc.stderr
    assert "reportMissingImports" not in output and "0 errors" in output, output
    assert 'is "ndarray[' in output, output
