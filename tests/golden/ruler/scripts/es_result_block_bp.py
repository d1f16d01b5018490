# Pooled market model; the answer is a boxed "Result" block in basis points per day
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
df["post"] = (df.event_day >= 0).astype(int)
hi = int(df.event_day.max())

mm = smf.ols("ret ~ mkt_ret", data=df[df.event_day < 0]).fit()
day0 = df[df.event_day == 0]
day0_ar = float((day0.ret - mm.predict(day0)).mean())
beta_txt = f"{mm.params['mkt_ret']:.4f}"
day0_txt = f"{day0_ar:.4f}"
print(f"Market beta (effect of the market return on stock returns): {beta_txt}")
print(f"Event-day effect (day 0 only): {day0_txt}")

res = smf.ols("ret ~ mkt_ret + post", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["stock_id"]}
)
b, se = res.params["post"], res.bse["post"]
main_txt = f"{1e4 * b:.2f}"
print()
print("=" * 52)
print(" Result")
print("=" * 52)
print(f" Quantity          : mean abnormal return, days 0..+{hi}")
print(f" Estimate (bp/day) : {main_txt}")
print(f" 95% CI (bp/day)   : [{1e4 * (b - 1.96 * se):.2f}, {1e4 * (b + 1.96 * se):.2f}]")
print(f" Stock-days used   : {len(df):,}")
print(" Confidence level  : 95%")
print("=" * 52)
naive = df.loc[df.post == 1, "ret"].mean() - df.loc[df.post == 0, "ret"].mean()
naive_txt = f"{1e4 * naive:.2f}"
print(f"Naive estimate (raw post minus pre mean return, bp/day): {naive_txt}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "value": main_txt,
            "anchor": "Estimate (bp/day)",
            "unit": {"scale": "basis_points", "window": None},
            "style": [
                "boxed multi-line Result block",
                "basis points in the label",
                "paper protocol",
            ],
            "decoys": [
                {"kind": "market_beta", "printed": beta_txt, "anchor": "Market beta"},
                {"kind": "day0_abnormal_return", "printed": day0_txt, "anchor": "Event-day effect"},
                {
                    "kind": "naive_model_after_main",
                    "printed": naive_txt,
                    "anchor": "Naive estimate",
                    "unit": {"scale": "basis_points", "window": None},
                },
            ],
            "equivalents": [],
        }
    )
    + "\n"
)
