"""The analyses' figures are readable: colour bars on heatmaps, type of at least 11 pt, legends
outside the data, shared scales where panels are compared, docs figures within the page width.

Every figure is built from hand-built inputs (no training), so these tests take a few seconds.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.colorbar import Colorbar
from matplotlib.image import AxesImage
from matplotlib.text import Annotation, Text
from PIL import Image

from drga.analysis import explainability, highlighted, modified_words, polarity, saliency, transitions
from drga.analysis.maps import MapItem, heatmap_figure
from drga.analysis.modified_words import WordChange
from drga.analysis.plots import ANNOTATION_SIZE, DOC_WIDTH, DPI, FONT_SIZE, figure_to_array, save_png
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
TOKENS = [("--", "positive"), ("me", "positive"), ("amusing", "positive"), ("film's", "positive"),
          ("discovers", "negative"), ("discover", "negative"), ("decide", "negative"), ("government", "negative"),
          (".", "neutral"), (",", "neutral"), ("the", "neutral"), ("a", "neutral")]
#: Widest PNG for docs/: DOC_WIDTH inches plus savefig's 0.1-inch padding either side.
PAGE_PIXELS = (DOC_WIDTH + 0.2) * DPI + 1
PHASES = [("pretrain", 1), ("pretrain", 2), ("agent", 1), ("agent", 2), ("cotrain", 0), ("cotrain", 1), ("baseline", 1)]


@pytest.fixture(autouse=True)
def small_global_type():
    """Global rcParams with tiny type: the figures must bring their own style, not inherit this."""
    with matplotlib.rc_context({"font.size": 5, "xtick.labelsize": 4, "ytick.labelsize": 4, "axes.titlesize": 5,
                                "axes.labelsize": 5, "legend.fontsize": 4}):
        yield


def tracked(lengths=(28, 9, 17), seed=0):
    """A tracked_attention.json payload: 3 sentences, 12 polarity tokens, DRGA's phases and a baseline branch."""
    rng = np.random.default_rng(seed)
    examples = [{"dev_index": 10 * i, "tokens": [f"word{j}" for j in range(n)], "label": i % 2} for i, n in enumerate(lengths)]
    records = []
    for step, (phase, epoch) in enumerate(PHASES):
        agent = phase in ("agent", "cotrain")
        records.append({
            "phase": phase, "epoch": epoch, "global_step": 10 * step, "beta": 0.3 if agent else None,
            "original": [rng.dirichlet(np.ones(n)).tolist() for n in lengths],
            "revised": [rng.dirichlet(np.ones(n)).tolist() for n in lengths] if agent else None,
            "p_gold_original": [0.9] * len(lengths), "p_gold_revised": [0.8] * len(lengths) if agent else None,
            "polarity": {
                "polarity": (rng.normal(size=12) * 5).tolist(),
                "attention": np.exp(rng.normal(size=12)).tolist(),
                # some tokens clipped to exactly 0 (drawn at the floor of the log axis)
                "attention_revised": (np.exp(rng.normal(size=12)) * (np.arange(12) % 3 > 0)).tolist() if agent else None,
            },
        })
    return {"format": 1, "label_names": ["objective", "subjective"], "examples": examples,
            "polarity_tokens": [{"token": t, "id": i + 2, "group": g, "count": 50, "rate": 0.5} for i, (t, g) in enumerate(TOKENS)],
            "polarity_classes": ["objective", "subjective"], "records": records}


def map_items(lengths=(30, 6, 14), seed=0):
    rng = np.random.default_rng(seed)
    return [MapItem(f"#{n}  gold: objective", [f"token{j}" for j in range(n)], rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n)))
            for n in lengths]


def document_items(seed=0):
    rng = np.random.default_rng(seed)
    items = []
    for d in range(2):
        lengths = [4, 9, 6]
        ends = np.cumsum(lengths).tolist()
        items.append(MapItem(
            f"doc {d}", [f"w{j}" for j in range(sum(lengths))],
            np.concatenate([rng.dirichlet(np.ones(n)) for n in lengths]), np.concatenate([rng.dirichlet(np.ones(n)) for n in lengths]),
            sentences=list(zip([0] + ends[:-1], ends)), sentence_original=rng.dirichlet(np.ones(3)),
            sentence_revised=rng.dirichlet(np.ones(3)),
        ))
    return items


def drawn(figure):
    figure.canvas.draw()
    return figure


def visible_texts(figure):
    """(text, written inside an axes: a cell value, a point's name) of every visible non-empty text of a drawn figure."""
    found = []
    for text in figure.findobj(Text):
        if text.get_visible() and text.get_text().strip() and text.get_figure() is not None:
            inside = any(text in axis.texts for axis in figure.axes)
            found.append((text, inside))
    return found


