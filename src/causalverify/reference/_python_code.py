"""How the reference agents' Python scripts print text, the estimate and its inference.

The code pieces of each design family live in its design module (``PYTHON_CODE``,
:mod:`causalverify.designs`).
"""

from __future__ import annotations

from causalverify.reference._code import Reporter

REPORTER = Reporter(
    print_text='print("{text}")',
    print_labelled='print(f"Estimated effect: {est:.10g}")',
    print_estimate='print(f"ESTIMATE: {est:.10g}")',
    mute_line='print("Model estimated; the fitted object is kept in `fit`.")\n',
    print_inference="""\
z = 1.959963984540054  # the 97.5% quantile of the standard normal
print(f"SE: {se:.10g}")
print(f"CI: [{est - z * se:.10g}, {est + z * se:.10g}]")
print(f"VCOV: {vcov_used}")""",
)
