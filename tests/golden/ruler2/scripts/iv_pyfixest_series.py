# IV estimate of the effect of x on y with pyfixest; key numbers collected in a pandas Series.
import json
import sys

import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")

iv = pf.feols("y ~ controls | 0 | x ~ z", data=df, vcov="hetero")
fs = pf.feols("x ~ z + controls", data=df, vcov="hetero")
ols = pf.feols("y ~ x + controls", data=df, vcov="hetero")

summary = pd.Series(
    {
        "n_obs": len(df),
        "first_stage_coef_z": fs.coef()["z"],
        "first_stage_F": fs.tstat()["z"] ** 2,
        "iv_coef_x": iv.coef()["x"],
        "iv_se_x": iv.se()["x"],
        "iv_pvalue_x": iv.pvalue()["x"],
        "ols_coef_x": ols.coef()["x"],
    }
)
print("Key results (x instrumented by z; heteroskedasticity-robust SEs):")
print(summary.round(4))
print()
print(f"Bias of OLS relative to IV: {summary.ols_coef_x - summary.iv_coef_x:+.4f}")
print(f"ESTIMATE: {summary.iv_coef_x:.4f}")

# ---- golden truth (stderr) ----
shown = str(summary.round(4)).splitlines()


def shown_value(key: str) -> str:
    return next(x.split()[1] for x in shown if x.split() and x.split()[0] == key)


truth = {
    "style": "a pandas Series of key results printed with round(4) (n, first-stage coefficient and F, IV coefficient, SE, p-value, OLS), an OLS-minus-IV difference, then an ESTIMATE line",
    "value": f"{summary.iv_coef_x:.4f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": shown_value("iv_coef_x"), "anchor": "iv_coef_x"}],
    "decoys": [
        {"kind": "setup_constant", "printed": shown_value("n_obs"), "anchor": "n_obs"},
        {
            "kind": "first_stage",
            "printed": shown_value("first_stage_coef_z"),
            "anchor": "first_stage_coef_z",
        },
        {
            "kind": "first_stage_statistic",
            "printed": shown_value("first_stage_F"),
            "anchor": "first_stage_F",
        },
        {
            "kind": "naive_model_after_main",
            "printed": shown_value("ols_coef_x"),
            "anchor": "ols_coef_x",
        },
        {
            "kind": "arithmetic_operand",
            "printed": f"{summary.ols_coef_x - summary.iv_coef_x:+.4f}",
            "anchor": "Bias of OLS",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
