"""match_histogram's reference as the step reads it when it runs (test_histogram.py has the filter itself).

A histogram file of a grey image holds one row; matched ``per_channel`` to a colour image it
serves B, G and R alike. A reference that can no longer be read when the step runs (parsed
and checked before) is a usage error naming the filter and its parameter.

Oracles: scikit-image's ``match_histograms`` of each channel against the grey reference's
pixels (float64, not rounded: at most 0.5 of a level off, 0.3 on average, as in
test_histogram.py), and the error text written out.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import skimage.data
from skimage.exposure import match_histograms

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.filters.histogram import save_histogram
from tests.conftest import photo

ROUNDING = 0.5 + 1e-9


@pytest.mark.parametrize("suffix", [".npy", ".json"])
def test_match_histogram_per_channel_to_a_grey_histogram_file_matches_each_channel_to_it(tmp_path: Path,
                                                                                         suffix: str) -> None:
    """A one-row histogram file must serve all three channels; not repeating it refused the file or broke the tables."""
    image, grey = photo(48, 64, 3), skimage.data.camera()
    path = tmp_path / f"grey{suffix}"
    assert save_histogram(path, grey).shape == (1, 256)
    out = cvf.apply(image, "match_histogram", backend="cpu", reference=path, space="per_channel")
    for c in range(3):
        difference = np.abs(out[..., c] - match_histograms(image[..., c], grey))
        assert difference.max() <= ROUNDING and difference.mean() <= 0.3, (c, difference.max(), difference.mean())


def test_match_histogram_reference_gone_when_the_step_runs_names_the_filter_and_parameter(tmp_path: Path) -> None:
    """A reference removed between parsing and running must be reported as ``match_histogram: reference=...``."""
    path = tmp_path / "ref.png"
    assert cv2.imwrite(str(path), photo(8, 8, 3))
    pipe = Pipeline([("match_histogram", {"reference": str(path)})])  # read and checked here
    path.unlink()
    with pytest.raises(ParameterError, match=r"^match_histogram: reference=\S*ref\.png cannot be used "
                                             r"\(\[Errno 2\] No such file or directory: .*ref\.png'\)$"):
        pipe(photo(8, 8, 3), backend="cpu")
