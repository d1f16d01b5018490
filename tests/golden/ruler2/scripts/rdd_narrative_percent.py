"""Does crossing the eligibility threshold change the outcome? A short written report."""

import json
import sys

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

CUTOFF = 0.5
BANDWIDTH = 0.3

df = pd.read_csv("data/scenario.csv")
df["dist"] = df["running_var"] - CUTOFF
local = df[df["near_cutoff"] == 1]

m = smf.ols("y ~ treated + dist + treated:dist", data=local).fit(cov_type="HC3")
jump, se = m.params["treated"], m.bse["treated"]
left_limit = m.params["Intercept"]  # fitted y just below the cutoff
right_limit = left_limit + jump
share = 100 * jump / left_limit

g = smf.ols("y ~ treated + dist + I(dist**2) + treated:dist + treated:I(dist**2)", data=df).fit(
    cov_type="HC3"
)
below_mean = df.loc[df.treated == 0, "y"].mean()
above_mean = df.loc[df.treated == 1, "y"].mean()

print("RESULTS")
print("=======")
print(
    f"Units are treated when the running variable is at least {CUTOFF}. Using the {len(local)}\n"
    f"observations within {BANDWIDTH} of the threshold and separate linear trends on each side,\n"
    f"crossing the threshold raises y by {jump:.3f} (HC3 SE {se:.3f}, p = {m.pvalues['treated']:.1e}).\n"
)
print(
    f"Just below the cutoff the fitted outcome is {left_limit:.3f}; just above it is\n"
    f"{right_limit:.3f}. The jump is therefore about {share:.0f}% of the level just below the threshold.\n"
)
print(
    f"A raw comparison of all treated and untreated units ({above_mean:.3f} vs {below_mean:.3f})\n"
    f"would suggest a gap of {above_mean - below_mean:.3f}, but that also reflects the slope of y in\n"
    "the running variable.\n"
)
print(
    f"Robustness: a global quadratic on the full sample (n = {len(df)}) gives {g.params['treated']:.3f}."
)
print(f"\nOur estimate of the effect at the threshold is {jump:.3f}.")
np.seterr(all="ignore")

# ---- golden truth (stderr) ----
truth = {
    "style": "written report in paragraphs: the jump in a sentence with HC3 SE and p in scientific notation, the two one-sided limits, the jump as a percent of the left limit, a raw gap, a global quadratic after, a closing sentence",
    "value": f"{jump:.3f}",
    "anchor": "crossing the threshold raises y by",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": f"{jump:.3f}", "anchor": "Our estimate of the effect"}],
    "decoys": [
        {
            "kind": "setup_constant",
            "printed": str(CUTOFF),
            "anchor": "treated when the running variable",
        },
        {"kind": "setup_constant", "printed": str(BANDWIDTH), "anchor": "observations within"},
        {
            "kind": "side_intercept",
            "printed": f"{left_limit:.3f}",
            "anchor": "Just below the cutoff",
        },
        {
            "kind": "side_intercept",
            "printed": f"{right_limit:.3f}",
            "anchor": "The jump is therefore",
        },
        {
            "kind": "percent_of_baseline",
            "printed": f"{share:.0f}",
            "anchor": "The jump is therefore",
        },
        {
            "kind": "naive_model_after_main",
            "printed": f"{above_mean - below_mean:.3f}",
            "anchor": "would suggest a gap of",
        },
        {
            "kind": "global_polynomial_after_main",
            "printed": f"{g.params['treated']:.3f}",
            "anchor": "global quadratic",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
