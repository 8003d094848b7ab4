"""Running a compiled plan of steps on one backend, and the report of what the run did.

The image is uploaded once, every step runs on the device and the result is downloaded
once; it has the input's type (ndarray, ``cv2.UMat`` or ``cv2.cuda.GpuMat``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cvfilters.backends import Counters
from cvfilters.backends.execution import device_name, run_image
from cvfilters.core.arrays import Layout
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.defaults import ChannelOrder
from cvfilters.core.transfer import Transfer
from cvfilters.engine.steps import Step, run_steps


@dataclass(frozen=True)
class RunReport:
    """What a run did: backend, device, the steps as run (fused groups included), transfers and host fallbacks."""

    backend: str
    device: str
    plan: tuple[Step, ...]
    counters: Counters
    info: ImageInfo | None = None  # of the input, as the first step saw it

    @property
    def steps(self) -> tuple[str, ...]:
        """The spec of each step as it ran (formatted when asked, not on every run)."""
        return tuple(step.to_spec() for step in self.plan)

    def footprints(self) -> list[str]:
        """Each step's footprint kind on the image it ran on (:mod:`cvfilters.registry.footprints`), with its halo."""
        kinds, info = [], self.info
        for step in self.plan:
            if info is None:
                kinds.append("footprint unknown")
                continue
            footprint = step.filter.footprint_for(step.params, info)
            halo = f", halo {footprint.halo}" if footprint.kind in ("local", "positional", "global") and any(
                footprint.halo.as_tuple()) else ""
            kinds.append(f"{footprint.kind}{halo}")
            info = step.filter.output_info(step.params, info)
        return kinds

    def lines(self) -> list[str]:
        fallbacks = ", ".join(f"{name} x{n}" for name, n in sorted(self.counters.fallbacks.items())) or "none"
        return [f"backend: {self.backend} ({self.device})",
                *(f"  step {i}: {spec} ({footprint})" for i, (spec, footprint)
                  in enumerate(zip(self.steps, self.footprints(), strict=True), 1)),
                f"transfers: {self.counters.uploads} upload(s), {self.counters.downloads} download(s), "
                f"{self.counters.constants} cached mask/map upload(s)",
                f"host fallbacks: {fallbacks}"]


def run_plan(plan: Sequence[Step], image: Any, *, backend: str = "auto", channel_order: ChannelOrder | None = None,
             layout: Layout = "hwc", transfer: Transfer | None = None) -> tuple[Any, RunReport]:
    """Run ``plan`` on ``image`` (see :meth:`cvfilters.Pipeline.run`) and report what ran where;
    the steps that mix light run on linear values through ``transfer`` when one is given."""
    seen: list[ImageInfo] = []

    def body(ctx: Context, native: Any) -> tuple[Any, ImageInfo]:
        seen.append(ctx.info)
        return run_steps(ctx, native, plan, transfer=transfer)

    out, be, counters = run_image(image, backend, body, channel_order=channel_order, layout=layout,
                                  point_only=all(step.filter.point_only for step in plan))
    return out, RunReport(be.name, device_name(be), tuple(plan), counters, seen[0] if seen else None)
