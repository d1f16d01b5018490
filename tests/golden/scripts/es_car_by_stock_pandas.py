import pandas as pd

df = pd.read_csv("data/scenario.csv")
df["ar"] = df["ret"] - df["beta"] * df["mkt_ret"]
post = df[df["event_day"] >= 0]
car = post.groupby("stock_id")["ar"].sum().rename("CAR").reset_index()
print("CAR by stock:")
print(car.head())
print(car["CAR"].describe())
mean_ar = post["ar"].mean()
print(f"Mean CAR: {car['CAR'].mean():.6f}")
print(f"Average daily abnormal return (event window): {mean_ar:.6f}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(json.dumps({"estimate": round(float(mean_ar), 6), "others": []}) + "\n")
