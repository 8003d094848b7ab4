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
from typing import Any

import numpy as np

ALPHA_POLICIES = ("passthrough", "premultiply", "all")
# Added to alpha before un-premultiplying so fully transparent pixels divide to 0, not NaN.
_ALPHA_EPSILON = 1e-12


def apply_alpha_policy(policy: str, fn: Callable[..., Any], ctx: Any, image: Any,
                       params: Mapping[str, Any]) -> Any:
    """Run ``fn(ctx, image, **params)`` under an alpha policy."""
    if ctx.spec.channels != 4 or policy == "all":
        return fn(ctx, image, **params)
    be = ctx.be
    if policy == "passthrough":
        *color, alpha = be.split(image)
        out = fn(ctx.with_spec(channels=3), be.merge(color), **params)
        return be.merge([*be.split(out), alpha])
    full = ctx.spec.max_value
    *color, alpha = be.split(be.convert(image, np.float32, 1.0 / full))
    premultiplied = be.multiply(be.merge(color), be.merge([alpha] * 3))
    out = fn(ctx.with_spec(dtype=np.dtype(np.float32)), be.merge([*be.split(premultiplied), alpha]), **params)
    *color, alpha = be.split(be.clip(out, 0.0, 1.0))
    divisor = be.convert(be.merge([alpha] * 3), np.float32, 1.0, _ALPHA_EPSILON)
    straight = be.clip(be.divide(be.merge(color), divisor), 0.0, 1.0)
    return be.convert(be.merge([*be.split(straight), alpha]), ctx.spec.dtype, full)
