"""CausalVerify for Inspect AI (the ``causalverify[inspect]`` extra).

- the task ``causalverify/causalverify`` (:func:`causalverify_task`): one sample per scenario of a
  suite, whose input is CausalVerify's own prompt and whose target (never shown to the model) is
  the canonical estimate; the solver generates (in repair mode, again after feedback);
- the scorer :func:`causalverify_scorer`: the answer is run exactly as a benchmark cell
  (:func:`causalverify.runner.cell.execute`: code taken, parsed, executed in the bubblewrap
  sandbox, the estimate extracted and scored) and scored L1 / L2a / L2b / L2b+ as one dict, with
  a mean for each layer, counted as the report counts them (an unscoreable cell's L2b+ is NaN,
  Inspect's "no score", so it is left out of the mean and not averaged in as 0); the cell record
  travels in the score's metadata;
- the sandbox ``causalverify`` (:mod:`causalverify.inspect_eval.sandbox`) for other tasks;
- :func:`log_to_run`: an Inspect log as a CausalVerify run folder (``causalverify
  import-inspect``), so report, analyze and freeze apply; logs of several models join one folder
  (:mod:`causalverify.inspect_eval.convert`);
- ``-T mode=repair -T max_turns=K``: the task asks again after execution feedback, as
  ``causalverify run --mode repair`` does (:func:`causalverify.inspect_eval.task.repair_solver`);
- the models ``causalverify/<agent>``: the offline reference agents, for runs without network or
  key (:mod:`causalverify.inspect_eval.reference_model`).

The task, the sandbox and the models are registered through Inspect's ``inspect_ai`` entry point
(``causalverify.inspect_eval._registry``).
"""

from __future__ import annotations

from causalverify.inspect_eval.convert import import_log, log_to_run
from causalverify.inspect_eval.task import causalverify_scorer, causalverify_task

__all__ = ["causalverify_scorer", "causalverify_task", "import_log", "log_to_run"]
