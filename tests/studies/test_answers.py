"""experiments/answers.py (issue 64): the answers at a glance. The detectable effect and the verdict words by hand,
a study's row from hand-made files (translation, filling in as its seeds land), every number the same as its page's,
the committed table, figure and README block rebuilt byte-identical, and no number in README's results typed by hand."""

from __future__ import annotations

import math
import re

import pytest

from tests.scripts import ROOT, load_script


@pytest.fixture(scope="module")
def answers():
    return load_script("experiments/answers.py")


@pytest.fixture(scope="module")
def committed(answers):
    """Every cell and the summary's extras, from the committed result files."""
    return answers.all_cells(ROOT / "experiments" / "results")


def make(answers, differences, paper=None, holm=0.5, family=1, better=1, **extra):
    spread = len({round(d, 9) for d in differences}) > 1
    return answers.Cell("regime", "x", tuple(differences), spread, holm, holm, family, paper, better=better, **extra)


# ---------------------------------------------------------------------------------------- by hand


def test_the_detectable_effect_is_where_the_noncentral_t_gives_80_percent_power():
    from scipy import stats

    stats_module = load_script("experiments/study_stats.py")
    for n, alpha in ((10, 0.05), (5, 0.05 / 38), (3, 0.05 / 3), (5, 0.05 / 26)):
        d = stats_module.detectable_effect(n, alpha)
        critical, noncentrality = stats.t.ppf(1 - alpha / 2, n - 1), d * math.sqrt(n)
        lower = stats.nct.cdf(-critical, n - 1, noncentrality)  # NaN from scipy where it is below 1e-6 (the docstring)
        power = stats.nct.sf(critical, n - 1, noncentrality) + (0.0 if math.isnan(lower) else lower)
        assert power == pytest.approx(0.8, abs=1e-6)
    # 10 pairs at 0.05: 0.996 (the noncentral t's power there is 0.79999; 0.994 gives 0.798)
    assert stats_module.detectable_effect(10, 0.05) == pytest.approx(0.996, abs=5e-4)
    # many pairs: the normal approximation (1.960 + 0.842) / √n, a little above it for the t
    assert 2.8016 / math.sqrt(400) < stats_module.detectable_effect(400, 0.05) < 1.01 * 2.8016 / math.sqrt(400)
    # a smaller level needs a larger effect (statsmodels' own solver gives 3.35 at 0.05/38 against 4.04 at 0.05/26)
    assert stats_module.detectable_effect(5, 0.05 / 38) > stats_module.detectable_effect(5, 0.05 / 26)
    assert math.isnan(stats_module.detectable_effect(1, 0.05))


