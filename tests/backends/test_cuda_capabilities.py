"""Every row of the CUDA capability table against OpenCV's own assertions (issue 26).

``OPENCV`` below is written out from OpenCV's sources (opencv_contrib at commit 2a5154a44,
the 4.x/5.x CUDA modules), one entry per ``cv2.cuda`` call: the (depth, channels) pairs the
call's ``CV_Assert`` lines and dispatch tables (``funcs[depth][cn - 1]``, a 0 entry is
refused) accept, its border modes and kernel limit, with the file and function cited. It
is not read from :mod:`cvfilters.backends.cuda_capabilities`: a row that claims a pair, a
border or a kernel length OpenCV refuses fails here, on machines without a GPU too.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import pytest

from cvfilters.backends.cuda_capabilities import CAPABILITIES

U8, S8, U16, S16, S32, F32, F64 = cv2.CV_8U, cv2.CV_8S, cv2.CV_16U, cv2.CV_16S, cv2.CV_32S, cv2.CV_32F, cv2.CV_64F
REFLECT101, REPLICATE, CONSTANT, REFLECT, WRAP = (cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_CONSTANT,
                                                  cv2.BORDER_REFLECT, cv2.BORDER_WRAP)
FIVE_BORDERS = frozenset({REFLECT101, REPLICATE, CONSTANT, REFLECT, WRAP})


def pairs(depths: set[int], channels: set[int]) -> frozenset[tuple[int, int]]:
    return frozenset((d, c) for d in depths for c in channels)


@dataclass(frozen=True)
class Assertion:
    """What one OpenCV CUDA call accepts, as its source says."""

    accepts: frozenset[tuple[int, int]]  # (depth, channels)
    cites: str
    borders: frozenset[int] | None = None  # None: the call takes no border argument
    max_taps: int | None = None


FILTERS = "opencv_contrib modules/cudafilters/src/filtering.cpp"
# SeparableLinearFilter: rowFilterFuncs[7][4] / columnFilterFuncs: 8U, 16U, 16S, 32S, 32F with 1, 3, 4 channels
SEPARABLE = Assertion(pairs({U8, U16, S16, S32, F32}, {1, 3, 4}),
                      f"{FILTERS} SeparableLinearFilter::SeparableLinearFilter: rowFilterFuncs[sdepth][cn - 1] != 0; "
                      "CV_Assert(rowKernel_.cols <= 32); CV_Assert(rowBorderMode == BORDER_REFLECT101 || REPLICATE || "
                      "CONSTANT || REFLECT || WRAP)", FIVE_BORDERS, 32)
ELEMENTWISE = Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                        "opencv_contrib modules/cudaarithm/src/element_operations.cpp arithm_op: CV_Assert(sdepth <= "
                        "CV_64F && ddepth <= CV_64F) (64F only where the device supports double)")
OPENCV: dict[str, Assertion] = {
    "split": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                       "modules/cudaarithm/src/cuda/split_merge.cu split: CV_Assert(channels <= 4); "
                       "funcs[channels - 2][CV_ELEM_SIZE(depth) / 2] for element sizes 1, 2, 4, 8"),
    "merge": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1}),
                       "modules/cudaarithm/src/cuda/split_merge.cu merge: CV_Assert(src[i].channels() == 1; "
                       "n > 0 && n <= 4; one depth)"),
    "pad": Assertion(pairs({U8}, {1, 2, 3, 4}) | pairs({U16, S16, F32}, {1, 3, 4}),
                     "modules/cudaarithm/src/cuda/copy_make_border.cu copyMakeBorder: CV_Assert(depth <= CV_32F && "
                     "cn <= 4); funcs[6][4] has 2 channels for uchar only and no schar or int entries; "
                     "CV_Assert(borderType == BORDER_REFLECT_101 || REPLICATE || CONSTANT || REFLECT || WRAP)",
                     FIVE_BORDERS),
    "gaussian": SEPARABLE,  # createGaussianFilter -> createSeparableLinearFilter
    "sep_filter2d": SEPARABLE,
    "sobel": SEPARABLE,  # createSobelFilter -> createDerivFilter -> createSeparableLinearFilter
    "box": Assertion(frozenset({(U8, 1), (U8, 4), (F32, 1)}),
                     f"{FILTERS} NPPBoxFilter::NPPBoxFilter: CV_Assert(srcType == CV_8UC1 || CV_8UC4 || CV_32FC1)",
                     FIVE_BORDERS),
    "filter2d": Assertion(pairs({U8, U16, F32}, {1, 4}),
                          f"{FILTERS} LinearFilter::LinearFilter: CV_Assert(sdepth == CV_8U || CV_16U || CV_32F); "
                          "CV_Assert(scn == 1 || scn == 4); borders REFLECT101, REPLICATE, CONSTANT, REFLECT, WRAP",
                          FIVE_BORDERS),
    "magnitude": Assertion(pairs({F32}, {1, 2, 3, 4}),
                           "modules/cudaarithm/src/cuda/polar_cart.cu magnitude: CV_Assert(x.depth() == CV_32F)"),
    "abs_convert": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                             "modules/cudaarithm/src/cuda/math.cu abs: CV_Assert(src.depth() <= CV_64F), runs on "
                             "reshape(1)"),
    "clip": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                      "modules/cudaarithm/src/cuda/threshold.cu threshold: CV_Assert(depth <= CV_64F; type <= "
                      "THRESH_TOZERO_INV)"),
    "threshold": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                           "modules/cudaarithm/src/cuda/threshold.cu threshold: CV_Assert(depth <= CV_64F)"),
    "lut": Assertion(frozenset({(U8, 1), (U8, 3)}),
                     "modules/cudaarithm/src/cuda/lut.cu LookUpTableImpl::transform: CV_Assert(src.type() == CV_8UC1 "
                     "|| CV_8UC3); table CV_Assert(d_lut.depth() == CV_8U && 1x256)"),
    "calc_hist": Assertion(frozenset({(U8, 1), (U16, 1), (S16, 1)}),
                           "modules/cudaimgproc/src/histogram.cpp histEven: CV_Assert(src.type() == CV_8UC1 || "
                           "CV_16UC1 || CV_16SC1) (4-channel variants take C4; run per plane after split)"),
    "min_max": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1}),
                         "modules/cudaarithm/src/cuda/minmax.cu findMinMax: CV_Assert(src.channels() == 1); funcs "
                         "for every depth"),
    "equalize_hist": Assertion(frozenset({(U8, 1)}),
                               "modules/cudaimgproc/src/histogram.cpp equalizeHist: CV_Assert(src.type() == CV_8UC1)"),
    "clahe": Assertion(frozenset({(U8, 1), (U16, 1)}),
                       "modules/cudaimgproc/src/histogram.cpp CLAHE_Impl::apply: CV_Assert(type == CV_8UC1 || "
                       "type == CV_16UC1)"),
    "median": Assertion(frozenset({(U8, 1)}),
                        f"{FILTERS} MedianFilter::MedianFilter: CV_Error unless srcType == CV_8UC1 (without the "
                        "wavelet-matrix build); CV_Assert(windowSize >= 3)"),
    "bilateral": Assertion(pairs({U8, U16, S16, F32}, {1, 3, 4}),
                           "modules/cudaimgproc/src/bilateral_filter.cpp bilateralFilter: funcs[6][4] (uchar, ushort, "
                           "short, float with 1, 3, 4 channels); CV_Assert(borderMode == REFLECT101 || REPLICATE || "
                           "CONSTANT || REFLECT || WRAP)", FIVE_BORDERS),
    "morphology": Assertion(frozenset({(U8, 1), (U8, 4), (F32, 1), (F32, 4)}),
                            f"{FILTERS} MorphologyFilter::MorphologyFilter: CV_Assert(srcType == CV_8UC1 || CV_8UC4 "
                            "|| CV_32FC1 || CV_32FC4); NPP pads with BORDER_REFLECT101 only",
                            frozenset({REFLECT101})),
    "multiply": ELEMENTWISE,
    "divide": ELEMENTWISE,
    "add_weighted": ELEMENTWISE,
    "bitwise_not": Assertion(pairs({U8, S8, U16, S16, S32}, {1, 2, 3, 4}) | pairs({F32, F64}, {1, 2, 3, 4}),
                             "modules/cudaarithm/src/element_operations.cpp bitwise_not -> bitMat on the raw bits "
                             "(any depth)"),
    "flip": Assertion(pairs({U8, U16, S32, F32}, {1, 3, 4}),
                      "modules/cudaarithm/src/core.cpp flip: CV_Assert(src.depth() == CV_8U || CV_16U || CV_32S || "
                      "CV_32F); CV_Assert(src.channels() == 1 || 3 || 4)"),
    "resize": Assertion(pairs({U8, U16, S16, F32}, {1, 3, 4}),
                        "modules/cudawarping/src/resize.cpp resize: CV_Assert(src.depth() <= CV_32F && channels <= "
                        "4); funcs[6][4] for uchar, ushort, short, float with 1, 3, 4 channels"),
    "remap": Assertion(pairs({U8, U16, S16, F32}, {1, 3, 4}),
                       "modules/cudawarping/src/remap.cpp remap: funcs[6][4] for uchar, ushort, short, float with 1, 3,"
                       " 4 channels; CV_Assert(borderMode == REFLECT101 || REPLICATE || CONSTANT || REFLECT || WRAP)",
                       FIVE_BORDERS),
    "sqrt": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                      "modules/cudaarithm/src/cuda/math.cu sqrt: CV_Assert(src.depth() <= CV_64F)"),
    "minimum": ELEMENTWISE,
    "maximum": ELEMENTWISE,
    "compare": ELEMENTWISE,
    "select": Assertion(pairs({U8, S8, U16, S16, S32, F32, F64}, {1, 2, 3, 4}),
                        "opencv modules/core/src/cuda/gpu_mat.cu GpuMat::copyTo(dst, mask): any type, an 8-bit mask"),
}


# depths a primitive converts before its call (the row's source says so): filter2d runs 16-bit signed in 32F
CONVERTED = {"filter2d": {S16: F32}}


def claimed(primitive: str) -> set[tuple[int, int]]:
    """The (depth, channels) pairs the row says its call receives (a row whose functions include
    ``split`` besides its call runs that call on single planes)."""
    row = CAPABILITIES[primitive]
    if primitive != "split" and "split" in row.functions:
        return {(CONVERTED.get(primitive, {}).get(d, d), 1) for d in row.depths}
    return {(CONVERTED.get(primitive, {}).get(d, d), c) for d in row.depths for c in (1, 2, 3, 4)
            if row.takes_channels(d, c)}


def test_every_row_has_its_opencv_assertions_written_out():
    assert set(CAPABILITIES) == set(OPENCV)


@pytest.mark.parametrize("primitive", sorted(CAPABILITIES))
def test_the_row_claims_only_what_opencv_accepts(primitive):
    row, opencv = CAPABILITIES[primitive], OPENCV[primitive]
    assert claimed(primitive), f"{primitive}: the row takes nothing"
    refused = claimed(primitive) - opencv.accepts
    assert not refused, f"{primitive}: OpenCV refuses (depth, channels) {sorted(refused)}: {opencv.cites}"
    if row.borders is not None:
        assert opencv.borders is not None and row.borders <= opencv.borders, (primitive, opencv.cites)
    if row.max_taps is not None or opencv.max_taps is not None:
        assert row.max_taps is not None and opencv.max_taps is not None and row.max_taps <= opencv.max_taps


@pytest.mark.parametrize("primitive", sorted(p for p in CAPABILITIES if CAPABILITIES[p].planes))
def test_rows_that_run_plane_by_plane_take_one_channel(primitive):
    # other channel counts are split into single-channel planes: the call must take those
    row = CAPABILITIES[primitive]
    depths = {CONVERTED.get(primitive, {}).get(d, d) for d in row.depths}
    assert all((d, 1) in OPENCV[primitive].accepts for d in depths), OPENCV[primitive].cites


def test_a_depth_the_channel_table_does_not_name_takes_no_channels():
    """``pad`` lists channels per depth for 8U, 16U, 16S and 32F (copy_make_border.cu): none for 64F."""
    pad = CAPABILITIES["pad"]
    assert pad.takes_channels(cv2.CV_8U, 2) and not pad.takes_channels(cv2.CV_16U, 2)
    assert not pad.takes_channels(cv2.CV_64F, 1)
