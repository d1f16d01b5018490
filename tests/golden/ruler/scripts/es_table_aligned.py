# Average abnormal return by event day (aligned table), then the pooled result
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
df["post"] = (df.event_day >= 0).astype(int)
df["ar"] = df.ret - df.beta * df.mkt_ret
by_day = df.groupby("event_day")["ar"].agg(["mean", "std", "count"])
by_day["t"] = by_day["mean"] / (by_day["std"] / by_day["count"] ** 0.5)

print(f"{'day':>5} {'AAR':>10} {'t':>7} {'stocks':>7}")
print("-" * 32)
rows = {}
for day, r in by_day.iterrows():
    rows[day] = f"{r['mean']:.5f}"
    print(f"{day:>5d} {rows[day]:>10} {r['t']:>7.2f} {int(r['count']):>7d}")
print("-" * 32)

res = smf.ols("ret ~ mkt_ret + post", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["stock_id"]}
)
b = res.params["post"]
hi = int(df.event_day.max())
main_txt = f"{b:.6f}"
print(f"Average abnormal return per day over days 0..+{hi} (pooled market model): {main_txt}")
print(f"  clustered SE {res.bse['post']:.6f}; market beta {res.params['mkt_ret']:.4f}")
print(f"  implied CAR[0,+{hi}]: {(hi + 1) * b:.5f}")
est_txt = f"{b:.6f}"
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
            "style": ["aligned fixed-width text table by event day", "ESTIMATE line"],
            "decoys": [
                {"kind": "day0_abnormal_return", "printed": rows[0], "anchor": ["AAR", "    0 "]},
                {
                    "kind": "market_beta",
                    "printed": f"{res.params['mkt_ret']:.4f}",
                    "anchor": "market beta",
                },
            ],
            "equivalents": [
                {
                    "printed": main_txt,
                    "anchor": "Average abnormal return per day",
                    "unit": {"scale": "as_printed", "window": None},
                },
                {
                    "printed": f"{(hi + 1) * b:.5f}",
                    "anchor": "implied CAR",
                    "unit": {"scale": "as_printed", "window": [0, hi]},
                },
            ],
        }
    )
    + "\n"
)