def test_the_verdict_words_by_hand(answers):
    # +1, +2, +3: mean 2, sd 1, 95% interval 2 ± 4.303/√3 = [-0.48, +4.48]
    cell = make(answers, [1.0, 2.0, 3.0], paper=2.3)
    low, high = cell.interval
    assert (round(low, 2), round(high, 2)) == (-0.48, 4.48)
    assert cell.verdict == "tie; cannot tell"
    # sd 1 over 3 seeds could detect 3.07 (below): the paper's 5 lies beyond the interval and is detectable
    assert make(answers, [1.0, 2.0, 3.0], paper=5.0).relation == "no effect as large as the paper's"
    # a paper's Δ of 4.6 lies above the interval too, but these seeds could not detect it: the interval's place alone
    assert make(answers, [1.0, 2.0, 3.0], paper=4.6, family=3).detectable > 4.6
    assert make(answers, [1.0, 2.0, 3.0], paper=4.6, family=3).relation == answers.OUTSIDE_UNDETECTABLE
    # a negative Δ of the paper: an interval above it (-1 is 1 beyond it, under the 3.07 these seeds detect)
    assert make(answers, [1.0, 2.0, 3.0], paper=-1.0).relation == answers.OUTSIDE_UNDETECTABLE
    # one below it (-2.5 ± 1.24): larger than the paper's where Holm finds the effect, else only the interval's place
    assert make(answers, [-3.0, -2.5, -2.0], paper=-1.0, holm=0.01).relation == "larger than the paper's"
    assert make(answers, [-3.0, -2.5, -2.0], paper=-1.0).relation == answers.INTERVAL_BEYOND
    assert make(answers, [-1.0, -2.0, -3.0], paper=-5.0).relation == "no effect as large as the paper's"
    assert make(answers, [-10.0, -20.0, -15.0], paper=-2.0, better=-1, holm=0.01).relation == "larger than the paper's"
    # Holm's verdict, in the direction that is better for the measure
    assert make(answers, [1.0, 2.0, 3.0], holm=0.01).holm_word == "better"
    assert make(answers, [1.0, 2.0, 3.0], holm=0.01, better=-1).holm_word == "worse"
    assert make(answers, [1.0, 1.0, 1.0], holm=math.nan).verdict == "no test (no spread)"
    assert make(answers, [1.0]).verdict == "too few seeds"
    assert make(answers, [], planned=5).verdict == "incomplete"
    # no paper Δ: the Holm verdict alone
    assert make(answers, [1.0, 2.0, 3.0]).verdict == "tie"


def test_every_committed_verdict_follows_the_could_detect_column(answers, committed):
    """"No effect as large as the paper's" only where the design could detect the paper's Δ; "larger than the paper's"
    only where Holm finds the effect; every other position of the paper's Δ is said as the interval's, uncorrected."""
    cells, _ = committed
    seen = set()
    for cell in cells:
        if cell.paper is None or cell.n < 2 or not cell.relation:
            continue
        low, high = cell.interval
        seen.add(cell.relation)
        if cell.relation == answers.CANNOT_TELL:
            assert low <= cell.paper <= high, cell
        elif cell.relation == answers.NOT_AS_LARGE:
            assert not low <= cell.paper <= high and cell.detectable <= abs(cell.paper), cell
        elif cell.relation == answers.OUTSIDE_UNDETECTABLE:
            assert not low <= cell.paper <= high and not cell.detectable <= abs(cell.paper), cell
        elif cell.relation == answers.LARGER:
            assert cell.holm_word in ("better", "worse") and not low <= cell.paper <= high, cell
        else:
            assert cell.relation == answers.INTERVAL_BEYOND and cell.holm_word == "tie", cell
    assert {answers.NOT_AS_LARGE, answers.OUTSIDE_UNDETECTABLE, answers.CANNOT_TELL} <= seen
    # Table VIII MR has one reading: a tie after Holm, its interval beyond the paper's Δ uncorrected
    table_viii_mr = [c for c in cells if c.group == "focus" and c.label == "MR"]
    assert [c.verdict for c in table_viii_mr] == [f"tie; {answers.INTERVAL_BEYOND}"]


def test_the_detectable_effect_of_a_cell_is_in_its_units(answers):
    stats_module = load_script("experiments/study_stats.py")
    # sd 1 over 3 seeds in a family of 4: d at 0.05/4; twice the spread, twice the effect
    assert make(answers, [1.0, 2.0, 3.0], family=4).detectable == pytest.approx(stats_module.detectable_effect(3, 0.0125))
    assert make(answers, [2.0, 4.0, 6.0], family=4).detectable == pytest.approx(2 * stats_module.detectable_effect(3, 0.0125))
    assert math.isnan(make(answers, [1.0, 1.0, 1.0]).detectable)


