"""LUT data: a per-channel 1-D table (:class:`Lut1D`), a 3-D colour cube (:class:`Cube3D`) and a parsed file.

Evaluated in numpy; :mod:`cvfilters.filters.cube` describes the formats and how the ``lut`` filter runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cvfilters.core.pixels import LUMA_BGR

if TYPE_CHECKING:
    from cvfilters.filters.color import Curve

FILTER = "lut"
SUFFIXES = (".cube", ".csv", ".txt", ".npy")
MAX_1D = 65536
MAX_3D = 256
MAX_REMAP_NODES = 128  # a 3-D layout 128^2 = 16384 wide; remap coordinates must stay below 32767
MAX_REMAP_ROW = 16384  # longest 1-D row interpolated with remap
MIN_NODES_3D = 33  # small cubes are refined to at least this many nodes a side
MIN_NODES_1D = 1025
SCALES = {"auto": None, "1": 1.0, "255": 255.0, "65535": 65535.0}
_CHUNK = 1 << 18  # pixels per block of the numpy trilinear path
_KEYWORDS = ("TITLE", "LUT_1D_SIZE", "LUT_3D_SIZE", "DOMAIN_MIN", "DOMAIN_MAX", "LUT_1D_INPUT_RANGE",
             "LUT_3D_INPUT_RANGE")


class LutFileError(ValueError):
    """A problem with a LUT file's contents (turned into a ParameterError naming the file)."""


@dataclass(frozen=True, eq=False)
class Lut1D:
    """Per-channel 1-D table: ``values[k, c]`` is the output (0..1) of channel c (B, G, R) at entry k.

    Entry k sits at input ``low[c] + k / (N - 1) * (high[c] - low[c])``.
    """

    values: np.ndarray  # (N, 3) float64, B G R columns
    low: np.ndarray  # (3,) B G R
    high: np.ndarray

    @property
    def size(self) -> int:
        return len(self.values)

    def curve(self, c: int) -> Curve:
        xs = np.linspace(self.low[c], self.high[c], self.size)
        ys = self.values[:, c]
        return lambda v: np.interp(v, xs, ys)

    def curves(self) -> list[Curve]:
        if np.all(self.values == self.values[:, :1]) and np.all(self.low == self.low[0]) and np.all(
                self.high == self.high[0]):
            return [self.curve(0)]
        return [self.curve(c) for c in range(3)]

    def __call__(self, bgr: np.ndarray) -> np.ndarray:
        """Apply to normalised (..., 3) B, G, R values."""
        return np.stack([self.curve(c)(bgr[..., c]) for c in range(3)], axis=-1)

    def refined(self) -> Lut1D:
        """The same piecewise-linear function on at least MIN_NODES_1D entries (integer refinement)."""
        factor = math.ceil((MIN_NODES_1D - 1) / (self.size - 1))
        if factor <= 1 or (self.size - 1) * factor + 1 > MAX_REMAP_ROW:
            return self
        t = np.linspace(0.0, 1.0, (self.size - 1) * factor + 1)
        grid = np.linspace(0.0, 1.0, self.size)
        values = np.stack([np.interp(t, grid, self.values[:, c]) for c in range(3)], axis=-1)
        return Lut1D(values, self.low, self.high)


@dataclass(frozen=True, eq=False)
class Cube3D:
    """3-D table: ``values[b, g, r]`` is the (B, G, R) output (0..1) at node (b, g, r).

    Node k of channel c sits at input ``low[c] + k / (N - 1) * (high[c] - low[c])``.
    """

    values: np.ndarray  # (N, N, N, 3) float32
    low: np.ndarray  # (3,) B G R
    high: np.ndarray

    @property
    def size(self) -> int:
        return self.values.shape[0]

    def node_coords(self, bgr: np.ndarray) -> np.ndarray:
        """Normalised (..., 3) inputs as node coordinates 0..N-1 (clamped to the domain)."""
        values = np.asarray(bgr)
        dtype = np.float32 if values.dtype == np.float32 else np.float64
        low, span = self.low.astype(dtype), (self.high - self.low).astype(dtype)
        return np.clip((values - low) / span, 0.0, 1.0) * dtype(self.size - 1)

    def __call__(self, bgr: np.ndarray) -> np.ndarray:
        """Trilinear interpolation at normalised (..., 3) B, G, R inputs, in numpy (float32 result)."""
        bgr = np.asarray(bgr)
        flat_in = bgr.reshape(-1, 3)
        out = np.empty(flat_in.shape, np.float32)
        for start in range(0, len(flat_in), _CHUNK):
            out[start:start + _CHUNK] = self._trilinear(self.node_coords(flat_in[start:start + _CHUNK]))
        return out.reshape(bgr.shape)

    def _trilinear(self, x: np.ndarray) -> np.ndarray:
        n = self.size
        i0 = np.minimum(np.floor(x), n - 2).astype(np.intp)
        f = (x - i0).astype(np.float32)
        base = (i0[:, 0] * n + i0[:, 1]) * n + i0[:, 2]
        flat = self.values.reshape(-1, 3)
        fb, fg, fr = f[:, 0:1], f[:, 1:2], f[:, 2:3]

        def along_r(offset: int) -> np.ndarray:
            low = flat[base + offset]
            return low + fr * (flat[base + offset + 1] - low)

        g0 = along_r(0)
        g0 += fg * (along_r(n) - g0)
        g1 = along_r(n * n)
        g1 += fg * (along_r(n * n + n) - g1)
        return g0 + fb * (g1 - g0)

    def refined(self) -> Cube3D:
        """The same trilinear function on at least MIN_NODES_3D nodes a side (integer refinement).

        Within each refined cell the original interpolant is trilinear, so sampling it at
        the refined nodes and interpolating again reproduces it exactly.
        """
        factor = math.ceil((MIN_NODES_3D - 1) / (self.size - 1))
        if factor <= 1:
            return self
        nodes = (self.size - 1) * factor + 1
        t = np.linspace(0.0, 1.0, nodes)
        grid = np.stack(np.meshgrid(t, t, t, indexing="ij"), axis=-1)  # [b, g, r] -> (tb, tg, tr)
        values = self(self.low + grid * (self.high - self.low))
        return Cube3D(values.astype(np.float32), self.low, self.high)

    def layout(self) -> np.ndarray:
        """The cube as an N x N^2 3-channel float32 image: row g, column b * N + r."""
        n = self.size
        return np.ascontiguousarray(self.values.transpose(1, 0, 2, 3).reshape(n, n * n, 3), dtype=np.float32)


@dataclass(frozen=True, eq=False)
class LutFile:
    """A parsed LUT file: a 1-D table, a 3-D cube, or a 1-D shaper followed by a cube."""

    path: str
    title: str
    table: Lut1D | None
    cube: Cube3D | None
    stamp: tuple[int, int]  # (mtime_ns, size) of the file it was read from

    def __call__(self, bgr: np.ndarray) -> np.ndarray:
        """The whole LUT on normalised (..., 3) B, G, R values, in numpy (unclipped)."""
        values = self.table(bgr) if self.table is not None else bgr
        return self.cube(values) if self.cube is not None else values

    def gray_curve(self) -> Curve:
        """Gray images: the BT.601 luma of the LUT's colour for (v, v, v)."""

        def curve(v: np.ndarray) -> np.ndarray:
            v = np.asarray(v)
            colour = np.clip(self(np.repeat(v[..., None], 3, axis=-1)), 0.0, 1.0)
            return colour @ LUMA_BGR

        return curve


