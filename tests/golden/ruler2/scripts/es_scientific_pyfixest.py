# Abnormal return after the announcement: pooled OLS with pyfixest, stock-clustered SEs.
import json
import sys

import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
df["post_event"] = (df["event_day"] >= 0).astype(int)
df["day0"] = (df["event_day"] == 0).astype(int)
N_STOCKS = df["stock_id"].nunique()
WINDOW = (0, 10)

fit = pf.feols("ret ~ mkt_ret + post_event", data=df, vcov={"CRV1": "stock_id"})
fit.summary()

ar = fit.coef()["post_event"]
se = fit.se()["post_event"]
car = ar * (WINDOW[1] - WINDOW[0] + 1)

# day-0 only and a pre-event placebo, both market-adjusted the same way
d0 = pf.feols("ret ~ mkt_ret + day0", data=df[df.event_day <= 0], vcov={"CRV1": "stock_id"})
pre = df[df.event_day < 0].assign(fake=lambda x: (x.event_day >= -3).astype(int))
plc = pf.feols("ret ~ mkt_ret + fake", data=pre, vcov={"CRV1": "stock_id"})

print()
print(f"stocks                    : {N_STOCKS}")
print(f"post-event window         : days {WINDOW[0]} to {WINDOW[1]}")
print(f"beta (market)             : {fit.coef()['mkt_ret']:.4e}")
print(f"AR per day (post_event)   : {ar:.4e}  (se {se:.2e})")
print(f"CAR{WINDOW}                : {car:.4e}")
print(f"day-0 AR                  : {d0.coef()['day0']:.4e}")
print(f"placebo AR, days -3..-1   : {plc.coef()['fake']:.4e}")
print(f"ESTIMATE: {ar:.4e}")

# ---- golden truth (stderr) ----
table = fit.tidy()
truth = {
    "style": "pyfixest summary() table, then an aligned key : value block in scientific notation (beta, AR per day, CAR tuple, day-0 AR, placebo), then an ESTIMATE line in scientific notation",
    "value": f"{ar:.4e}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [
        {"printed": f"{ar:.4e}", "anchor": "AR per day (post_event)"},
        {
            "printed": f"{car:.4e}",
            "anchor": "CAR(",
            "unit": {"scale": "as_printed", "window": list(WINDOW)},
        },
        {"printed": f"{table.loc['post_event', 'Estimate']:.3f}", "anchor": "| post_event"},
    ],
    "decoys": [
        {"kind": "setup_constant", "printed": str(N_STOCKS), "anchor": "stocks  "},
        {"kind": "setup_constant", "printed": str(WINDOW[1]), "anchor": "post-event window"},
        {
            "kind": "market_beta",
            "printed": f"{fit.coef()['mkt_ret']:.4e}",
            "anchor": "beta (market)",
        },
        {
            "kind": "market_beta",
            "printed": f"{table.loc['mkt_ret', 'Estimate']:.3f}",
            "anchor": "| mkt_ret",
        },
        {
            "kind": "day0_abnormal_return",
            "printed": f"{d0.coef()['day0']:.4e}",
            "anchor": "day-0 AR",
        },
        {"kind": "placebo_window", "printed": f"{plc.coef()['fake']:.4e}", "anchor": "placebo AR"},
    ],
}
print(json.dumps(truth), file=sys.stderr)
