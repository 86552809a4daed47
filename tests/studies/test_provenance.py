"""docs/RESULTS.md's provenance table is what experiments/provenance.py prints from the committed result files."""

from __future__ import annotations

from tests.scripts import ROOT, load_script


def test_the_provenance_table_is_the_committed_files():
    provenance = load_script("experiments/provenance.py")
    page = (ROOT / "docs" / "RESULTS.md").read_text(encoding="utf-8")
    rows = provenance.folder_rows(ROOT / "experiments" / "results")
    assert {row["folder"] for row in rows} >= {"paper-regime", "tuned-regime", "explain-analysis"}
    for line, row in zip(provenance.table(rows).splitlines()[2:], rows):
        if row["folder"] in provenance.PAGES:  # a folder a study adds later gets its row when its section is written
            assert line in page, f"docs/RESULTS.md's provenance table lacks or differs in: {line}"
    assert provenance.unrecorded(rows) in page, "docs/RESULTS.md's line of the files that record no commit differs"
    assert "translation-regime" in provenance.PAGES


def test_the_commits_of_each_kind_of_file(tmp_path):
    provenance = load_script("experiments/provenance.py")
    assert provenance.commits({"commit": "021f4d1c4d", "rows": {}}) == ["021f4d1"]
    assert provenance.commits({"cost": {"commit": "572d9197d3"}, "attentions": {}}) == ["572d919"]
    assert provenance.commits({"mr-lstm-sa": {"commit": "021f4d1c4d"}, "subj-lstm-sa": {"commit": "021f4d1c4d"}}) == ["021f4d1"] * 2
    assert provenance.commits({"run": "runs/explain/x", "chosen": {}}) == []
    folder = tmp_path / "results" / "study"
    folder.mkdir(parents=True)
    (folder / "a.json").write_text('{"commit": "abcdef1234"}')
    (folder / "b.json").write_text('{"chosen": {}}')
    (folder / "notes.md").write_text("notes")
    (row,) = provenance.folder_rows(tmp_path / "results")
    assert provenance.table([row]).splitlines()[2] == "| `study/` | 2 JSON + 1 other (notes.md) | abcdef1: 1, none recorded: 1 | - | - |"
    assert provenance.unrecorded([row]) == ("1 result file records no commit: no file names the code that made them, only the "
                                            "history, by the commit that added each (`git log --diff-filter=A -- "
                                            "experiments/results/<file>`): `study/b.json` (-).")
    for name in ("a.log", "b.log", "c.de.gz", "d.de.gz"):
        (folder / name).write_text("x")
    (row,) = provenance.folder_rows(tmp_path / "results")
    assert provenance.table([row]).splitlines()[2].startswith("| `study/` | 2 JSON + 5 other (2 .de.gz, 2 .log, 1 .md) |")
