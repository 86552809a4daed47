"""Where each committed result folder's numbers come from (issue 55): docs/RESULTS.md's provenance table.

    python experiments/provenance.py [--results experiments/results]

Per folder of ``experiments/results/``: its files, the code they name (each file's ``commit``, or ``cost.commit``
for an explainability analysis, with how many files name each; a file that records none is counted as such), the
page its numbers are on, and the command that rebuilds that page (or prints the table) from the committed files
alone. Under the table, one line names every file that records no commit. The machine a run ran on is in no result
file; docs/RESULTS.md says it in words beside this table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from checkout import ROOT

#: Folder → (the page its numbers are on, the command that rebuilds that page or prints the table).
PAGES = {
    "paper-regime": ("results/paper-regime.md", "python experiments/regime_tables.py experiments/results/paper-regime-pretrain-only "
                     "experiments/results/paper-regime --out docs/results/paper-regime.md --curves docs/results/paper-regime-curves.png"),
    "paper-regime-pretrain-only": ("results/paper-regime.md", "(the same command)"),
    "paper-regime-random-unk": ("results/paper-regime-random-unk.md", "python experiments/regime_tables.py "
                                "experiments/results/paper-regime-random-unk --out docs/results/paper-regime-random-unk.md "
                                "--curves docs/results/paper-regime-random-unk-curves.png"),
    "paper-regime-pilot": ("RESULTS.md (the paper-regime pilot)", "(read by hand: two files)"),
    "transformer-sst-probes": ("RESULTS.md (the Transformer on SST-5)", "(read by hand: four files, with a README)"),
    "families-regime": ("results/families-regime.md", "python experiments/regime_tables.py experiments/results/families-regime "
                        "--out docs/results/families-regime.md"),
    "hf-encoder": ("results/hf-encoder.md", "python experiments/regime_tables.py experiments/results/hf-encoder "
                   "--out docs/results/hf-encoder.md"),
    "variant-closeness": ("results/variants.md", "python experiments/variant_tables.py --out docs/results/variants.md"),
    "variant-holdout": ("results/variants.md", "(the same command)"),
    "variant-own-attention": ("results/variants.md", "(the same command)"),
    "variant-self-critical": ("results/variants.md", "(the same command)"),
    "variant-transformer-all-gradients": ("results/variants.md", "(the same command)"),
    "tuned-regime": ("results/tuned.md", "python experiments/tuned_study.py tables"),
    "agent-size": ("results/agent_size.md", "python experiments/agent_size_study.py tables"),
    "tuned-search": ("results/tuned.md", "(the same command)"),
    "explain-analysis": ("EXPLAINABILITY.md", "python experiments/explain_study.py tables"),
    "explain-regime": ("EXPLAINABILITY.md (seeds whose net-only network is the baseline's)", "(the same command)"),
    "explain-redraw": ("EXPLAINABILITY.md (the random reference over five draws: a replicate)", "(the same command)"),
    "reward-tuning": ("RESULTS.md, distributed.md (the reward grids)", "python experiments/tune_reward.py "
                      "experiments/results/reward-tuning-repro/mr-lstm-sa.json "
                      "--compare experiments/results/reward-tuning/mr-lstm-sa.json"),
    "reward-tuning-repro": ("distributed.md (the grids reproduced)", "(the same command; subj likewise)"),
    "brevity": ("results/nmt.md (brevity of the pilot's reproduction)", "python experiments/brevity_probe.py "
                "--history experiments/results/brevity/pilot-repro-seed0.json"),
    "translation-regime": ("results/nmt-regime.md (the translation study on two CPU cores: each seed's result file; "
                           "`pretrain/` stage 1's; `units/` each unit's record; `logs/` the runs' train logs, `logs/tries/` an "
                           "interrupted try's; `hypotheses/` "
                           "the decoded test translations and their references; `probes/` the throughput probes)",
                           "python experiments/translation_tables.py"),
    "control-planted": ("results/controls.md (the planted-cue control: `masked-s<strength>/` per strength, `cue-mass/` the "
                        "agent's and the co-trained network's cue-word mass)",
                        "python experiments/control_tables.py --out docs/results/controls.md"),
    "control-uniform": ("results/controls.md (the uniform-attention ceiling)", "(the same command)"),
    **{f"control-authors{variant}": ("results/controls.md (the authors' procedure" + (f", {variant[1:]})" if variant else ")"),
                                     "python experiments/control_tables.py --out docs/results/controls.md" if not variant
                                     else "(the same command)")
       for variant in ("", "-no-flipping", "-eq5-reward", "-paper-agent", "-baseline-5")},
}


def commits(content: Any) -> list[str]:
    """The commits a committed file names: its ``commit``, an analysis' ``cost.commit``, or a record's entries'."""
    if not isinstance(content, dict):
        return []
    found = content.get("commit") or (content.get("cost") or {}).get("commit")
    if found:
        return [str(found)[:7]]
    entries = [value for value in content.values() if isinstance(value, dict) and value.get("commit")]
    return [str(entry["commit"])[:7] for entry in entries]


