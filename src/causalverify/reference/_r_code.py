"""How the reference agents' R scripts print text, the estimate and its inference.

The code pieces of each design family live in its design module (``R_CODE``,
:mod:`causalverify.designs`).
"""

from __future__ import annotations

from causalverify.reference._code import Reporter

REPORTER = Reporter(
    print_text='cat("{text}\\n")',
    print_labelled='cat(sprintf("Estimated effect: %.10g\\n", est))',
    print_estimate='cat(sprintf("ESTIMATE: %.10g\\n", est))',
    mute_line='cat("Model estimated; the fitted object is kept in `fit`.\\n")\n',
    print_inference="""\
cat(sprintf("SE: %.10g\\n", se))
cat(sprintf("CI: [%.10g, %.10g]\\n", est - qnorm(0.975) * se, est + qnorm(0.975) * se))
cat(sprintf("VCOV: %s\\n", vcov_used))""",
)
