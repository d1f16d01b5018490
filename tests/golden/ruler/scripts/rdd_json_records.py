# Bandwidth sensitivity as JSON records (pandas to_json), preferred one flagged
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
df["rc"] = df.running_var - 0.5
records = []
for h in (0.15, 0.3, 0.45):
    sub = df[df.near_cutoff == 1] if h == 0.3 else df[df.rc.abs() <= h]
    fit = smf.ols("y ~ treated * rc", data=sub).fit(cov_type="HC3")
    records.append(
        {
            "bandwidth": h,
            "estimate": round(float(fit.params["treated"]), 5),
            "se": round(float(fit.bse["treated"]), 5),
            "n": len(sub),
            "preferred": h == 0.3,
        }
    )
frame = pd.DataFrame(records)
print(frame.to_json(orient="records", indent=1))
est = frame.loc[frame.preferred, "estimate"].iloc[0]
est_txt = f"{est:.5f}"
print(f"ESTIMATE: {est_txt}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "value": est_txt,
            "anchor": "ESTIMATE:",
            "unit": {"scale": "as_printed", "window": None},
            "style": [
                "pandas to_json records",
                "preferred flag as a boolean field",
                "ESTIMATE line",
            ],
            "decoys": [
                {
                    "kind": "other_bandwidth",
                    "printed": str(records[0]["estimate"]),
                    "anchor": ['"bandwidth":0.15', '"estimate"'],
                },
                {
                    "kind": "other_bandwidth",
                    "printed": str(records[2]["estimate"]),
                    "anchor": ['"bandwidth":0.45', '"estimate"'],
                },
            ],
            "equivalents": [
                {
                    "printed": str(records[1]["estimate"]),
                    "anchor": ['"bandwidth":0.3', '"estimate"'],
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
