"""Matplotlib without pyplot: figures that never touch a GUI backend or global state."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Small PNGs for docs/: 100 dpi keeps a full-width figure well under 150 KB.
DPI = 100
#: Colours for the two attentions everywhere (original: the network's own α; revised: α′).
ORIGINAL_COLOR = "#4c72b0"
REVISED_COLOR = "#dd8452"


def new_figure(width: float, height: float) -> Figure:
    """A figure attached to the Agg canvas (works headless, in threads, under pytest)."""
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    return figure


def save_png(figure: Figure, path: str | Path) -> Path:
    """Write the figure as a PNG (tight bounding box) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def figure_to_array(figure: Figure) -> np.ndarray:
    """[H, W, 3] uint8 pixels of the figure (for TensorBoard ``add_image``)."""
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
