"""The element-wise primitives filters used to emulate: sqrt, minimum/maximum, compare/select.

Checked against numpy on every backend, and as counted host fallbacks on a device
backend whose device lacks them (the fake cuda device of test_cuda_backend).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.backends.cpu import host
from tests.backends.test_cuda_backend import FakeDevice, fake  # noqa: F401  (fixture)

RNG = np.random.default_rng(7)
A = RNG.random((9, 11, 3), np.float32)
B = RNG.random((9, 11, 3), np.float32)
B[0, :4] = A[0, :4]  # ties: compare and select must treat equality as the op says


def run(name: str, op, *arrays: np.ndarray) -> np.ndarray:
    be = get_backend(name)
    out = op(be, *(be.upload(a) for a in arrays))
    return be.download(out)


def test_sqrt(backend: str) -> None:
    np.testing.assert_allclose(run(backend, lambda be, a: be.sqrt(a), A), np.sqrt(A), rtol=2e-7, atol=0)


def test_minimum_and_maximum(backend: str) -> None:
    np.testing.assert_array_equal(run(backend, lambda be, a, b: be.minimum(a, b), A, B), np.minimum(A, B))
    np.testing.assert_array_equal(run(backend, lambda be, a, b: be.maximum(a, b), A, B), np.maximum(A, B))


@pytest.mark.parametrize(("op", "numpy_op"), [(cv2.CMP_GT, np.greater), (cv2.CMP_GE, np.greater_equal),
                                              (cv2.CMP_EQ, np.equal)])
def test_compare_gives_255_where_true(backend: str, op: int, numpy_op) -> None:
    mask = run(backend, lambda be, a, b: be.compare(a, b, op), A, B)
    assert mask.dtype == np.uint8
    np.testing.assert_array_equal(mask, numpy_op(A, B).astype(np.uint8) * 255)


def test_select_by_a_mask_of_the_images_channels_or_one(backend: str) -> None:
    mask = (A > B).astype(np.uint8) * 255
    picked = run(backend, lambda be, m, a, b: be.select(m, a, b), mask, A, B)
    np.testing.assert_array_equal(picked, np.where(A > B, A, B))
    plane = np.ascontiguousarray(mask[:, :, 0])
    picked = run(backend, lambda be, m, a, b: be.select(m, a, b), plane, A, B)
    np.testing.assert_array_equal(picked, np.where(plane[:, :, None] > 0, A, B))
    # the inputs are not written to
    np.testing.assert_array_equal(run(backend, lambda be, m, a, b: (be.select(m, a, b), b)[1], mask, A, B), B)


def test_device_without_the_primitives_falls_back_counted(fake: FakeDevice) -> None:  # noqa: F811
    mask = (A > B).astype(np.uint8) * 255
    np.testing.assert_array_equal(fake.select(mask, A, B), np.where(A > B, A, B))
    np.testing.assert_array_equal(fake.maximum(A, B), np.maximum(A, B))
    assert fake.counters.fallbacks == {"select": 1, "maximum": 1}


def test_one_cpu_backend_per_process() -> None:
    """get_backend("cpu") is the host every device fallback runs on, not another instance."""
    assert get_backend("cpu") is host()
