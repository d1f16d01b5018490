# Adoption effect with pyfixest; everything reported as one JSON document
import json

import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
start = int(df.loc[df.treat_x_post == 1, "period"].min())
SEED = 2024

twfe = pf.feols("y ~ treat_x_post | unit_id + period", data=df, vcov={"CRV1": "unit_id"})
pooled = pf.feols("y ~ treat_x_post", data=df, vcov={"CRV1": "unit_id"})
# leads: adopters two and one periods before adoption, relative to earlier pre-periods
pre = df[df.period < start].copy()
pre["lead_2"] = ((pre.period == start - 2) & (pre.treated == 1)).astype(int)
pre["lead_1"] = ((pre.period == start - 1) & (pre.treated == 1)).astype(int)
leads = pf.feols("y ~ lead_2 + lead_1 | unit_id + period", data=pre, vcov={"CRV1": "unit_id"})


def r5(v):
    return round(float(v), 5)


out = {
    "setup": {
        "seed": SEED,
        "cluster": "unit_id",
        "n_obs": len(df),
        "treatment_start": start,
        "conf_level": 0.95,
    },
    "estimates": {
        "twfe": {"att": r5(twfe.coef()["treat_x_post"]), "se": r5(twfe.se()["treat_x_post"])},
        "pooled_ols": {
            "att": r5(pooled.coef()["treat_x_post"]),
            "se": r5(pooled.se()["treat_x_post"]),
        },
        "pre_trend_lead_1": {"att": r5(leads.coef()["lead_1"]), "se": r5(leads.se()["lead_1"])},
    },
    "preferred": "twfe",
}
print(json.dumps(out, indent=4))
est_txt = f"{float(twfe.coef()['treat_x_post']):.4f}"
print(f"ESTIMATE: {est_txt}")
# ---- golden truth (stderr) ----
import sys  # noqa: E402

e = out["estimates"]
sys.stderr.write(
    json.dumps(
        {
            "value": est_txt,
            "anchor": "ESTIMATE:",
            "unit": {"scale": "as_printed", "window": None},
            "style": ["indented JSON document", "preferred model named by key", "ESTIMATE line"],
            "decoys": [
                {
                    "kind": "naive_model_after_main",
                    "printed": str(e["pooled_ols"]["att"]),
                    "anchor": ['"pooled_ols"', '"att"'],
                },
                {
                    "kind": "placebo_lead",
                    "printed": str(e["pre_trend_lead_1"]["att"]),
                    "anchor": ['"pre_trend_lead_1"', '"att"'],
                },
                {"kind": "setup_constant", "printed": str(SEED), "anchor": '"seed"'},
                {"kind": "setup_constant", "printed": str(start), "anchor": '"treatment_start"'},
            ],
            "equivalents": [
                {
                    "printed": str(e["twfe"]["att"]),
                    "anchor": ['"twfe"', '"att"'],
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