def assert_readable(figure):
    """Titles, labels, tick labels, legends and colour-bar labels ≥ FONT_SIZE; text inside axes ≥ ANNOTATION_SIZE."""
    texts = visible_texts(drawn(figure))
    assert texts
    for text, inside in texts:
        least = ANNOTATION_SIZE if inside else FONT_SIZE
        assert text.get_fontsize() >= least, (text.get_text(), text.get_fontsize())


def colorbars(figure) -> list[Colorbar]:
    return [image.colorbar for axis in figure.axes for image in axis.get_children()
            if isinstance(image, AxesImage) and getattr(image, "colorbar", None) is not None]


def assert_every_heatmap_has_a_colorbar(figure):
    """Each heatmap image shares its colour scale with a colour bar of the figure."""
    bars = colorbars(figure)
    images = [image for axis in figure.axes for image in axis.images]
    assert images and bars
    for image in images:
        assert any(bar.norm.vmin == image.norm.vmin and bar.norm.vmax == image.norm.vmax and bar.cmap.name == image.cmap.name
                   for bar in bars), "a heatmap without a colour bar of its scale"


def overlap(a, b) -> float:
    """Area (pixels²) of the intersection of two display boxes."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


def assert_legends_outside_the_data(figure):
    drawn(figure)
    legends = list(figure.legends) + [axis.get_legend() for axis in figure.axes if axis.get_legend() is not None]
    assert legends
    for legend in legends:
        box = legend.get_window_extent()
        for axis in figure.axes:
            if axis.get_visible():
                assert overlap(box, axis.get_window_extent()) == 0, "a legend covers an axes' data area"


def saved_width(figure, tmp_path) -> int:
    path = save_png(figure, tmp_path / "figure.png")
    with Image.open(path) as image:
        return image.size[0]


# --- heatmaps ------------------------------------------------------------------------------


def test_attention_map_heatmaps_have_colour_bars_readable_type_and_fit_the_page(tmp_path):
    figure = heatmap_figure(map_items())
    assert_every_heatmap_has_a_colorbar(figure)
    assert len(colorbars(figure)) == 3  # one scale per sentence
    assert_readable(figure)
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS
    # the strongest cells carry their value inside the cell
    assert any(inside for _, inside in visible_texts(figure))


def test_document_maps_have_one_colour_bar_per_document():
    figure = heatmap_figure(document_items())
    assert_every_heatmap_has_a_colorbar(figure)
    assert len({id(bar) for bar in colorbars(figure)}) == 2
    assert_readable(figure)


def test_transition_heatmaps_have_one_colour_bar_per_sentence(tmp_path):
    figure = transitions.heatmap_figure(tracked())
    assert_every_heatmap_has_a_colorbar(figure)
    assert len(colorbars(figure)) == 3
    # α has a row per evaluation of DRGA's path, α′ only from the agent phase on (no baseline branch)
    rows = sorted(image.get_array().shape[0] for image in (i for a in figure.axes for i in a.images))
    assert rows == [4, 4, 4, 6, 6, 6]
    assert_readable(figure)
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS


def test_tensorboard_images_use_the_same_style():
    pixels = figure_to_array(heatmap_figure(map_items((8, 5))))
    assert pixels.ndim == 3 and pixels.shape[2] == 3


# --- panels, legends, type ---------------------------------------------------------------------


def test_modified_words_panels_share_the_x_axis(tmp_path):
    changes = [WordChange(f"word{i}", 10 + i, float(v), 0.1, 0.1) for i, v in enumerate([0.05, 0.03, 0.01, -0.02, -0.1, -0.23])]
    raised, lowered = modified_words.most_modified(changes, 15)
    figure = drawn(modified_words.bar_figure(raised, lowered, changes, 10))
    left, right = figure.axes
    assert left.get_xlim() == right.get_xlim()
    low, high = left.get_xlim()
    assert low <= -0.23 and high >= 0.05  # both panels show the largest change of either side
    assert_readable(figure)
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS


def test_highlighted_legend_lies_below_the_histograms(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"index": i, "length": 20, "n_original": int(rng.integers(1, 20)), "n_revised": int(rng.integers(1, 20)),
             "n_reference": int(rng.integers(1, 20))} for i in range(200)]
    figure = highlighted.histogram_figure([("tokens", rows)], 0.85, "baseline_best.pt")
    assert_legends_outside_the_data(figure)
    (legend,) = figure.legends
    assert [t.get_text().split(":")[0] for t in legend.get_texts()] == ["original α", "revised α′", "baseline_best.pt"]
    assert legend.get_window_extent().y1 <= min(axis.get_window_extent().y0 for axis in figure.axes)  # below the panels
    assert_readable(figure)
    # documents: two panels, each level's entries in the one legend
    sentences = [{"index": i, "length": 4, "n_original": 2, "n_revised": 1} for i in range(30)]
    figure = highlighted.histogram_figure([("words", rows), ("sentences", sentences)], 0.85, "reference")
    assert_legends_outside_the_data(figure)
    assert len(figure.legends[0].get_texts()) == 5


def test_explainability_legend_lies_below_and_the_threshold_is_in_the_title(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for mode in ("original", "revised"):
        for i in range(300):
            delta = float(rng.random() * 0.5)
            rows.append({"index": i, "mode": mode, "delta_alpha": delta, "delta_js": (delta - 0.05) * 1e-3,
                         "js_top": 1e-3, "js_random": 1e-5, "flip_top": False, "flip_random": False})
    summary = explainability.summarize(rows)
    figure = explainability.scatter_figure(rows, summary)
    assert_legends_outside_the_data(figure)
    assert all("threshold Δα" in axis.get_title(loc="left") for axis in figure.axes)
    assert_readable(figure)
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS


def test_saliency_and_polarity_snapshot_are_readable(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"index": i, "mode": m, "tau_attention_gradient": rng.normal() * 0.2, "tau_attention_loo": rng.normal() * 0.2,
             "tau_gradient_loo": rng.normal() * 0.2} for m in ("net-only", "with-agent") for i in range(50)]
    figure = saliency.box_figure(rows, "subj")
    assert_readable(figure)
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS
    rows = [{"token": f"tok{i}", "train_count": 100, "rate_c_plus": float(rng.random()), "occurrences": 20,
             "polarity": float(rng.normal() * 4), "attention": float(np.exp(rng.normal())),
             "attention_revised": float(np.exp(rng.normal())) * (i % 5 > 0)} for i in range(60)]
    figure = polarity.snapshot_figure(rows, ["objective", "subjective"])
    assert_readable(figure)
    scatter_bars = [c for c in figure.axes if c.get_label() == "<colorbar>"]
    assert len(scatter_bars) == 1  # the class-rate colours have their scale
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS


def test_polarity_tracking_is_small_multiples_with_labelled_line_ends(tmp_path):
    figure = drawn(polarity.tracking_figure(tracked()))
    axes = np.array(figure.axes).reshape(3, 3)
    for axis in axes.ravel():
        data_lines = [line for line in axis.get_lines() if len(line.get_xdata()) > 2]
        assert len(data_lines) == 4  # one group's tokens per panel
        labels = [t for t in axis.texts if isinstance(t, Annotation)]
        assert len(labels) == 4
        boxes = [Text.get_window_extent(t) for t in labels]  # the words, without their connector lines
        assert all(overlap(a, b) == 0 for i, a in enumerate(boxes) for b in boxes[i + 1:]), "line-end labels overlap"
    # one x axis for every panel; one y scale per row, and the two attention rows share theirs
    assert len({axis.get_xlim() for axis in axes.ravel()}) == 1
    assert len({axis.get_ylim() for axis in axes[0]}) == 1
    assert len({axis.get_ylim() for axis in axes[1:].ravel()}) == 1
    assert [axis.get_title() for axis in axes[0]] == ["positive tokens (subjective)", "negative tokens (objective)",
                                                       "neutral tokens (near the prior)"]
    assert {t.get_text() for axis in axes[0] for t in axis.texts} == {f"'{token}'" for token, _ in TOKENS}
    assert_readable(figure)
    assert saved_width(figure, tmp_path) <= PAGE_PIXELS


def test_spread_keeps_order_and_gap():
    assert polarity.spread([0.5, 0.2, 0.52], 0.1) == pytest.approx([0.5, 0.2, 0.6])
    assert polarity.spread([0.99, 0.98, 0.97], 0.1) == pytest.approx([1.0, 0.9, 0.8])  # pushed down from the top
    assert polarity.spread([], 0.1) == []


def test_sb3_reward_curves_legend_lies_below_the_panels(tmp_path):
    pytest.importorskip("tensorboard")
    module = load_script("experiments/sb3_compare.py")
    rng = np.random.default_rng(0)
    curves = {
        agent: {
            "trainer": {"agent": [(s, float(rng.normal() * 0.1 - 0.5)) for s in (25, 50)],
                        "drga": [(s, float(rng.normal() * 0.1 - 0.5)) for s in range(60, 130, 10)]},
            "sb3": [] if agent == "reinforce" else [(s, float(rng.normal() * 0.1 - 0.6)) for s in range(2000, 80000, 2000)],
            "start": 0,
        }
        for agent in ("reinforce", "sb3-a2c", "sb3-ppo")
    }
    figure = module.plot(curves, 1500.0, str(tmp_path / "curves.png"))
    assert_legends_outside_the_data(figure)
    assert_readable(figure)
    with Image.open(tmp_path / "curves.png") as image:
        assert image.size[0] <= PAGE_PIXELS