def folder_rows(results: Path) -> list[dict[str, Any]]:
    rows = []
    for folder in sorted(p for p in results.iterdir() if p.is_dir()):
        files = sorted(folder.rglob("*.json"))
        named: Counter[str] = Counter()
        unnamed = []
        for path in files:
            found = commits(json.loads(path.read_text(encoding="utf-8")))
            named.update(found)
            if not found:
                unnamed.append(path.relative_to(results).as_posix())
        others = sorted(p.name for p in folder.rglob("*") if p.is_file() and p.suffix != ".json")
        page, command = PAGES.get(folder.name, ("-", "-"))
        rows.append({"folder": folder.name, "files": len(files), "others": others, "commits": named, "unnamed": len(unnamed),
                     "unnamed_files": unnamed, "page": page, "command": command})
    return rows


def unrecorded(rows: list[dict[str, Any]]) -> str:
    """The line under the table naming every result file that records no commit ("none recorded" in the table), by page."""
    groups = [(row["unnamed_files"], row["page"].split(" (")[0]) for row in rows if row["unnamed_files"]]
    count = sum(len(files) for files, _ in groups)
    if not count:
        return "Every result file records the commit of the code that made it."
    return (f"{count} result file{'s' if count != 1 else ''} record{'' if count != 1 else 's'} no commit: no file names the "
            "code that made them, only the history, by the commit that added each (`git log --diff-filter=A -- "
            "experiments/results/<file>`): "
            + "; ".join(", ".join(f"`{name}`" for name in files) + f" ({page})" for files, page in groups) + ".")


def others(names: list[str]) -> str:
    """A folder's files other than JSON: their names, or, more than 3, how many of each kind (``72 .gz, 13 .log``)."""
    if len(names) <= 3:
        return ", ".join(names)
    kinds = Counter("".join(Path(name).suffixes[-2:]) if name.endswith(".gz") else Path(name).suffix for name in names)
    return ", ".join(f"{count} {kind or 'without suffix'}" for kind, count in sorted(kinds.items(), key=lambda k: (-k[1], k[0])))


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| result folder | files | code (commit: files) | page | rebuilt by |", "|---|---|---|---|---|"]
    for row in rows:
        code = ", ".join(f"{commit}: {count}" for commit, count in sorted(row["commits"].items(), key=lambda c: (-c[1], c[0])))
        if row["unnamed"]:
            code += (", " if code else "") + f"none recorded: {row['unnamed']}"
        files = f"{row['files']} JSON" + (f" + {len(row['others'])} other ({others(row['others'])})" if row["others"] else "")
        command = row["command"] if row["command"].startswith(("(", "-")) else f"`{row['command']}`"
        lines.append(f"| `{row['folder']}/` | {files} | {code or '-'} | {row['page']} | {command} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "experiments" / "results")
    args = parser.parse_args(argv)
    rows = folder_rows(args.results)
    print(table(rows) + "\n\n" + unrecorded(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