def test_a_summary_row_counts_its_cells(answers):
    group = answers.GROUP["size"]
    cells = [
        make(answers, [1.0, 2.0, 3.0], paper=2.3),
        make(answers, [0.0, 0.1, 0.2], paper=2.0),
        make(answers, [-0.2, -0.3, -0.1], paper=1.0, holm=0.01),
    ]
    row = [part.strip() for part in answers.summary_row(group, cells, {}, "").strip("|").split("|")]
    assert row[1:4] == ["3", "3", "+1.0 to +2.3"]
    assert row[4].startswith("-0.20 to +2.00 (intervals within [-0.48, +4.48])")
    assert row[5] == "2 tie, 1 worse (x)"
    assert row[7] == "no effect as large as the paper's in 2 of 3; cannot tell in 1 of 3 (x)"


def test_the_translation_row_says_incomplete_then_fills_in(answers, tmp_path):
    from tests.studies.test_translation_tables import write_study

    folder = tmp_path / "results" / "translation-regime"
    folder.mkdir(parents=True)
    luong, transformer = answers.translation_cells(tmp_path / "results")
    assert (luong.n, luong.planned, luong.verdict) == (0, 5, "incomplete")
    assert luong.status == "stage 1: 0 of 5 seeds pretrained" and transformer.planned == 7
    row = answers.summary_row(answers.GROUP["translation"], [luong, transformer], {}, "")
    assert "incomplete: Luong 0 of 5 planned seeds (stage 1: 0 of 5 seeds pretrained); Transformer 0 of 7 planned seeds" in row
    # one seed of Luong: its difference, and no test
    write_study(folder, {"seq2seq-luong": [0]}, tmp_path)
    luong, transformer = answers.translation_cells(tmp_path / "results")
    row = answers.summary_row(answers.GROUP["translation"], [luong, transformer], {}, "")
    assert "incomplete: Luong 1 of 5 planned seeds" in row and "with those seeds Luong +1.00 (one seed: no test)" in row
    # seeds 0-2 of both: Luong +1, +2, +3 beam BLEU over the baseline, the Transformer +1, -1, +3 (test_translation_tables)
    write_study(folder, {"seq2seq-luong": [0, 1, 2], "transformer-nmt": [0, 1, 2]}, tmp_path)
    luong, transformer = answers.translation_cells(tmp_path / "results")
    assert luong.differences == pytest.approx((1.0, 2.0, 3.0)) and luong.running and transformer.n == 3 and transformer.running
    # 4 tests of beam BLEU (net-only has no spread): Luong's against the baseline (+1, +2, +3: t = 3.464, p = 0.074) and
    # against pretrain-only (+2, +3, +4: t = 5.196, p = 0.035), the Transformer's two (p 0.478 and 0.225); Holm: the
    # second smallest, 3 × 0.074
    assert luong.family == 4 and luong.p == pytest.approx(0.0742, abs=1e-4) and luong.holm == pytest.approx(3 * luong.p)
    # Luong [-0.48, +4.48] holds the paper's +2.6; the Transformer's 1 ± 4.303 · 2/√3 = [-3.97, +5.97] its +1.4
    assert luong.verdict == transformer.verdict == "tie; cannot tell"
    row = answers.summary_row(answers.GROUP["translation"], [luong, transformer], {}, "")
    assert "incomplete: Luong 3 of 5 planned seeds" in row
    assert "with those seeds Luong +2.00 [-0.48, +4.48]; Transformer +1.00 [-3.97, +5.97]" in row


# ---------------------------------------------------------------------------------------- the committed answers


def page_lines(answers, cell) -> list[str]:
    page = (ROOT / "docs" / "results" / answers.GROUP[cell.group].page).resolve()
    return page.read_text(encoding="utf-8").splitlines()


