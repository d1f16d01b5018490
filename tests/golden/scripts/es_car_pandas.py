import pandas as pd

df = pd.read_csv("data/scenario.csv")
df["ar"] = df["ret"] - df["beta"] * df["mkt_ret"]
daily = df.groupby("event_day", as_index=False)["ar"].mean()
print(daily.to_string(index=False))
car = daily.loc[daily.event_day >= 0, "ar"].sum()
print(f"CAR(0,10): {car:.6f}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(json.dumps({"estimate": round(float(car), 6), "others": []}) + "\n")
