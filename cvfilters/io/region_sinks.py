"""What the TIFF and Zarr region sinks share: :class:`Bands` turns the row-major output tiles
into full-width bands of whole chunks, and :class:`Committable` is a sink's life: it writes to a
hidden temporary file or folder beside the target and renames it on :meth:`~Committable.commit`;
:meth:`~Committable.abort` (or an exception in its ``with`` block) removes it, so no partial
output is ever visible.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from numpy.typing import NDArray


class Bands:
    """Turns row-major output tiles into full-width bands of whole chunks of ``chunk_rows`` rows.

    ``flush(y0, band)`` receives the complete chunks in order (a band of one or more, the
    last band of the image possibly shorter), as a view of a buffer this never writes
    again (each tile row gets a fresh one); :meth:`finish` flushes the rest.
    """

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any], chunk_rows: int,
                 flush: Callable[[int, NDArray[Any]], None]) -> None:
        self.shape, self.dtype, self.chunk_rows, self._flush = shape, dtype, chunk_rows, flush
        self._rows: NDArray[Any] = np.empty((0, *shape[1:]), dtype)
        self._top = 0  # the image row of self._rows[0]
        self._done = 0  # rows of self._rows complete (every column written)

    def write(self, y0: int, x0: int, block: NDArray[Any]) -> None:
        height, width = block.shape[:2]
        if y0 < self._top + self._done:
            raise ValueError(f"tile at row {y0} arrives after its rows were written (tiles must be row-major)")
        end = y0 + height - self._top
        if end > self._rows.shape[0]:
            grown = np.empty((end, *self.shape[1:]), self.dtype)
            grown[: self._done] = self._rows[: self._done]
            self._rows = grown
        self._rows[y0 - self._top : end, x0 : x0 + width] = block.reshape(height, width, *self.shape[2:])
        if x0 + width == self.shape[1]:
            self._done = end
            whole = self._done - self._done % self.chunk_rows
            if whole:
                rows = self._rows
                self._rows = rows[whole : self._done].copy()  # under one chunk: the next tile row grows it
                self._flush(self._top, rows[:whole])
                self._top += whole
                self._done -= whole

    def finish(self) -> None:
        if self._top + self._done != self.shape[0]:
            raise ValueError(f"the output has {self._top + self._done} of {self.shape[0]} rows written")
        if self._done:
            self._flush(self._top, self._rows[: self._done])
            self._top += self._done
            self._done = 0


class Committable:
    """The commit/abort life of a sink writing to a temporary path beside ``target``."""

    target: Path

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()
