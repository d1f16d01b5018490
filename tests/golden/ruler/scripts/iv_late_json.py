# 2SLS with linearmodels; one compact JSON line with a LATE key
import json

import numpy as np
import pandas as pd
from linearmodels.iv import IV2SLS

df = pd.read_csv("data/scenario.csv")
SEED, LEVEL = 42, 0.95
iv = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
fs = IV2SLS.from_formula("x ~ 1 + z + controls", data=df).fit(cov_type="robust")
ols = IV2SLS.from_formula("y ~ 1 + x + controls", data=df).fit(cov_type="robust")

# a small pairs bootstrap of the first-stage coefficient (seeded)
rng = np.random.default_rng(SEED)
Z = np.column_stack([np.ones(len(df)), df.z, df.controls])
boot = [
    np.linalg.lstsq(Z[i], df.x.to_numpy()[i], rcond=None)[0][1]
    for i in (rng.integers(0, len(df), len(df)) for _ in range(100))
]
lo, hi = iv.conf_int(level=LEVEL).loc["x"]
out = {
    "config": {"confidence_level": LEVEL, "seed": SEED, "n": int(iv.nobs), "bootstrap_reps": 100},
    "first_stage": {
        "effect_of_z_on_x": round(float(fs.params["z"]), 4),
        "boot_se": round(float(np.std(boot, ddof=1)), 4),
        "F": round(float(fs.tstats["z"] ** 2), 1),
    },
    "LATE": {
        "estimate": round(float(iv.params["x"]), 4),
        "se": round(float(iv.std_errors["x"]), 4),
        "ci": [round(float(lo), 4), round(float(hi), 4)],
    },
    "ols": {"estimate": round(float(ols.params["x"]), 4)},
}
print(json.dumps(out))
est_txt = f"{float(iv.params['x']):.5f}"
print(f"ESTIMATE: {est_txt}")
# ---- golden truth (stderr) ----
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "value": est_txt,
            "anchor": "ESTIMATE:",
            "unit": {"scale": "as_printed", "window": None},
            "style": ["single-line compact JSON", "LATE key", "ESTIMATE line"],
            "decoys": [
                {
                    "kind": "first_stage",
                    "printed": str(out["first_stage"]["effect_of_z_on_x"]),
                    "anchor": '"effect_of_z_on_x"',
                },
                {
                    "kind": "naive_model_after_main",
                    "printed": str(out["ols"]["estimate"]),
                    "anchor": '"ols"',
                },
                {"kind": "setup_constant", "printed": str(SEED), "anchor": '"seed"'},
                {"kind": "setup_constant", "printed": str(LEVEL), "anchor": '"confidence_level"'},
            ],
            "equivalents": [
                {
                    "printed": str(out["LATE"]["estimate"]),
                    "anchor": '"LATE"',
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
