"""Steps and the one loop that runs them.

A :class:`Step` is a filter with its resolved parameters. :func:`run_steps` is the
only place steps run in order: the pipeline, fused groups (:mod:`cvfilters.engine.fusion`)
and masked sub-pipelines (:mod:`cvfilters.filters.masks`) all call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.transfer import Transfer
from cvfilters.core.types import Image
from cvfilters.registry.catalog import Filter
from cvfilters.registry.light import run_linear


class Step(NamedTuple):
    """One filter with its resolved (validated, complete) parameters."""

    filter: Filter
    params: dict[str, Any]

    def overrides(self) -> dict[str, Any]:
        """The parameters that differ from their defaults."""
        return {p.name: self.params[p.name] for p in self.filter.params if self.params[p.name] != p.default}

    def to_spec(self) -> str:
        """The step in the CLI spec syntax (``name:key=value,...``), defaults left out."""
        values = self.overrides()
        if not values:
            return self.filter.name
        parts = [f"{k}={quote(self.filter.param(k).format(v))}" for k, v in values.items()]
        return f"{self.filter.name}:{','.join(parts)}"


def run_steps(ctx: Context, image: Image, steps: Sequence[Step], *, bare: bool = False,
              transfer: Transfer | None = None) -> tuple[Image, ImageInfo]:
    """Run ``steps`` in order on a native image of ``ctx.backend``.

    Parameters
    ----------
    bare : bool
        Call each filter's own function without its alpha policy (a fused group applied
        the policy once around all of them).
    transfer : Transfer, optional
        Linear light: each run of consecutive steps whose filter is declared ``linear``
        sees linear float32 values, decoded with ``transfer`` before the run and encoded
        back after it (:mod:`cvfilters.registry.light`).

    Returns
    -------
    (image, ImageInfo)
        The result and its spec (steps may change size, channels or dtype).
    """
    if transfer is not None:
        return _run_in_light(ctx, image, steps, bare, transfer)
    spec = ctx.info
    for step in steps:
        here = Context(ctx.backend, spec)
        image = step.filter.fn(here, image, **step.params) if bare else step.filter.run(here, image, step.params)
        spec = step.filter.output_info(step.params, spec)
    return image, spec


def _run_in_light(ctx: Context, image: Image, steps: Sequence[Step], bare: bool,
                  transfer: Transfer) -> tuple[Image, ImageInfo]:
    """:func:`run_steps` with each run of consecutive ``linear`` steps on linear values."""
    spec, start = ctx.info, 0
    while start < len(steps):
        linear = steps[start].filter.linear
        end = start
        while end < len(steps) and steps[end].filter.linear == linear:
            end += 1
        group, here = steps[start:end], Context(ctx.backend, spec)
        if linear:
            image, spec = run_linear(here, image, transfer, partial(run_steps, steps=group, bare=bare))
        else:
            image, spec = run_steps(here, image, group, bare=bare)
        start = end
    return image, spec


def quote(text: str) -> str:
    """A formatted value quoted where it holds spec punctuation (``, | : ' "``), lists excepted."""
    if any(ch in text for ch in ",|:'\"") and not text.startswith("["):
        return "'" + text + "'" if "'" not in text else '"' + text + '"'
    return text