def test_every_number_is_the_one_its_page_says(answers, committed):
    cells, extra = committed
    checked = 0
    for cell in cells:
        if cell.n < 2 or cell.group == "translation":
            continue
        digits = answers.digits_of(cell.group)
        low, high = cell.interval
        if cell.group == "focus":  # EXPLAINABILITY.md's Table VIII note (mean ± std over seeds) and its N test's Holm p
            wanted = [f"DRGA with-agent α* {cell.mean:.1f} ± "]
            holm = f"Holm {cell.holm:.3f} ("
            assert any(holm in line and line.startswith("| mean highlighted tokens N") for line in page_lines(answers, cell))
        else:  # the comparison's row: Δ, its interval, and Holm's p on one line
            # a cell with no spread has no test; controls.md gives p to 3 significant digits, the other pages to 3 decimals
            holm = "| - |" if math.isnan(cell.holm) else f"{cell.holm:.3g}" if cell.group in answers.CONTROL_GROUPS else f"{cell.holm:.3f}"
            wanted = [f"{cell.mean:+.{digits}f}", f"[{low:+.{digits}f}, {high:+.{digits}f}]", holm]
        assert any(all(part in line for part in wanted) for line in page_lines(answers, cell)), (cell, wanted)
        checked += 1
    assert checked == len([c for c in cells if c.n >= 2 and c.group != "translation"]) >= 50
    # tuned.md's two equal-weight lines: over the cells, and without seed 0 (the search's own)
    assert extra["tuned"] == "over the 4 cells +0.06 [-0.15, +0.27], without seed 0 (the search's own) +0.05 [-0.17, +0.28]"
    tuned = (ROOT / "docs" / "results" / "tuned.md").read_text(encoding="utf-8")
    assert "Over the 4 cells, each weighted equally: +0.06 points, 95% interval [-0.15, +0.27]" in tuned


def test_the_audits_numbers(committed):
    """Issue 64's audit, recomputed with numpy and scipy alone: Table I's three sizes whose interval holds the paper's Δ."""
    cells, _ = committed
    sizes = {c.label: c for c in cells if c.group == "size"}
    for label, paper, interval in (("1 × 100", 0.3, (-0.92, 0.52)), ("2 × 100", 1.3, (-0.34, 1.38)), ("3 × 100", 0.5, (-1.37, 0.85))):
        cell = sizes[label]
        assert cell.paper == pytest.approx(paper) and tuple(round(v, 2) for v in cell.interval) == interval
        assert cell.relation == "cannot tell"
    assert sum(c.relation == "cannot tell" for c in sizes.values()) == 3


def test_the_committed_table_figure_and_readme_block_are_what_the_files_give(answers, tmp_path):
    figure = tmp_path / "answers-forest.png"
    texts = answers.build(ROOT / "experiments" / "results", ROOT, figure)
    for path, text in texts.items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, f"{path} is not what `python experiments/answers.py` writes"
    assert figure.read_bytes() == (ROOT / answers.FIGURE).read_bytes()
    again = tmp_path / "again.png"
    answers.build(ROOT / "experiments" / "results", ROOT, again)
    assert again.read_bytes() == figure.read_bytes()


NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:[.,]\d+)*")


def results_section(readme: str, title: str = "What we measured") -> str:
    return readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_number_in_readmes_results_comes_from_the_generated_table(answers):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = results_section(readme)
    block = answers.START + section.split(answers.START, 1)[1].split(answers.END, 1)[0] + answers.END
    assert block in section and "| the paper's claim |" in block and answers.FIGURE.as_posix() in block
    prose = section.replace(block, "")
    assert len(prose.split()) < 150  # a few sentences above the table: the numbers live in it
    # the opening section's sentences and the later "Results" section (its commands and pointers) type no number
    for text in (prose, results_section(readme, "Results")):
        typed = set(NUMBER.findall(text)) - set(NUMBER.findall(block))
        assert not typed, f"numbers typed by hand in README's results: {sorted(typed)}"


def test_a_number_typed_by_hand_is_caught():
    readme = "intro\n## What we measured\n\nDRGA moved MR by -0.54 points, 95% interval.\n\nSTART | 95% | -0.49 | END\n## Next\n9.9"
    section = results_section(readme)
    assert set(NUMBER.findall(section)) - set(NUMBER.findall("START | 95% | -0.49 | END")) == {"-0.54"}
