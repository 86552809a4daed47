"""Matplotlib without pyplot: figures that never touch a GUI backend or global state.

Every figure of the analyses is built and saved under one style (:data:`STYLE`, applied with
:func:`styled` or :func:`style`): type of at least :data:`FONT_SIZE` points for titles, axis
labels, tick labels, legends and colour-bar labels, and :data:`ANNOTATION_SIZE` for numbers or
words written inside heatmap cells. PNGs are saved at :data:`DPI`, so a point is 1.39 pixels,
and the figures shown in docs/ are at most :data:`DOC_WIDTH` inches wide: a page shows them
at their saved size (no down-scaling that would shrink the type). Legends go outside the data
area (:func:`legend_below`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from drga.files import atomic_path

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

#: 100 dpi keeps a full-width figure small; with DOC_WIDTH a figure is at most 1,000 pixels wide.
DPI = 100
#: Widest figure meant for docs/ (inches): about the width of a rendered markdown page's text column.
DOC_WIDTH = 10.0
#: Titles, axis labels, tick labels, legends, colour-bar labels (points at the saved size).
FONT_SIZE = 11
#: Numbers and words written inside heatmap cells, where the cell width is the limit.
ANNOTATION_SIZE = 10
#: Colours for the two attentions everywhere (original: the network's own α; revised: α′).
ORIGINAL_COLOR = "#4c72b0"
REVISED_COLOR = "#dd8452"
#: The shared matplotlib style (rcParams) of every figure.
STYLE: dict[RcKeyType, Any] = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE + 1,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE,
    "ytick.labelsize": FONT_SIZE,
    "legend.fontsize": FONT_SIZE,
    "legend.title_fontsize": FONT_SIZE,
    "legend.frameon": False,
    "figure.titlesize": FONT_SIZE + 1,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": DPI,
}

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def style() -> Iterator[None]:
    """The shared style for the figures built (and drawn) inside the block."""
    with matplotlib.rc_context(STYLE):
        yield


def styled(function: F) -> F:
    """Decorator: run ``function`` (which builds or saves figures) under :func:`style`."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with style():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def new_figure(width: float, height: float, layout: Literal["constrained", "compressed", "tight"] | None = None) -> Figure:
    """A figure attached to the Agg canvas (works headless, in threads, under pytest).

    ``layout="constrained"`` lets matplotlib make room for colour bars and for legends placed
    outside the axes.
    """
    with style():
        figure = Figure(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(figure)
    return figure


def legend_below(figure: Figure, handles: Sequence[Any] | None = None, labels: Sequence[str] | None = None,
                 ncol: int | None = None, **kwargs: Any):
    """One legend for the whole figure, below every axes (outside the data area).

    Needs a figure with ``layout="constrained"``, which reserves the legend's space under the
    axes and their tick labels. Without handles, the labelled artists of every axes are used
    (each label once).
    """
    if handles is None:
        seen: dict[str, Any] = {}
        for axis in figure.axes:
            for handle, label in zip(*axis.get_legend_handles_labels()):
                seen.setdefault(label, handle)
        handles, labels = list(seen.values()), list(seen)
    if labels is None:  # handles without labels: each handle's own
        labels = [handle.get_label() for handle in handles]
    count = len(handles)
    ncol = ncol or min(count, 3)
    return figure.legend(handles, labels, loc="outside lower center", ncol=ncol, **kwargs)


def cell_label(value: float) -> str:
    """A weight in a heatmap cell: '.38' (0.38), '1.0' for 1 (three characters fit a narrow cell)."""
    return "1.0" if value >= 0.995 else f"{value:.2f}"[1:]


def save_png(figure: Figure, path: str | Path, reproducible: bool = False) -> Path:
    """Write the figure as a PNG (tight bounding box) and return the path.

    ``reproducible``: no "Software" entry (matplotlib's version) in the file, so that the same
    figure gives the same bytes on any matplotlib that draws it the same.
    """
    path = Path(path)
    with style(), atomic_path(path) as partial:
        figure.savefig(partial, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None} if reproducible else None)
    return path


def figure_to_array(figure: Figure) -> np.ndarray:
    """[H, W, 3] uint8 pixels of the figure (for TensorBoard ``add_image``)."""
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    with style():
        canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
