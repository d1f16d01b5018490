# Discontinuity at three bandwidths with pyfixest, effects in percent; '*' marks the preferred one
import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
df["rc"] = df.running_var - 0.5
samples = {
    "local linear h=0.30 *": df[df.near_cutoff == 1],
    "local linear h=0.15": df[df.rc.abs() <= 0.15],
    "local linear h=0.45": df[df.rc.abs() <= 0.45],
}
rows = []
for name, sub in samples.items():
    fit = pf.feols("y ~ treated * rc", data=sub, vcov="HC3")
    rows.append(
        {
            "spec": name,
            "effect_pct": round(100 * float(fit.coef()["treated"]), 2),
            "se_pct": round(100 * float(fit.se()["treated"]), 2),
            "n": len(sub),
        }
    )
table = pd.DataFrame(rows)
print("Jump in y at running_var = 0.5, in percent of one unit of y (x100)")
print(table.to_string(index=False))
print("* preferred specification (bandwidth 0.30, uniform kernel, linear on each side)")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402


def shown(i):
    return f"{table.effect_pct[i]:.2f}"


sys.stderr.write(
    json.dumps(
        {
            "value": shown(0),
            "anchor": "h=0.30 *",
            "unit": {"scale": "percent", "window": None},
            "style": [
                "DataFrame.to_string",
                "unit only in the column name (effect_pct)",
                "preferred row marked with '*'",
                "paper protocol",
            ],
            "decoys": [
                {
                    "kind": "other_bandwidth",
                    "printed": shown(1),
                    "anchor": "h=0.15",
                    "unit": {"scale": "percent", "window": None},
                },
                {
                    "kind": "other_bandwidth",
                    "printed": shown(2),
                    "anchor": "h=0.45",
                    "unit": {"scale": "percent", "window": None},
                },
                {
                    "kind": "setup_constant",
                    "printed": "0.30",
                    "anchor": "* preferred specification",
                },
            ],
            "equivalents": [],
        }
    )
    + "\n"
)
