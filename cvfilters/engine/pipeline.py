"""Pipelines: an ordered list of filter steps, parsed, saved and run on one backend.

Spec syntax (CLI ``-f`` and :meth:`Pipeline.parse`)::

    name                       a filter with its defaults
    name:key=value,key=value   values: numbers, true/false, words, [lists], @file,
                               or 'quoted text' when a value holds , | or :
    step | step | step         several steps in one string

Pipeline files are YAML or JSON: ``{version: 1, steps: [{filter: name, params: {...}}]}``.
A run uploads the image once, runs every step on the device and downloads once; the
result has the input's type (ndarray, ``cv2.UMat`` or ``cv2.cuda.GpuMat``).
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import cv2
from numpy.typing import NDArray

from cvfilters.backends import Counters
from cvfilters.backends.execution import device_name, info_of, run_image
from cvfilters.core import atomic
from cvfilters.core.arrays import ArrayLike, Layout, Many
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import SpecError, UsageError
from cvfilters.core.transfer import Transfer, resolve_linear
from cvfilters.engine import bounds, parallel
from cvfilters.engine.bounds import MAX_PIPELINE_FILE
from cvfilters.engine.fusion import compile_steps
from cvfilters.engine.steps import Step, run_steps
from cvfilters.registry import catalog as registry
from cvfilters.registry.catalog import Filter

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

PIPELINE_VERSION = 1

__all__ = ["MAX_PIPELINE_FILE", "PIPELINE_VERSION", "Pipeline", "RunReport", "Step", "apply", "info_of",
           "split_spec"]


@dataclass(frozen=True)
class RunReport:
    """What a run did: backend, device, the steps as run (fused groups included), transfers and host fallbacks."""

    backend: str
    device: str
    plan: tuple[Step, ...]
    counters: Counters
    spec: ImageInfo | None = None

    @property
    def steps(self) -> tuple[str, ...]:
        """The spec of each step as it ran (formatted when asked, not on every run)."""
        return tuple(step.to_spec() for step in self.plan)

    def footprints(self) -> list[str]:
        """Each step's footprint kind on the image it ran on (:mod:`cvfilters.registry.footprints`), with its halo."""
        kinds, spec = [], self.spec
        for step in self.plan:
            if spec is None:
                kinds.append("footprint unknown")
                continue
            footprint = step.filter.footprint_for(step.params, spec)
            halo = f", halo {footprint.halo}" if footprint.kind in ("local", "positional", "global") and any(
                footprint.halo.as_tuple()) else ""
            kinds.append(f"{footprint.kind}{halo}")
            spec = step.filter.output_info(step.params, spec)
        return kinds

    def lines(self) -> list[str]:
        fallbacks = ", ".join(f"{name} x{n}" for name, n in sorted(self.counters.fallbacks.items())) or "none"
        return [f"backend: {self.backend} ({self.device})",
                *(f"  step {i}: {spec} ({footprint})" for i, (spec, footprint)
                  in enumerate(zip(self.steps, self.footprints(), strict=True), 1)),
                f"transfers: {self.counters.uploads} upload(s), {self.counters.downloads} download(s), "
                f"{self.counters.constants} cached mask/map upload(s)",
                f"host fallbacks: {fallbacks}"]


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
                self.steps.extend(Pipeline.parse(item, base_dir=base_dir).steps)
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
        texts = [spec] if isinstance(spec, str) else list(spec)
        steps: list[Step] = []
        for text in texts:
            for part in split_spec(text, "|"):
                steps.append(_parse_step(part.strip(), base_dir, confine))
        return cls(steps, fuse=fuse)

    @classmethod
    def from_dict(cls, data: Any, *, base_dir: str | os.PathLike[str] | None = None,
                  confine: bool = False, where: Callable[..., str] | None = None) -> Pipeline:
        """Build from the dict form of a pipeline file (``version`` and ``steps``).

        With ``confine``, file values must stay inside ``base_dir`` (see :meth:`load`).
        ``where(step=None, key=None, param=None)`` returns the prefix that locates a
        problem in the file (``look.yaml:4: ``); :meth:`load` passes one.
        """
        at = where or (lambda **_: "")
        if not isinstance(data, Mapping):
            raise SpecError(f"{at()}a pipeline file must hold a mapping with 'version' and 'steps'")
        for key in data:
            if key not in ("version", "steps"):
                raise SpecError(f"{at(key=key)}unknown key {key!r}{_did_you_mean(key, ('version', 'steps'))} "
                                "(allowed: version, steps)")
        version = data.get("version")
        if type(version) is not int or version != PIPELINE_VERSION:
            raise SpecError(f"{at(key='version')}pipeline file version must be {PIPELINE_VERSION}, not {version!r}")
        items = data.get("steps")
        if not isinstance(items, list) or not items:
            raise SpecError(f"{at(key='steps')}'steps' must be a non-empty list of {{filter: NAME, params: {{...}}}}")
        steps = []
        for i, item in enumerate(items, 1):
            if not isinstance(item, Mapping):
                raise SpecError(f"{at(step=i)}step {i} must be a mapping with 'filter' and optional 'params'")
            for key in item:
                if key not in ("filter", "params"):
                    raise SpecError(f"{at(step=i, key=key)}step {i}: unknown key {key!r}"
                                    f"{_did_you_mean(key, ('filter', 'params'))}")
            if "filter" not in item:
                raise SpecError(f"{at(step=i)}step {i} needs a 'filter' key")
            params = item.get("params") or {}
            if not isinstance(params, Mapping):
                raise SpecError(f"{at(step=i, key='params')}step {i}: 'params' must be a mapping")
            try:
                flt = registry.get(str(item["filter"]))
                steps.append(Step(flt, flt.resolve(params, base_dir=base_dir, confine=confine)))
            except UsageError as exc:
                if not getattr(exc, "located", False):  # a pipeline file nested in this one located it already
                    param = getattr(exc, "param", "") or None
                    prefix = at(step=i, key="params" if param else "filter", param=param)
                    exc.args = (f"{prefix}step {i}: {exc}",)
                    exc.located = where is not None  # type: ignore[attr-defined]
                raise
        return cls(steps)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Pipeline:
        """Read a YAML or JSON pipeline file safely.

        YAML is parsed with the safe loader (no object construction), without
        aliases (no "billion laughs") and within the bounds of :mod:`cvfilters.engine.bounds`
        (1 MiB regular files, 32 levels, no key twice, 256 expanded steps). Files the
        pipeline names (``@kernel.csv``, reference images) are read from the pipeline
        file's folder and must stay inside it.
        """
        path = Path(path)
        with bounds.expansion():
            data, node = bounds.parse_document(path, bounds.read_pipeline_text(path))
            steps = data.get("steps") if isinstance(data, Mapping) else None
            bounds.count_steps(len(steps) if isinstance(steps, list) else 0, path)
            return cls.from_dict(data, base_dir=path.parent, confine=True, where=_locator(path, node))

    # ------------------------------------------------------------ writing back
    def to_dict(self) -> dict[str, Any]:
        """The pipeline-file form; parameters equal to their defaults are left out."""
        steps = []
        for step in self.steps:
            entry: dict[str, Any] = {"filter": step.filter.name}
            values = step.overrides()
            if values:
                entry["params"] = {k: step.filter.param(k).to_json(v) for k, v in values.items()}
            steps.append(entry)
        return {"version": PIPELINE_VERSION, "steps": steps}

    def to_spec(self) -> str:
        """The one-line CLI form, parsed back by :meth:`parse` to the same pipeline."""
        return " | ".join(step.to_spec() for step in self.steps)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a ``.json`` file, or YAML for any other suffix, atomically (:mod:`cvfilters.core.atomic`)."""
        import yaml

        path = Path(path)
        data = self.to_dict()
        text = json.dumps(data, indent=2) + "\n" if path.suffix.lower() == ".json" else yaml.safe_dump(
            data, sort_keys=False)
        atomic.write_text(path, text)

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
    def __call__(self, image: PILImage, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
                 layout: Layout = "hwc") -> PILImage: ...
    @overload
    def __call__(self, image: cv2.UMat, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
                 layout: Layout = "hwc") -> cv2.UMat: ...
    @overload
    def __call__(self, image: cv2.cuda.GpuMat, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
                 layout: Layout = "hwc") -> cv2.cuda.GpuMat: ...
    @overload
    def __call__(self, image: NDArray[Any] | ArrayLike, *, backend: str = "auto",
                 channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> NDArray[Any]: ...

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
        plan = self.compile()
        transfer = resolve_linear(self.linear if linear is None else linear)
        seen: list[ImageInfo] = []

        def body(ctx: Context, native: Any) -> tuple[Any, ImageInfo]:
            seen.append(ctx.info)
            return run_steps(ctx, native, plan, transfer=transfer)

        out, be, counters = run_image(image, backend, body, channel_order=channel_order, layout=layout)
        return out, RunReport(be.name, device_name(be), tuple(plan), counters, seen[0] if seen else None)

    @overload
    def map(self, images: NDArray[Any] | ArrayLike, *, workers: int | None = None, backend: str = "auto",
            channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> NDArray[Any]: ...
    @overload
    def map(self, images: Many[PILImage], *, workers: int | None = None, backend: str = "auto",
            channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> list[PILImage]: ...
    @overload
    def map(self, images: Many[cv2.UMat], *, workers: int | None = None, backend: str = "auto",
            channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> list[cv2.UMat]: ...
    @overload
    def map(self, images: Many[cv2.cuda.GpuMat], *, workers: int | None = None, backend: str = "auto",
            channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> list[cv2.cuda.GpuMat]: ...
    @overload
    def map(self, images: Many[NDArray[Any] | ArrayLike], *, workers: int | None = None, backend: str = "auto",
            channel_order: ChannelOrder | None = None, layout: Layout = "hwc") -> list[NDArray[Any]]: ...

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


@overload
def apply(image: PILImage, filter: str | Filter | Pipeline, /, *, backend: str = "auto",
          channel_order: ChannelOrder | None = None, layout: Layout = "hwc", linear: bool | Transfer | None = None,
          **params: Any) -> PILImage: ...
@overload
def apply(image: cv2.UMat, filter: str | Filter | Pipeline, /, *, backend: str = "auto",
          channel_order: ChannelOrder | None = None, layout: Layout = "hwc", linear: bool | Transfer | None = None,
          **params: Any) -> cv2.UMat: ...
@overload
def apply(image: cv2.cuda.GpuMat, filter: str | Filter | Pipeline, /, *, backend: str = "auto",
          channel_order: ChannelOrder | None = None, layout: Layout = "hwc", linear: bool | Transfer | None = None,
          **params: Any) -> cv2.cuda.GpuMat: ...
@overload
def apply(image: NDArray[Any] | ArrayLike, filter: str | Filter | Pipeline, /, *, backend: str = "auto",
          channel_order: ChannelOrder | None = None, layout: Layout = "hwc", linear: bool | Transfer | None = None,
          **params: Any) -> NDArray[Any]: ...


def apply(image: Any, filter: str | Filter | Pipeline, /, *, backend: str = "auto",
          channel_order: ChannelOrder | None = None, layout: Layout = "hwc", linear: bool | Transfer | None = None,
          **params: Any) -> Any:
    """Apply one filter, a spec string or a pipeline to an image.

    Arrays are BGR(A), OpenCV's order, unless ``channel_order="rgb"`` (or
    ``cvfilters.set_defaults(channel_order="rgb")``) says they are RGB(A); PIL images
    are RGB. Colour parameters are RGB(A) as people write colours, whatever the order.

    Parameters
    ----------
    image : numpy.ndarray, PIL.Image.Image, array-like, cv2.UMat or cv2.cuda.GpuMat
        uint8, uint16, float32 (0..1), float64 or int16; gray, gray + alpha, 3 or 4
        channels (see :meth:`Pipeline.run`).
    filter : str, Filter or Pipeline
        A registered filter name, a filter object, a spec string such as
        ``"gaussian_blur:sigma=3 | pixellate:size=8"``, or a :class:`Pipeline`.
    backend : {"auto", "cpu", "opencl", "cuda"}
    channel_order : {"bgr", "rgb"}, optional
        The order of the colour channels of ``image`` and of the result (default BGR,
        or the process default).
    layout : {"hwc", "chw"}
        ``chw`` for C x H x W arrays.
    linear : bool or Transfer, optional
        Run the filters that mix light on linear values (``True``: the sRGB transfer
        function); None follows ``cvfilters.set_defaults(linear=...)``.
    **params
        The filter's parameters (``cvfilters info NAME`` lists them), for a filter
        name or object. ``image`` and ``filter`` are positional-only, so filters may
        have parameters of those names.

    Returns
    -------
    The same kind of image as ``image``: type, shape and dtype.

    Examples
    --------
    >>> out = apply(rgb, "sepia", channel_order="rgb")             # doctest: +SKIP
    >>> out = apply(img, "gaussian_blur:sigma=3 | pixellate:size=8")  # doctest: +SKIP
    """
    return as_pipeline(filter, params).run(image, backend=backend, channel_order=channel_order, layout=layout,
                                           linear=linear)[0]


def as_pipeline(filter: str | Filter | Pipeline, params: Mapping[str, Any] | None = None) -> Pipeline:
    """The pipeline ``apply`` runs: a filter name or object (with ``params``), a spec string, or a Pipeline."""
    if isinstance(filter, Pipeline) or (isinstance(filter, str) and any(ch in filter for ch in ":|")):
        if params:
            raise SpecError(f"give parameters in the spec or as keywords, not both (keywords: {', '.join(params)})")
        return filter if isinstance(filter, Pipeline) else Pipeline.parse(filter)
    return Pipeline([(filter, params or {})])


# ---------------------------------------------------------------- spec parsing
def split_spec(text: str, sep: str) -> list[str]:
    """Split spec text on ``sep`` (``|`` between steps, ``,`` between values) outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if quote or depth:
        raise SpecError(f"unbalanced {'quote' if quote else 'brackets'} in {text!r}")
    parts.append(text[start:])
    return parts


