"""Size of the jump at the threshold from two one-sided local linear fits (numpy only)."""

import json
import logging
import sys

import numpy as np
import pandas as pd

logging.basicConfig(
    level=logging.INFO, stream=sys.stdout, format="%(levelname)s:%(name)s:%(message)s"
)
log = logging.getLogger("rd")

C = 0.5
H = 0.3
DONUT = 0.02

data = pd.read_csv("data/scenario.csv")
log.info("cutoff=%.2f bandwidth=%.2f donut=%.2f n=%d", C, H, DONUT, len(data))


def side_fit(frame: pd.DataFrame) -> tuple[float, float, float]:
    """Intercept at the cutoff, slope and the intercept's HC3 variance of y on (running_var - C)."""
    X = np.column_stack([np.ones(len(frame)), frame["running_var"] - C])
    y = frame["y"].to_numpy()
    XtX_inv = np.linalg.inv(X.T @ X)
    beta = XtX_inv @ X.T @ y
    e = y - X @ beta
    hat = np.einsum("ij,jk,ik->i", X, XtX_inv, X)
    meat = X.T @ (X * (e / (1 - hat))[:, None] ** 2)
    V = XtX_inv @ meat @ XtX_inv
    return beta[0], beta[1], V[0, 0]


def jump(frame: pd.DataFrame) -> tuple[float, float, float, float]:
    a_l, _, v_l = side_fit(frame[frame.running_var < C])
    a_r, _, v_r = side_fit(frame[frame.running_var >= C])
    return a_r - a_l, np.sqrt(v_l + v_r), a_l, a_r


window = data[data.near_cutoff == 1]
tau, se, left, right = jump(window)
log.info(
    "left limit  (running_var -> 0.5 from below): %.4f  [n=%d]",
    left,
    (window.running_var < C).sum(),
)
log.info(
    "right limit (running_var -> 0.5 from above): %.4f  [n=%d]",
    right,
    (window.running_var >= C).sum(),
)
log.info("discontinuity = %.4f - %.4f = %.4f (HC3 SE %.4f)", right, left, tau, se)

donut = window[np.abs(window.running_var - C) > DONUT]
tau_d, se_d, _, _ = jump(donut)
log.info("donut check (drop |running_var - 0.5| <= %.2f): %.4f (SE %.4f)", DONUT, tau_d, se_d)
print(f"ESTIMATE: {tau:.4f}")

# ---- golden truth (stderr) ----
truth = {
    "style": "logging lines with a named logger (INFO:rd:...): setup constants, the two one-sided limits, the discontinuity as a written subtraction, a donut check after, then an ESTIMATE line",
    "value": f"{tau:.4f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": f"{tau:.4f}", "anchor": "discontinuity ="}],
    "decoys": [
        {"kind": "setup_constant", "printed": f"{C:.2f}", "anchor": "cutoff="},
        {"kind": "setup_constant", "printed": f"{H:.2f}", "anchor": "cutoff="},
        {"kind": "side_intercept", "printed": f"{left:.4f}", "anchor": "left limit"},
        {"kind": "side_intercept", "printed": f"{right:.4f}", "anchor": "right limit"},
        {"kind": "arithmetic_operand", "printed": f"{right:.4f}", "anchor": "discontinuity ="},
        {"kind": "robustness_later_fit", "printed": f"{tau_d:.4f}", "anchor": "donut check"},
    ],
}
print(json.dumps(truth), file=sys.stderr)
