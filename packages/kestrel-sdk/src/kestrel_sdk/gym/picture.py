"""``render_mode="rgb_array"``: the latest bars as candles, as an RGB image (NumPy only).

The image is ``HEIGHT`` x ``BARS * COLUMN`` pixels: the last ``BARS`` bars of the traded
symbol up to the current one, each a candle (a grey wick from low to high, a body from
open to close, green when the bar closed at or above its open, red below), scaled to the
range they span; the background is tinted by the position (green long, red short, grey
flat). What a video recorder of a training run (stable-baselines3's
``VecVideoRecorder``, Gymnasium's ``RecordVideo``) shows.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["BARS", "COLUMN", "HEIGHT", "picture"]

BARS = 64
COLUMN = 4
HEIGHT = 128

_BACKGROUND = {1: (18, 40, 24), -1: (48, 18, 18), 0: (24, 24, 28)}
_WICK = (150, 150, 150)
_UP = (60, 200, 90)
_DOWN = (220, 70, 60)


def picture(bars: NDArray[np.float64], bar: int, position: int) -> NDArray[np.uint8]:
    """The image at ``bar`` of ``bars`` (``(n, 5)``: open, high, low, close, volume)."""
    image = np.empty((HEIGHT, BARS * COLUMN, 3), dtype=np.uint8)
    image[:] = _BACKGROUND[(position > 0) - (position < 0)]
    rows = bars[max(0, bar - BARS + 1) : bar + 1, :4]
    low, high = float(rows[:, 2].min()), float(rows[:, 1].max())
    scale = (HEIGHT - 1) / (high - low) if high > low else 0.0

    def y(price: float) -> int:
        return round((high - price) * scale) if scale else HEIGHT // 2

    for i, (open_, top, bottom, close) in enumerate(rows.tolist()):
        x = i * COLUMN
        image[y(top) : y(bottom) + 1, x + 1] = _WICK
        first, last = sorted((y(open_), y(close)))
        image[first : last + 1, x : x + COLUMN - 1] = _UP if close >= open_ else _DOWN
    return image
