"""Pipelines: an ordered list of filter steps, parsed, saved and run on one backend.

:class:`Pipeline` gathers what the modules beside it do, one job each: the text grammar
(:mod:`~cvfilters.engine.spec`), reading pipeline files (:mod:`~cvfilters.engine.loading`),
writing them (:mod:`~cvfilters.engine.saving`), running (:mod:`~cvfilters.engine.running`),
fusing steps (:mod:`~cvfilters.engine.fusion`) and many images on threads
(:mod:`~cvfilters.engine.parallel`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import cv2
from numpy.typing import NDArray

from cvfilters.core.arrays import ArrayLike, Layout, Many
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import SpecError
from cvfilters.core.transfer import Transfer, resolve_linear
from cvfilters.engine import bounds, parallel
from cvfilters.engine.fusion import compile_steps
from cvfilters.engine.loading import read_pipeline_file, steps_from_dict
from cvfilters.engine.running import RunReport, run_plan
from cvfilters.engine.saving import save_steps, steps_to_dict
from cvfilters.engine.spec import format_spec, parse_spec
from cvfilters.engine.steps import Step
from cvfilters.registry import catalog as registry
from cvfilters.registry.catalog import Filter

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage


class Pipeline:
    """An ordered list of filter steps.

    Parameters
    ----------
    steps : iterable
        Items are :class:`Step`, ``(name_or_filter, params_dict)`` tuples, or spec
        strings such as ``"gaussian_blur:sigma=3"``.
    fuse : bool
        Merge consecutive point operations, colour matrices and warps before running
        (:mod:`cvfilters.engine.fusion`); ``False`` runs every step on its own.
    linear : bool or Transfer, optional
        Run the steps that mix light on linear values (:mod:`cvfilters.registry.light`):
        ``True`` with the sRGB transfer function, a :class:`~cvfilters.core.transfer.Transfer`
        with its own (``cvfilters.io.colour.transfer_of(profile)``); None follows
        ``cvfilters.set_defaults(linear=...)``.

    Examples
    --------
    >>> pipe = Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
    >>> out = pipe(image, backend="cpu")  # doctest: +SKIP
    """

    def __init__(self, steps: Iterable[Step | tuple[str | Filter, Mapping[str, Any]] | str] = (), *,
                 base_dir: str | os.PathLike[str] | None = None, fuse: bool = True,
                 linear: bool | Transfer | None = None) -> None:
        self.fuse = fuse
        self.linear = linear
        self._compiled: tuple[tuple[int, ...], list[Step]] | None = None
        self.steps: list[Step] = []
        for item in steps:
            if isinstance(item, Step):
                self.steps.append(item)
            elif isinstance(item, str):
                self.steps.extend(parse_spec(item, base_dir=base_dir))
            else:
                name, params = item
                flt = registry.get(name)
                self.steps.append(Step(flt, flt.resolve(params, base_dir=base_dir)))

    # ------------------------------------------------------------ parsing
    @classmethod
    def parse(cls, spec: str | Sequence[str], *, base_dir: str | os.PathLike[str] | None = None,
              confine: bool = False, fuse: bool = True) -> Pipeline:
        """Parse one spec string (steps joined by ``|``) or a sequence of them.

        Raises
        ------
        SpecError, UnknownFilterError, ParameterError
            Naming the step or parameter at fault.
        """
        return cls(parse_spec(spec, base_dir=base_dir, confine=confine), fuse=fuse)

    @classmethod
    def from_dict(cls, data: Any, *, base_dir: str | os.PathLike[str] | None = None,
                  confine: bool = False, where: Callable[..., str] | None = None) -> Pipeline:
        """Build from the dict form of a pipeline file (``version`` and ``steps``).

        With ``confine``, file values must stay inside ``base_dir`` (see :meth:`load`).
        ``where(step=None, key=None, param=None)`` returns the prefix that locates a
        problem in the file (``look.yaml:4: ``); :meth:`load` passes one.
        """
        return cls(steps_from_dict(data, base_dir=base_dir, confine=confine, where=where))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Pipeline:
        """Read a YAML or JSON pipeline file safely (:mod:`cvfilters.engine.loading`).

        Files the pipeline names (``@kernel.csv``, reference images) are read from the
        pipeline file's folder and must stay inside it.
        """
        path = Path(path)
        with bounds.expansion():  # nested pipeline files count towards one bound on expanded steps
            data, where = read_pipeline_file(path)
            steps = data.get("steps") if isinstance(data, Mapping) else None
            bounds.count_steps(len(steps) if isinstance(steps, list) else 0, path)
            return cls.from_dict(data, base_dir=path.parent, confine=True, where=where)

    # ------------------------------------------------------------ writing back
    def to_dict(self) -> dict[str, Any]:
        """The pipeline-file form; parameters equal to their defaults are left out."""
        return steps_to_dict(self.steps)

    def to_spec(self) -> str:
        """The one-line CLI form, parsed back by :meth:`parse` to the same pipeline."""
        return format_spec(self.steps)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a ``.json`` file, or YAML for any other suffix, atomically (:mod:`cvfilters.core.atomic`)."""
        save_steps(path, self.steps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pipeline) and [(s.filter.name, s.params) for s in self.steps] == [
            (s.filter.name, s.params) for s in other.steps]

    def __repr__(self) -> str:
        return f"Pipeline.parse({self.to_spec()!r})"

    def __len__(self) -> int:
        return len(self.steps)

    # ------------------------------------------------------------ running
    def compile(self) -> list[Step]:
        """The steps as they run: fused groups in place of mergeable runs when ``fuse`` is on.

        Compiled once and reused while the steps stay the same, so the tables and maps
        fused groups build are cached across images.
        """
        if not self.fuse:
            return list(self.steps)
        key = tuple(id(step) for step in self.steps)
        if self._compiled is None or self._compiled[0] != key:
            self._compiled = (key, compile_steps(self.steps))
        return self._compiled[1]

    @overload
    def __call__(self, image: PILImage, *, backend: str = ..., channel_order: ChannelOrder | None = ...,
                 layout: Layout = ...) -> PILImage: ...
    @overload
    def __call__(self, image: cv2.UMat, *, backend: str = ..., channel_order: ChannelOrder | None = ...,
                 layout: Layout = ...) -> cv2.UMat: ...
    @overload
    def __call__(self, image: cv2.cuda.GpuMat, *, backend: str = ..., channel_order: ChannelOrder | None = ...,
                 layout: Layout = ...) -> cv2.cuda.GpuMat: ...
    @overload
    def __call__(self, image: NDArray[Any] | ArrayLike, *, backend: str = ...,
                 channel_order: ChannelOrder | None = ..., layout: Layout = ...) -> NDArray[Any]: ...

    def __call__(self, image: Any, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
                 layout: Layout = "hwc") -> Any:
        """Run the pipeline; the result has the input's kind, type, shape and dtype (see :meth:`run`)."""
        return self.run(image, backend=backend, channel_order=channel_order, layout=layout)[0]

    def run(self, image: Any, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
            layout: Layout = "hwc", linear: bool | Transfer | None = None) -> tuple[Any, RunReport]:
        """Run the pipeline and report the backend, transfers and fallbacks.

        Parameters
        ----------
        image : numpy.ndarray, PIL.Image.Image, array-like, cv2.UMat or cv2.cuda.GpuMat
            uint8, uint16 or float32 (0..1), and float64 or int16 (run as float32,
            :mod:`cvfilters.core.boundary` and :mod:`cvfilters.core.depths`); gray, gray + alpha,
            3 or 4 channels. PIL images come back as PIL images of their mode,
            array-likes (``__array__``, ``__dlpack__``) as numpy arrays.
        backend : {"auto", "cpu", "opencl", "cuda"}
            Where to run; an unavailable backend named explicitly is an error.
        channel_order : {"bgr", "rgb"}, optional
            The order of the colour channels of ``image`` and of the result: BGR(A)
            as OpenCV's unless ``cvfilters.set_defaults(channel_order="rgb")`` says
            otherwise. PIL images are always RGB.
        layout : {"hwc", "chw"}
            ``chw`` takes C x H x W arrays (torch's layout) and returns C x H x W.

        linear : bool or Transfer, optional
            Linear light for this run (see the class); None: the pipeline's ``linear``,
            else the process default.

        Returns
        -------
        (image, RunReport)
        """
        transfer = resolve_linear(self.linear if linear is None else linear)
        return run_plan(self.compile(), image, backend=backend, channel_order=channel_order, layout=layout,
                        transfer=transfer)

    @overload
    def map(self, images: NDArray[Any] | ArrayLike, *, workers: int | None = ..., backend: str = ...,
            channel_order: ChannelOrder | None = ..., layout: Layout = ...) -> NDArray[Any]: ...
    @overload
    def map(self, images: Many[PILImage], *, workers: int | None = ..., backend: str = ...,
            channel_order: ChannelOrder | None = ..., layout: Layout = ...) -> list[PILImage]: ...
    @overload
    def map(self, images: Many[cv2.UMat], *, workers: int | None = ..., backend: str = ...,
            channel_order: ChannelOrder | None = ..., layout: Layout = ...) -> list[cv2.UMat]: ...
    @overload
    def map(self, images: Many[cv2.cuda.GpuMat], *, workers: int | None = ..., backend: str = ...,
            channel_order: ChannelOrder | None = ..., layout: Layout = ...) -> list[cv2.cuda.GpuMat]: ...
    @overload
    def map(self, images: Many[NDArray[Any] | ArrayLike], *, workers: int | None = ..., backend: str = ...,
            channel_order: ChannelOrder | None = ..., layout: Layout = ...) -> list[NDArray[Any]]: ...

    def map(self, images: Any, *, workers: int | None = None, backend: str = "auto",
            channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> Any:
        """Run the pipeline on many images with one compiled plan; results in input order.

        Parameters
        ----------
        images : iterable of images, or an array batch
            A list (or any iterable) of images of any kind :meth:`run` takes, or one
            (N, H, W) / (N, H, W, C) array (``layout="chw"``: (N, C, H, W)).
        workers : int, optional
            Threads running images at once (OpenCV releases the GIL while it computes):
            None uses one per CPU core (serially for batches under a megapixel in all),
            1 runs serially in the calling thread. While threads run, OpenCV's own pool
            is set to one thread (:mod:`cvfilters.engine.parallel`).
        backend, channel_order, layout
            As for :meth:`run`, for every image.

        Returns
        -------
        list, or numpy.ndarray
            A list of results for an iterable; an array batch for an array batch (the
            results stacked, so they must share their shape).
        """
        return parallel.map_images(self, images, workers=workers, backend=backend,
                                   order=resolve_channel_order(channel_order), layout=layout)


def as_pipeline(filter: str | Filter | Pipeline, params: Mapping[str, Any] | None = None) -> Pipeline:
    """The pipeline ``apply`` runs: a filter name or object (with ``params``), a spec string, or a Pipeline."""
    if isinstance(filter, Pipeline) or (isinstance(filter, str) and any(ch in filter for ch in ":|")):
        if params:
            raise SpecError(f"give parameters in the spec or as keywords, not both (keywords: {', '.join(params)})")
        return filter if isinstance(filter, Pipeline) else Pipeline.parse(filter)
    return Pipeline([(filter, params or {})])
