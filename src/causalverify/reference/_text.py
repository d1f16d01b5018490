"""The prose of reference-agent answers: identification strategy and expected findings.

The text never uses the DGP's true effect or the canonical estimate: like a real model, an agent
only knows what the prompt tells it.
"""

from __future__ import annotations

from causalverify.families import Family

#: Section 1 for agents that use the correct design.
IDENTIFICATION: dict[Family, str] = {
    "did": (
        "Some units are exposed to the policy from a known period on and the others never are, "
        "and all units are observed before and after. I use a difference-in-differences design "
        "with two-way fixed effects: unit effects absorb permanent differences between units, "
        "period effects absorb shocks common to all units, and the coefficient on the "
        "treated-times-post indicator is the effect of the policy per period.\n\n"
        "Key assumptions: parallel trends (absent the policy, treated and comparison units would "
        "have evolved alike), no anticipation, and no spillovers between units."
    ),
    "event_study": (
        "Each stock is observed on trading days around the announcement. I use an event-study "
        "market model estimated on all stock-days: returns depend on the market return, and an "
        "indicator for event days 0 to +10 captures the average daily abnormal return in the "
        "event window.\n\n"
        "Key assumptions: the market model describes normal returns, the event date is not "
        "anticipated, and no other news clusters in the window."
    ),
    "iv": (
        "The explanatory variable is chosen by the units themselves, so an OLS regression would "
        "pick up unobserved confounders. The binary variable z shifts x for reasons unrelated to "
        "the outcome, so I use it as an instrument and estimate the effect by two-stage least "
        "squares, keeping the control variable as an exogenous regressor.\n\n"
        "Key assumptions: relevance (z moves x), exclusion (z affects y only through x), and "
        "independence of z from the unobserved determinants of y."
    ),
    "rdd": (
        "Treatment is assigned by a rule on the running variable: observations at or above the "
        "cutoff are treated. Units just either side of the cutoff are comparable, so I use a "
        "sharp regression discontinuity design: a local linear regression within the bandwidth "
        "marked in the data, with separate slopes on each side; the jump at the cutoff is the "
        "effect.\n\n"
        "Key assumptions: no precise manipulation of the running variable around the cutoff and "
        "continuity of potential outcomes at the cutoff."
    ),
}

#: Section 1 for the ``naive`` agent, which ignores the design's key adjustment.
NAIVE_IDENTIFICATION: dict[Family, str] = {
    "did": (
        "The policy applies to the treated units after it starts, so I compare average outcomes "
        "of treated and comparison units in the post-policy periods. The difference is the "
        "effect, provided both groups are otherwise similar."
    ),
    "event_study": (
        "The announcement should move returns in the days after it, so I measure each stock's "
        "return relative to its own average return over the window and average that excess on "
        "event days 0 to +10. The stock's average serves as its normal return."
    ),
    "iv": (
        "I estimate how the outcome responds to x with a linear regression of y on x, holding "
        "the control variable fixed. With a large sample the OLS slope is a precise estimate of "
        "the effect."
    ),
    "rdd": (
        "Some observations are treated and others are not, so I compare the mean outcome of "
        "treated and untreated observations over the whole sample. The difference in means is "
        "the effect of treatment."
    ),
}

EXPECTED: dict[Family, str] = {
    "did": (
        "I expect a modest effect per period, of the sign suggested by the research question, "
        "small relative to the spread of the outcome; the script prints the point estimate and "
        "its standard errors."
    ),
    "event_study": (
        "I expect a daily abnormal return of a few tenths of a percentage point to a few "
        "percentage points, of the sign suggested by the research question; the script prints "
        "the estimate."
    ),
    "iv": (
        "I expect an effect of the sign suggested by the research question and of moderate "
        "size, with a strong first stage; the script prints the estimate."
    ),
    "rdd": (
        "I expect a visible jump at the cutoff, of the sign suggested by the research question "
        "and of moderate size relative to the outcome's spread; the script prints the estimate."
    ),
}

