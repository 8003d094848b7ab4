"""The filter registry: one declaration per filter drives everything else.

A filter is a function ``fn(ctx, image, **params)`` written against backend
primitives (``ctx.be``), registered with its name, category, one-line summary, typed
:class:`~cvfilters.params.Param` declarations and an alpha policy. Validation, the
CLI parser, ``cvfilters list/info``, pipeline files and the README table all read
the same declaration.
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .context import ImageSpec
from .errors import ParameterError, UnknownFilterError
from .params import Param
from .policies import ALPHA_POLICIES, apply_alpha_policy

if TYPE_CHECKING:
    from .boundary import Layout
    from .defaults import ChannelOrder

CATEGORIES = ("blur", "convolve", "color", "warp", "stylize", "feather", "histogram", "cartoon")
FilterFn = Callable[..., Any]
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True, eq=False)
class Filter:
    """A registered filter: declaration plus implementation.

    Calling a filter object runs it like :func:`cvfilters.apply`:
    ``cvf.get_filter("gaussian_blur")(img, sigma=2)``.

    ``output_spec`` is set by filters whose output size, channels or dtype differ from
    the input's. Colour kernels expose their lookup ``table``, colour-matrix filters
    their 3 x 4 ``matrix`` (B, G, R order, on values normalised to 0..1) and warp
    kernels their source-coordinate ``maps`` (for the image spec and parameters), so
    pipelines can compose them instead of running them one by one (:mod:`cvfilters.fusion`).
    """

    name: str
    category: str
    summary: str
    params: tuple[Param, ...]
    fn: FilterFn
    alpha: str = "passthrough"
    description: str = ""
    check: Callable[[dict[str, Any]], str | None] | None = None
    output_spec: Callable[[Mapping[str, Any], ImageSpec], ImageSpec] | None = None
    table: Callable[[Mapping[str, Any], ImageSpec], np.ndarray] | None = None
    maps: Callable[[Mapping[str, Any], ImageSpec], tuple[np.ndarray, np.ndarray]] | None = None
    matrix: Callable[[Mapping[str, Any], ImageSpec | None], np.ndarray] | None = None

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise self._unknown_param(name)

    def _unknown_param(self, name: str) -> ParameterError:
        known = ", ".join(p.name for p in self.params) or "none"
        return ParameterError(self.name, name, f"is not a parameter of {self.name} (parameters: {known})")

    def resolve(self, values: Mapping[str, Any] | None = None, *,
                base_dir: str | os.PathLike[str] | None = None, confine: bool = False) -> dict[str, Any]:
        """Validate ``values`` and complete them with defaults.

        Parameters
        ----------
        values : mapping
            Parameter values as Python objects or CLI strings.
        base_dir : path, optional
            Directory that relative ``@file`` values are read from.
        confine : bool
            Files must stay inside ``base_dir`` (pipeline files; see :meth:`Param.coerce`).

        Returns
        -------
        dict
            Every declared parameter with its canonical value.
        """
        values = dict(values or {})
        resolved: dict[str, Any] = {}
        for param in self.params:
            if param.name in values:
                resolved[param.name] = param.coerce(values.pop(param.name), self.name, base_dir=base_dir,
                                                    confine=confine)
            else:
                resolved[param.name] = param.coerce(param.default, self.name) if param.required else param.default
        if values:
            raise self._unknown_param(next(iter(values)))
        if self.check is not None:
            problem = self.check(resolved)
            if problem:
                raise ParameterError(self.name, "", problem)
        return resolved

    def run(self, ctx: Any, image: Any, params: Mapping[str, Any]) -> Any:
        """Run on a native image of ``ctx.be`` with resolved parameters, under the alpha policy."""
        return apply_alpha_policy(self.alpha, self.fn, ctx, image, params)

    def result_spec(self, params: Mapping[str, Any], spec: ImageSpec) -> ImageSpec:
        """The spec of the output for an input of ``spec`` (the same unless ``output_spec`` says otherwise)."""
        return spec if self.output_spec is None else self.output_spec(params, spec)

    def __call__(self, image: Any, /, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
                 layout: Layout = "hwc", **params: Any) -> Any:
        from .pipeline import apply

        return apply(image, self, backend=backend, channel_order=channel_order, layout=layout, **params)

    def info(self) -> dict[str, Any]:
        """The declaration as a JSON-ready dict (``cvfilters info --json``)."""
        return {"name": self.name, "category": self.category, "summary": self.summary,
                "alpha": self.alpha, "description": self.description,
                "params": [p.describe() for p in self.params]}


_REGISTRY: dict[str, Filter] = {}


def register(name: str | None = None, *, category: str, summary: str, params: Iterable[Param] = (),
             alpha: str = "passthrough", check: Callable[[dict[str, Any]], str | None] | None = None,
             output_spec: Callable[[Mapping[str, Any], ImageSpec], ImageSpec] | None = None,
             table: Callable[[Mapping[str, Any], ImageSpec], np.ndarray] | None = None,
             maps: Callable[[Mapping[str, Any], ImageSpec], tuple[np.ndarray, np.ndarray]] | None = None,
             matrix: Callable[[Mapping[str, Any], ImageSpec | None], np.ndarray] | None = None,
             replace: bool = False) -> Callable[[FilterFn], Filter]:
    """Register a filter function; used as a decorator.

    Parameters
    ----------
    name : str, optional
        snake_case filter name; defaults to the function's name.
    category : str
        One of :data:`CATEGORIES`.
    summary : str
        One line for ``cvfilters list``.
    params : iterable of Param
        The declared parameters, in the order ``cvfilters info`` shows them.
    alpha : {"passthrough", "premultiply", "all"}
        How 4-channel images are treated: colour filters pass alpha through
        untouched, spatial filters run on premultiplied colour, "all" processes the
        four channels as they are (exact geometric operations).
    check : callable, optional
        Cross-parameter validation: returns a problem description or None.
    output_spec : callable, optional
        ``output_spec(params, spec) -> ImageSpec`` for filters that change the size,
        channel count or dtype of the image.
    table : callable, optional
        For per-channel point operations: ``table(params, spec)`` returns the lookup
        table the filter applies (256 rows for uint8, 65536 for uint16; shape (N,) or
        (N, C); the image's dtype), so pipelines can compose consecutive tables.
    maps : callable, optional
        For warps: ``maps(params, spec)`` returns float32 ``(map_x, map_y)`` source
        coordinates of every output pixel, so pipelines can compose consecutive warps.
    matrix : callable, optional
        For colour-matrix point operations: ``matrix(params, spec)`` returns the 3 x 4
        affine matrix on B, G, R values normalised to 0..1.
    replace : bool
        Allow replacing an existing filter of the same name.

    Returns
    -------
    callable
        A decorator returning the registered :class:`Filter`.

    Examples
    --------
    >>> @register(category="color", summary="Swap blue and red.")
    ... def swap_rb(ctx, img):
    ...     b, g, r = ctx.be.split(img)
    ...     return ctx.be.merge([r, g, b])
    """

    def decorator(fn: FilterFn) -> Filter:
        filter_name = name or fn.__name__
        _validate_declaration(filter_name, category, alpha, replace)
        doc = inspect.cleandoc(fn.__doc__ or summary)
        flt = Filter(filter_name, category, summary, tuple(params), fn, alpha, doc, check, output_spec, table, maps,
                     matrix)
        _REGISTRY[filter_name] = flt
        return flt

    return decorator


def _validate_declaration(name: str, category: str, alpha: str, replace: bool) -> None:
    if not _NAME.match(name):
        raise ValueError(f"filter name {name!r} must be snake_case")
    if category not in CATEGORIES:
        raise ValueError(f"filter {name!r}: category must be one of {CATEGORIES}, not {category!r}")
    if alpha not in ALPHA_POLICIES:
        raise ValueError(f"filter {name!r}: alpha must be one of {ALPHA_POLICIES}, not {alpha!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"a filter named {name!r} is registered already (pass replace=True)")


def add(flt: Filter, *, replace: bool = False) -> Filter:
    """Register an already built :class:`Filter` object (colour and warp kernels use this)."""
    _validate_declaration(flt.name, flt.category, flt.alpha, replace)
    _REGISTRY[flt.name] = flt
    return flt


def unregister(name: str) -> None:
    """Remove a registered filter (a no-op for unknown names)."""
    _REGISTRY.pop(name, None)


def get(name: str | Filter) -> Filter:
    """Look up a filter by name (a Filter object is returned as is).

    Raises
    ------
    UnknownFilterError
        With close matches as suggestions.
    """
    if isinstance(name, Filter):
        return name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownFilterError(name, difflib.get_close_matches(name, list(_REGISTRY), n=3)) from None


def filters(category: str | None = None) -> list[Filter]:
    """Registered filters sorted by category then name, optionally of one category."""
    chosen = [f for f in _REGISTRY.values() if category is None or f.category == category]
    return sorted(chosen, key=lambda f: (CATEGORIES.index(f.category), f.name))
