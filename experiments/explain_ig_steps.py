"""How many integrated-gradients steps the explainability study needs: attributions with 10, 20 and 50
Gauss–Legendre steps against 200, on every 40th test sentence of one run (with-agent mode, as DRGA reports).

    OMP_NUM_THREADS=1 python experiments/explain_ig_steps.py runs/explain/mr-lstm-sa-seed0/cotrain_best.pt
"""

from __future__ import annotations

import argparse

import checkout  # noqa: F401  (first: this checkout's drga)
import numpy as np

from drga.analysis import faithfulness
from drga.analysis.attention import load_inputs
from drga.analysis.stats import kendall_tau


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint")
    args = parser.parse_args()
    inputs = load_inputs(args.checkpoint, split="test")
    model = inputs.model
    indices = list(range(5, len(inputs.examples), 40))
    rows = {
        steps: faithfulness.faithfulness_rows(model.network, inputs.examples, indices, model.policy, inputs.beta, steps=steps,
                                              modes=["with-agent"])
        for steps in (10, 20, 50, 200)
    }
    ig = lambda row: row.scores["integrated_gradients"]
    for steps in (10, 20, 50):
        taus = [kendall_tau(ig(a), ig(b)) for a, b in zip(rows[steps], rows[200])]
        gap = max(abs(sum(ig(a)) - sum(ig(b))) for a, b in zip(rows[steps], rows[200]))
        aopc = np.mean([r.aopc("comprehensiveness", "integrated_gradients") for r in rows[steps]])
        print(f"{steps} steps, {len(indices)} sentences: Kendall τ with 200 steps mean {np.nanmean(taus):.3f}, min {np.nanmin(taus):.3f}; "
              f"largest gap of Σ IG {gap:.3f}; comprehensiveness AOPC of the IG ranking {aopc:.3f}")
    aopc = np.mean([r.aopc("comprehensiveness", "integrated_gradients") for r in rows[200]])
    print(f"200 steps: comprehensiveness AOPC of the IG ranking {aopc:.3f}")


if __name__ == "__main__":
    main()