def _parse_step(text: str, base_dir: str | os.PathLike[str] | None, confine: bool = False) -> Step:
    if not text:
        raise SpecError("empty filter step (two '|' in a row, or a trailing '|')")
    try:
        return _step_from_text(text, base_dir, confine)
    except UsageError as exc:
        hint = _missing_bar_hint(text)
        if hint:
            exc.args = (f"{exc}; {hint}",)
        raise


def _missing_bar_hint(text: str) -> str:
    """A hint when a step's text holds a second filter after a space: ``sigma=3 pixellate`` lacks a ``|``."""
    words = text.split()
    for i, word in enumerate(words[1:], 1):
        name = word.partition(":")[0]
        if name and registry.is_filter_name(name):
            fixed = " ".join(words[:i]) + " | " + " ".join(words[i:])
            return f"steps are separated by '|': did you mean {fixed!r}?"
    return ""


def _step_from_text(text: str, base_dir: str | os.PathLike[str] | None, confine: bool) -> Step:
    name, _, rest = text.partition(":")
    flt = registry.get(name.strip())
    values: dict[str, Any] = {}
    for item in split_spec(rest, ",") if rest.strip() else []:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SpecError(f"{flt.name}: expected key=value, got {item.strip()!r}")
        if key in values:
            raise SpecError(f"{flt.name}: {key} is given twice")
        values[key] = _unquote(value.strip())
    return Step(flt, flt.resolve(values, base_dir=base_dir, confine=confine))


