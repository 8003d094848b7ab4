"""A user's script type-checks under ``mypy --strict``: py.typed, overloads, the fx stub.

The script below uses read, apply (ndarray and PIL), Pipeline (call and map), fx and
write. mypy must report nothing, and the revealed types must be arrays for arrays and
PIL images for PIL images (not ``Any``). cvfilters is found on ``mypy_path`` and
followed silently, as an installed package is (its own code is not what is checked).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES

ROOT = FIXTURES.parent

SCRIPT = '''
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from PIL import Image

import cvfilters as cvf


def process(src: Path, dst: Path) -> list[NDArray[np.uint8]]:
    cvf.set_defaults(channel_order="rgb")
    img = cvf.read(src)
    out = cvf.apply(img, "gaussian_blur", sigma=2.0, channel_order="rgb")
    spec = cvf.apply(img, "sepia | vignette:radius=0.8")
    pil = cvf.apply(Image.fromarray(img), "sepia")
    pipe = cvf.Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
    one = pipe(out, backend="cpu")
    many = pipe.map([img, out], workers=2)
    batch = pipe.map(np.stack([img, out]))
    pils = pipe.map([pil])
    lazy = pipe.map(frame for frame in [img, out])
    fx = cvf.fx.gaussian_blur(img, sigma=3.0, border="reflect")
    reveal_type(out)
    reveal_type(spec)
    reveal_type(pil)
    reveal_type(one)
    reveal_type(many)
    reveal_type(batch)
    reveal_type(pils)
    reveal_type(fx)
    cvf.write(dst, one, channel_order="rgb")
    pil.save(dst.with_suffix(".jpg"))
    return [np.asarray(m, dtype=np.uint8) for m in [*many, *lazy]]
'''


def test_user_script_passes_mypy_strict(tmp_path: Path, mypy_cache: Path) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {ROOT}\ncache_dir = {mypy_cache}\n\n"
                      "[mypy-cvfilters.*]\nfollow_imports = silent\n")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file", str(config), str(script)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert "error:" not in output, output
    revealed = re.findall(r'Revealed type is "([^"]+)"', output)
    assert len(revealed) == 8, output
    out, spec, pil, one, many, batch, pils, fx = revealed
    for text in (out, spec, one, batch, fx):
        assert text.startswith("numpy.ndarray["), text
    assert pil == "PIL.Image.Image"
    assert re.fullmatch(r"(builtins\.)?list\[numpy\.ndarray\[.*\]\]", many), many
    assert re.fullmatch(r"(builtins\.)?list\[PIL\.Image\.Image\]", pils), pils
