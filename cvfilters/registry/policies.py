"""Alpha policies: how a filter treats the fourth channel, declared once per filter.

- ``passthrough`` (colour filters): the filter sees BGR; alpha is put back untouched.
- ``premultiply`` (spatial filters): colour is multiplied by alpha before the filter
  and divided after it, in float32, so transparent pixels do not bleed dark halos
  into their neighbours; alpha itself is filtered with the colour. Alpha and the
  un-premultiplied colour are clamped to full scale (a sharpening kernel can push
  alpha below 0 or colour beyond what alpha can carry).
- ``all``: the four channels are processed as they are (exact geometric operations).

Images with 1 or 3 channels go to the filter unchanged under every policy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, get_args

import numpy as np

from cvfilters.core.pixels import premultiply, unpremultiply
from cvfilters.core.types import AlphaPolicy, Image

ALPHA_POLICIES: tuple[str, ...] = get_args(AlphaPolicy)


def apply_alpha_policy(policy: str, fn: Callable[..., Any], ctx: Any, image: Image,
                       params: Mapping[str, Any]) -> Image:
    """Run ``fn(ctx, image, **params)`` under an alpha policy."""
    if ctx.info.channels != 4 or policy == "all":
        return fn(ctx, image, **params)
    be = ctx.backend
    if policy == "passthrough":
        *color, alpha = be.split(image)
        out = fn(ctx.with_info(channels=3), be.merge(color), **params)
        return be.merge([*be.split(out), alpha])
    color, alpha = premultiply(be, image, ctx.info)
    out = fn(ctx.with_info(dtype=np.dtype(np.float32)), be.merge([*be.split(color), alpha]), **params)
    *color_planes, alpha = be.split(be.clip(out, 0.0, 1.0))
    return unpremultiply(be, be.merge(color_planes), alpha, ctx.info)
