"""What each ``cv2.cuda`` call takes: one row per backend primitive, read from OpenCV's sources.

Each :class:`Capability` names the ``cv2.cuda`` functions a primitive needs, the depths,
channel counts, borders and kernel limits they accept, and the OpenCV header, source or
test it was read from. :meth:`cvfilters.backends.cuda.CudaBackend.supports` is the one
guard that reads this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cv2

from cvfilters.backends.base import CV_DEPTH

MAX_TAPS = 32  # cv::cuda separable filters take kernels of at most 32 coefficients
_BORDERS = frozenset({cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_CONSTANT,
                      cv2.BORDER_REFLECT, cv2.BORDER_WRAP})
_ALL_DEPTHS = frozenset(CV_DEPTH.values())
NO_64F = _ALL_DEPTHS - {cv2.CV_64F}
SEPARABLE_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32S, cv2.CV_32F})
LINEAR_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_32F})
_WARP_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32F})
_ANY_CHANNELS = frozenset({1, 2, 3, 4})
_FILTERS_CPP = "opencv_contrib modules/cudafilters/src/filtering.cpp"


@dataclass(frozen=True)
class Capability:
    """What one primitive's ``cv2.cuda`` call takes, as read from OpenCV's sources.

    Attributes
    ----------
    functions : tuple of str
        ``cv2.cuda`` names the primitive needs (split/merge are added where planes run).
    depths : frozenset of int
        Image depths the call takes.
    channels : frozenset of int or mapping of depth to frozenset
        Channel counts the call takes directly (per depth where they differ).
    planes : bool
        Whether other channel counts (up to 4) may run plane by plane.
    borders : frozenset of int, optional
        Border modes the call takes; None when it takes no border argument.
    max_taps : int, optional
        Longest kernel the call takes.
    source : str
        Where in OpenCV this row was read.
    """

    functions: tuple[str, ...]
    depths: frozenset[int]
    channels: frozenset[int] | Mapping[int, frozenset[int]] = _ANY_CHANNELS
    planes: bool = False
    borders: frozenset[int] | None = None
    max_taps: int | None = None
    source: str = ""

    def takes_channels(self, depth: int, channels: int) -> bool:
        allowed = self.channels.get(depth, frozenset()) if isinstance(self.channels, Mapping) else self.channels
        return channels in allowed


def _row(functions: str, depths: frozenset[int], source: str, **options: Any) -> Capability:
    return Capability(tuple(functions.split()), depths, source=source, **options)


_C134 = frozenset({1, 3, 4})
_C14 = frozenset({1, 4})
_C1 = frozenset({1})
CAPABILITIES: dict[str, Capability] = {
    "split": _row("split", NO_64F, "cudaarithm.hpp split: 1..4 channels"),
    "merge": _row("merge", NO_64F, "cudaarithm.hpp merge: 1..4 single-channel planes of one depth", channels=_C1),
    "pad": _row("copyMakeBorder", NO_64F, "cudaarithm/src/cuda/copy_make_border.cu copyMakeBorder: funcs[6][4] "
                "holds 2 channels for 8U only (1, 3, 4 for 16U, 16S, 32F)", borders=_BORDERS,
                channels={cv2.CV_8U: _ANY_CHANNELS, **dict.fromkeys((cv2.CV_16U, cv2.CV_16S, cv2.CV_32F), _C134)}),
    "gaussian": _row("createGaussianFilter", SEPARABLE_DEPTHS,
                     f"{_FILTERS_CPP}: createGaussianFilter -> SeparableLinearFilter, rowFilterFuncs for 1, 3, 4 "
                     "channels, CV_Assert(kernel cols <= 32); test_filters.cpp GaussianBlur: 4 levels, 1e-4 float",
                     channels=_C134, planes=True, borders=_BORDERS, max_taps=MAX_TAPS),
    "sep_filter2d": _row("createSeparableLinearFilter", SEPARABLE_DEPTHS,
                         f"{_FILTERS_CPP}: SeparableLinearFilter (1, 3, 4 channels, at most 32 taps); "
                         "test_filters.cpp SeparableLinearFilter: 1 level, 1e-2 float",
                         channels=_C134, planes=True, borders=_BORDERS, max_taps=MAX_TAPS),
    "sobel": _row("createSobelFilter", SEPARABLE_DEPTHS,
                  f"{_FILTERS_CPP}: createSobelFilter -> createDerivFilter -> SeparableLinearFilter; "
                  "test_filters.cpp Sobel: exact for integers", channels=_C134, planes=True, borders=_BORDERS,
                  max_taps=MAX_TAPS),
    "box": _row("createBoxFilter", frozenset({cv2.CV_8U, cv2.CV_32F}),
                f"{_FILTERS_CPP}: NPPBoxFilter CV_Assert(8UC1 || 8UC4 || 32FC1)",
                channels={cv2.CV_8U: _C14, cv2.CV_32F: _C1}, planes=True, borders=_BORDERS),
    "filter2d": _row("createLinearFilter", _WARP_DEPTHS,
                     f"{_FILTERS_CPP}: LinearFilter CV_Assert(8U || 16U || 32F; 1 or 4 channels); 16S runs in 32F",
                     channels=_C14, planes=True, borders=_BORDERS),
    "magnitude": _row("magnitude", frozenset({cv2.CV_32F}), "cudaarithm.hpp magnitude: CV_32FC1 (run on reshape(1))"),
    "abs_convert": _row("abs", frozenset({cv2.CV_16S, cv2.CV_32F}),
                        "cudaarithm.hpp abs (element_operations.cpp absMat: 16S and 32F among others)"),
    "clip": _row("threshold", frozenset({cv2.CV_32F}), "cudaarithm.hpp threshold THRESH_TRUNC"),
    "threshold": _row("threshold", frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_32F}), "cudaarithm.hpp threshold"),
    "lut": _row("createLookUpTable", frozenset({cv2.CV_8U}),
                "cudaarithm/src/cuda/lut.cu: table 8U 1x256 with 1 or 3 channels; transform CV_Assert(src 8UC1 "
                "|| 8UC3; lut_cn == 1 || lut_cn == cn)", channels=frozenset({1, 3})),
    "calc_hist": _row("histEven split", frozenset({cv2.CV_8U, cv2.CV_16U}), "cudaimgproc.hpp histEven"),
    "min_max": _row("minMax split", _ALL_DEPTHS, "cudaarithm.hpp minMax: single channel (run per plane)"),
    "equalize_hist": _row("equalizeHist", frozenset({cv2.CV_8U}), "cudaimgproc.hpp equalizeHist: CV_8UC1",
                          channels=_C1),
    "clahe": _row("createCLAHE", frozenset({cv2.CV_8U, cv2.CV_16U}),
                  "cudaimgproc.hpp createCLAHE: CV_8UC1, CV_16UC1 in builds that have it (else cv2.error: "
                  "fallback); test_histogram.cpp CLAHE: 1 level", channels=_C1),
    "median": _row("createMedianFilter", frozenset({cv2.CV_8U}),
                   f"{_FILTERS_CPP}: MedianFilter CV_Assert(srcType == CV_8UC1; windowSize >= 3; window / 2 < "
                   "rows, cols); test_filters.cpp Median: interior only, 1 level", channels=_C1),
    "bilateral": _row("bilateralFilter", frozenset({cv2.CV_8U, cv2.CV_32F}),
                      "cudaimgproc.hpp bilateralFilter: 1 or 3 channels, no BORDER_WRAP", channels=frozenset({1, 3}),
                      borders=_BORDERS - {cv2.BORDER_WRAP}),
    "morphology": _row("createMorphologyFilter", frozenset({cv2.CV_8U, cv2.CV_32F}),
                       f"{_FILTERS_CPP}: MorphologyFilter CV_Assert(8UC1, 8UC4, 32FC1, 32FC4), pads with "
                       "BORDER_DEFAULT (reflect101), iterations >= 2 of a non-rectangular element read a zeroed "
                       "buffer; test_filters.cpp Erode/Dilate/MorphEx: inner ROI only",
                       channels=_C14, planes=True, borders=frozenset({cv2.BORDER_REFLECT_101})),
    "multiply": _row("multiply", NO_64F, "cudaarithm.hpp multiply"),
    "divide": _row("divide", NO_64F, "cudaarithm/src/cuda/div_mat.cu: b != 0 ? saturate_cast<D>(a / b) : 0 "
                   "(integer division truncates at scale 1; 0 where b == 0)"),
    "add_weighted": _row("addWeighted", NO_64F, "cudaarithm.hpp addWeighted"),
    "bitwise_not": _row("bitwise_not", NO_64F, "cudaarithm.hpp bitwise_not"),
    "flip": _row("flip", frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_32S, cv2.CV_32F}),
                 "cudaarithm.hpp flip: 1, 3, 4 channels", channels=_C134, planes=True),
    "resize": _row("remap", _WARP_DEPTHS, "cudawarping.hpp remap/resize: 1, 3, 4 channels; test_resize.cpp "
                   "ResizeSameAsHost INTER_AREA: 1 level, 1e-2 float", channels=_C134, planes=True),
    "remap": _row("remap", _WARP_DEPTHS, "cudawarping.hpp remap: 1, 3, 4 channels", channels=_C134, planes=True,
                  borders=_BORDERS),
    "sqrt": _row("sqrt", frozenset({cv2.CV_32F}), "cudaarithm.hpp sqrt (float32 here, as the primitive's contract)"),
    "minimum": _row("min", NO_64F, "cudaarithm.hpp min: two matrices of one type"),
    "maximum": _row("max", NO_64F, "cudaarithm.hpp max: two matrices of one type"),
    "compare": _row("compare", NO_64F, "cudaarithm.hpp compare: 8-bit 255/0 per channel, operands of one type"),
    "select": _row("split", NO_64F, "GpuMat::copyTo(mask, dst): an 8-bit mask of 1 or the image's channels"),
}
