import pandas as pd

df = pd.read_csv("data/scenario.csv")
near = df[df.near_cutoff == 1]
above = near.loc[near.treated == 1, "y"].mean()
below = near.loc[near.treated == 0, "y"].mean()
print(f"Mean of y above the cutoff: {above:.4f}")
print(f"Mean of y below the cutoff: {below:.4f}")
print(f"RD estimate (difference in means within the bandwidth): {above - below:.4f}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(json.dumps({"estimate": round(float(above - below), 4), "others": []}) + "\n")
