"""The NaN/inf policy for float32 images, registry-wide (issue 24).

* NaN and infinite values propagate through point and linear maths: a pixel that was NaN
  is NaN after ``invert``, ``gamma``, ``gaussian_blur``, ... (colour kernels give NaN for
  every non-finite input), and the finite pixels far from it are untouched by it;
* a filter that cannot process them (k-means in ``quantize`` and ``cartoon``) raises
  :class:`cvfilters.InvalidImageError` with one line; the CLI adds the file's name;
* no filter raises anything else (no ``AssertionError``, no ``ValueError`` from inside).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import CvfError, InvalidImageError

REFUSING = {"quantize", "cartoon"}  # k-means: no distance to NaN
PROPAGATING = ["invert", "gamma", "levels", "posterize", "solarize", "gaussian_blur", "box_blur", "convolve"]


def required_values(flt: Any) -> dict[str, Any] | None:
    values = {}
    for param in flt.params:
        if param.required:
            if param.example is None:
                return None
            values[param.name] = param.example
    return values


def hostile(channels: int, seed: int = 0) -> np.ndarray:
    image = np.random.default_rng(seed).random((24, 20, channels)).astype(np.float32)
    image[5, 6, 0] = np.nan
    image[12, 3, channels - 1] = np.inf
    image[18, 15, 0] = -np.inf
    return image if channels > 1 else image[..., 0]


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_every_filter_returns_or_refuses_in_one_line(channels: int) -> None:
    raw: list[str] = []
    for flt in cvf.list_filters():
        values = required_values(flt)
        if values is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = cvf.apply(hostile(channels), flt.name, backend="cpu", **values)
            except InvalidImageError as exc:
                assert flt.name in REFUSING or "NaN" not in str(exc), (flt.name, str(exc))
                assert "\n" not in str(exc)
                continue
            except CvfError as exc:  # a refusal of this image for another reason (size, channels)
                assert "\n" not in str(exc) and "NaN" not in str(exc), (flt.name, str(exc))
                continue
            except Exception as exc:  # noqa: BLE001 - the contract is that nothing else escapes
                raw.append(f"{flt.name}: {type(exc).__name__}: {exc}")
                continue
        assert isinstance(out, np.ndarray) and out.dtype == np.float32, flt.name
    assert not raw, raw


@pytest.mark.parametrize("name", sorted(REFUSING))
def test_kmeans_filters_refuse_non_finite_values(name: str) -> None:
    with pytest.raises(InvalidImageError, match=r"^the image holds NaN or infinite values, which k-means"):
        cvf.apply(hostile(3), name, backend="cpu")
    cvf.apply(np.nan_to_num(hostile(3), posinf=1.0, neginf=0.0), name, backend="cpu")  # the advice works


@pytest.mark.parametrize("name", PROPAGATING)
def test_nan_propagates_through_point_and_linear_filters(name: str) -> None:
    image = hostile(3)
    params: dict[str, Any] = {"kernel": [[0, 0, 0], [0, 1, 0], [0, 0, 0]]} if name == "convolve" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = cvf.apply(image, name, backend="cpu", **params)
    assert np.isnan(out[5, 6, 0]), name
    finite = np.isfinite(out)
    assert finite[0, 19].all() and finite[23, 0].all(), name  # pixels far from every non-finite one stay finite


def test_cli_names_the_file_and_goes_on(tmp_path: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    for name, image in (("a.tif", hostile(3)), ("b.tif", hostile(3, 1)), ("c.tif", np.full((8, 8, 3), 0.5, "f4"))):
        tifffile.imwrite(tmp_path / name, image)
    proc = subprocess.run([sys.executable, "-m", "cvfilters", "apply", "a.tif", "b.tif", "c.tif", "-o", "out",
                           "-f", "quantize"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 1 and len(errors) == 2, proc.stderr
    assert all(line.startswith(("error: a.tif: ", "error: b.tif: ")) and "NaN" in line for line in errors)
    assert "Traceback" not in proc.stderr and "warning" not in proc.stderr
    assert (tmp_path / "out" / "c.tif").exists() and not (tmp_path / "out" / "a.tif").exists()


def test_dask_batch_names_the_file_and_goes_on(tmp_path: Path) -> None:
    """The same contract on a Dask cluster (``--scheduler``): the worker's failure is one line naming the file."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    tifffile = pytest.importorskip("tifffile")
    tifffile.imwrite(tmp_path / "a.tif", hostile(3))
    tifffile.imwrite(tmp_path / "c.tif", np.full((8, 8, 3), 0.5, "f4"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        proc = subprocess.run([sys.executable, "-m", "cvfilters", "apply", str(tmp_path / "a.tif"),
                               str(tmp_path / "c.tif"), "-o", str(tmp_path / "out"), "-f", "quantize",
                               "--scheduler", cluster.scheduler_address], capture_output=True, text=True, timeout=180)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 1 and len(errors) == 1 and errors[0].startswith(f"error: {tmp_path / 'a.tif'}: "), \
        proc.stderr
    assert (tmp_path / "out" / "c.tif").exists() and "Traceback" not in proc.stderr
