"""Experiment A (real-paper text agreement) and the RID pre-commitment ablation.

See ``docs/EXPERIMENT_A.md``. Records and the corpus: :mod:`~causalverify.papers.records`;
prompts: :mod:`~causalverify.papers.prompts`; scorers S1–S4: :mod:`~causalverify.papers.scorers`;
consensus labels: :mod:`~causalverify.papers.labels`; runs and the store:
:mod:`~causalverify.papers.run`, :mod:`~causalverify.papers.store`; analyses and the report
entry: :mod:`~causalverify.papers.analysis`, :mod:`~causalverify.papers.summary`; the human
audit: :mod:`~causalverify.papers.audit`; kappa and McNemar: :mod:`~causalverify.papers.stats`.
"""

from causalverify.papers.records import PaperRecord, load_papers
from causalverify.papers.run import run_judge, run_labels, run_papers, run_rid
from causalverify.papers.stats import cohen_kappa, mcnemar_exact
from causalverify.papers.summary import experiment_a_summary

__all__ = [
    "PaperRecord",
    "cohen_kappa",
    "experiment_a_summary",
    "load_papers",
    "mcnemar_exact",
    "run_judge",
    "run_labels",
    "run_papers",
    "run_rid",
]