def _did_you_mean(word: Any, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word).lower(), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _locator(path: Path, root: Any) -> Callable[..., str]:
    """``where(step, key, param)`` for :meth:`Pipeline.from_dict`: ``"look.yaml:4: "`` from YAML node marks.

    The line is that of the most specific node found (the parameter's key, the step's
    key, the step, the top-level key); a JSON file (no marks) gives ``"look.json: "``.
    """
    from yaml.nodes import MappingNode, SequenceNode

    def child(node: Any, key: Any) -> tuple[Any, Any]:
        if isinstance(node, MappingNode):
            for k, v in node.value:
                if k.value == key:
                    return k, v
        return None, None

    def where(step: int | None = None, key: str | None = None, param: str | None = None) -> str:
        mark_node = None
        if root is not None:
            mark_node = root
            node = root
            if step is not None:
                _, items = child(root, "steps")
                node = items.value[step - 1] if isinstance(items, SequenceNode) else None
                mark_node = node or mark_node
            if key is not None and node is not None:
                key_node, value = child(node, key)
                mark_node = key_node or mark_node
                if param is not None and value is not None:
                    mark_node = child(value, param)[0] or mark_node
        line = f"{mark_node.start_mark.line + 1}:" if mark_node is not None else ""
        return f"{path}:{line} "

    return where


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value