#: Section 2 of the ``prose`` agent: how it would do the analysis, without any code.
PROSE_PLAN: dict[Family, str] = {
    "did": (
        "I would regress the outcome on the treated-times-post indicator with unit and period "
        "fixed effects, cluster standard errors by unit, and check pre-trends with leads of the "
        "treatment indicator."
    ),
    "event_study": (
        "I would fit a market model of returns on the market return with an indicator for event "
        "days 0 to +10, cluster standard errors by stock, and report the daily abnormal return."
    ),
    "iv": (
        "I would run two-stage least squares of y on x instrumented by z with the control as an "
        "exogenous regressor, report robust standard errors and the first-stage F statistic."
    ),
    "rdd": (
        "I would fit a local linear regression on observations within the bandwidth, with "
        "separate slopes on each side of the cutoff, and vary the bandwidth as a robustness check."
    ),
}


# the modern designs (the suite of designs where the textbook regression is wrong)
IDENTIFICATION.update(
    {
        "staggered_did": (
            "Units adopt the policy in different periods and some never do, and the effect may "
            "differ by adoption cohort and grow with time since adoption. A single two-way "
            "fixed-effects regression would compare late adopters with early adopters whose "
            "effects are still changing, so I estimate each cohort's effect in each period "
            "after adoption against the never-adopting units, relative to the period just before "
            "the cohort adopted, and average these group-time effects over all adopting "
            "unit-periods.\n\n"
            "Key assumptions: without the policy, each cohort would have evolved like the "
            "never-adopting units, and no unit changed its outcome in anticipation."
        ),
        "fuzzy_rdd": (
            "Being offered the programme switches at the cutoff of the running variable, but "
            "taking part does not follow the offer exactly. The jump in the outcome at the "
            "cutoff is therefore diluted; dividing it by the jump in participation gives the "
            "effect of taking part. I fit both jumps with separate linear slopes on each side of "
            "the cutoff inside the marked window, using the offer to predict participation.\n\n"
            "Key assumptions: units cannot sort precisely around the cutoff, the offer affects "
            "the outcome only through participation, and nobody takes part because they were "
            "not offered."
        ),
        "synthetic_control": (
            "Only one unit adopted the policy, and no single other unit, nor their plain average, "
            "tracks it before adoption. I build a weighted combination of the other units, with "
            "non-negative weights summing to one chosen to match the adopting unit's outcome in "
            "every period before adoption; after adoption, the gap between the unit and this "
            "weighted comparison is the effect, averaged over the post-adoption periods.\n\n"
            "Key assumptions: the weighted comparison would have kept tracking the unit without "
            "the policy, and the other units were not affected by it."
        ),
    }
)
NAIVE_IDENTIFICATION.update(
    {
        "staggered_did": (
            "Units are observed before and after they adopt the policy, so I regress the outcome "
            "on the adoption indicator with unit and period effects; its coefficient is the "
            "effect of the policy."
        ),
        "fuzzy_rdd": (
            "The programme is offered at the cutoff, so I compare outcomes just above and below "
            "it with separate slopes on each side; the jump at the cutoff is the effect."
        ),
        "synthetic_control": (
            "The other units never adopted the policy, so their average is the comparison: the "
            "effect is the gap between the adopting unit and that average after adoption."
        ),
    }
)
EXPECTED.update(
    {
        "staggered_did": (
            "I expect the effect to be larger for units that have had the policy longer; the "
            "average over adopting unit-periods summarises it."
        ),
        "fuzzy_rdd": (
            "I expect a clear jump in participation at the cutoff and an effect of taking part "
            "larger than the jump in the outcome itself."
        ),
        "synthetic_control": (
            "I expect the weighted comparison to track the unit closely before adoption and the "
            "gap to open after it."
        ),
    }
)
PROSE_PLAN.update(
    {
        "staggered_did": (
            "I would compare each adoption cohort with the never-adopting units, period by "
            "period after adoption, relative to the period before adoption, and average the "
            "results over all adopting unit-periods."
        ),
        "fuzzy_rdd": (
            "I would fit the jump in the outcome and the jump in participation at the cutoff "
            "within the window, and divide the first by the second."
        ),
        "synthetic_control": (
            "I would weight the other units to match the adopting unit before adoption and "
            "average the gap after adoption."
        ),
    }
)
