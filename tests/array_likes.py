"""Foreign tensors for the tests: objects numpy reads through ``__array__`` or ``__dlpack__`` alone."""

from __future__ import annotations

from typing import Any

import numpy as np


class ArrayOnly:
    """Read through ``__array__`` alone (a list inside works too)."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.array, dtype=dtype)


class DLPackOnly:
    """Read through DLPack alone (numpy's own implementation underneath, no ``__array__``)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.array.__dlpack_device__()  # type: ignore[no-any-return]


class BrokenArray:
    """An ``__array__`` that fails, with a two-line message."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError("device lost\nsecond line")
