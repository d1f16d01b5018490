"""Applied-economics topics the scenario texts are written over (at least 15 per family).

A topic supplies only nouns and phrases; the sentences that carry the checked facts (timing,
cutoff, coding, columns) live in :mod:`causalverify.scenarios.text`. Outcomes are described as
standardised indices because the generated values are on an arbitrary scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class DidTopic:
    """A policy adopted by half of a panel of units from one period on."""

    title: str
    unit: str
    units: str
    period: str
    policy: str
    adopted: str
    outcome: str


@dataclass(frozen=True)
class EsTopic:
    """A dated corporate or market event hitting a set of stocks."""

    title: str
    firms: str
    event: str


@dataclass(frozen=True)
class IvTopic:
    """An endogenous exposure ``x`` shifted by a binary circumstance ``z``."""

    title: str
    unit: str
    units: str
    x: str
    z_condition: str
    y: str
    background: str


@dataclass(frozen=True)
class RddTopic:
    """A program assigned by a score threshold."""

    title: str
    unit: str
    units: str
    score: str
    program: str
    outcome: str


# fmt: off
DID_TOPICS: Final[tuple[DidTopic, ...]] = (
    DidTopic("Minimum wage increases and teen employment", "county", "counties", "quarter", "a minimum wage increase", "raised the local minimum wage", "teen employment rate"),
    DidTopic("Universal free school meals and attendance", "school district", "school districts", "term", "universal free school meals", "introduced free meals for all pupils", "pupil attendance rate"),
    DidTopic("Broadband rollout and small-business formation", "municipality", "municipalities", "year", "fibre broadband availability", "received fibre broadband", "rate of new business registrations"),
    DidTopic("Paid family leave and maternal labour supply", "county", "counties", "year", "a paid family leave mandate", "introduced paid family leave", "employment rate of mothers of infants"),
    DidTopic("Soda taxes and sugary-drink purchases", "city", "cities", "quarter", "a sugar-sweetened beverage tax", "levied a tax on sugary drinks", "per-capita sugary-drink purchases"),
    DidTopic("Ride-hailing entry and drunk-driving crashes", "metropolitan area", "metropolitan areas", "quarter", "the entry of ride-hailing services", "saw ride-hailing services launch", "alcohol-related crash rate"),
    DidTopic("Medicaid expansion and uncompensated hospital care", "hospital market", "hospital markets", "year", "an expansion of public health insurance", "expanded public health insurance eligibility", "uncompensated care costs of hospitals"),
    DidTopic("Ban-the-box laws and callback rates", "city", "cities", "half-year", "a ban on criminal-history questions in job applications", "banned criminal-history questions on job applications", "callback rate of job applicants"),
    DidTopic("Congestion charging and retail footfall", "shopping district", "shopping districts", "month", "a congestion charge", "introduced a congestion charge", "retail footfall"),
    DidTopic("Rent control and residential mobility", "neighbourhood", "neighbourhoods", "year", "rent control", "adopted rent control", "tenant turnover rate"),
    DidTopic("Mobile-money access and household savings", "village", "villages", "season", "mobile-money agents", "gained a mobile-money agent", "household savings"),
    DidTopic("Later school start times and test scores", "school", "schools", "term", "a later school start time", "moved the school day to start later", "average maths test score"),
    DidTopic("Plastic bag fees and litter", "town", "towns", "quarter", "a plastic bag fee", "introduced a plastic bag fee", "measured litter density"),
    DidTopic("Right-to-carry laws and violent crime", "county", "counties", "year", "a right-to-carry firearms law", "enacted a right-to-carry law", "violent crime rate"),
    DidTopic("Electronic health records and hospital readmissions", "hospital", "hospitals", "quarter", "an electronic health record system", "switched to electronic health records", "30-day readmission rate"),
    DidTopic("Agricultural extension services and crop yields", "district", "districts", "season", "an agricultural extension programme", "started an agricultural extension programme", "maize yield per hectare"),
    DidTopic("Public transit expansion and commuting time", "suburb", "suburbs", "year", "a new light-rail line", "was connected to a new light-rail line", "average commuting time"),
    DidTopic("Occupational licensing reform and entry", "county", "counties", "year", "a relaxation of occupational licensing", "relaxed local licensing rules for hairdressers", "number of new licensed practitioners"),
)

ES_TOPICS: Final[tuple[EsTopic, ...]] = (
    EsTopic("Stock-price reactions to earnings surprises", "listed firms", "an earnings announcement that differed from analyst forecasts"),
    EsTopic("How markets price CEO turnover", "listed firms", "the announcement of an unexpected chief-executive departure"),
    EsTopic("Index inclusion and share prices", "stocks", "the announcement that the stock will join a major equity index"),
    EsTopic("Dividend initiations and shareholder value", "listed firms", "the first-ever dividend announcement of the firm"),
    EsTopic("Credit-rating changes and equity prices", "rated firms", "a change in the firm's credit rating by a major agency"),
    EsTopic("Share buyback announcements", "listed firms", "the announcement of an open-market share repurchase programme"),
    EsTopic("Acquirer returns in corporate takeovers", "acquiring firms", "the announcement of a takeover bid for another company"),
    EsTopic("Product recalls and firm value", "consumer-goods firms", "the announcement of a large product recall"),
    EsTopic("Data-breach disclosures and share prices", "listed firms", "the public disclosure of a customer data breach"),
    EsTopic("Drug-approval decisions and biotech valuations", "biotechnology firms", "a regulator's decision on the firm's drug application"),
    EsTopic("Auditor changes and investor reactions", "listed firms", "the announcement that the firm replaced its external auditor"),
    EsTopic("Activist investor stakes", "target firms", "the disclosure that an activist investor acquired a large stake"),
    EsTopic("Seasoned equity offerings", "listed firms", "the announcement of a new share issue"),
    EsTopic("Stock splits and share prices", "listed firms", "the announcement of a stock split"),
    EsTopic("Regulatory fines and bank valuations", "listed banks", "the announcement of a regulatory fine against the bank"),
    EsTopic("Patent grants and technology-firm value", "technology firms", "the grant of a major patent to the firm"),
    EsTopic("Environmental lawsuits and firm value", "industrial firms", "the filing of an environmental lawsuit against the firm"),
    EsTopic("Government contract awards", "defence and construction firms", "the announcement of a large government contract award"),
)

IV_TOPICS: Final[tuple[IvTopic, ...]] = (
    IvTopic("Schooling and wages: evidence from college proximity", "worker", "workers", "years of schooling (standardised)", "the worker grew up within 15 miles of a four-year college", "log hourly wage (standardised)", "parental-background index"),
    IvTopic("Farm income and child schooling in rain-fed regions", "household", "households", "agricultural income (standardised)", "growing-season rainfall in the household's district was above its long-run median", "children's school attendance index", "household-head age (standardised)"),
    IvTopic("Charter-school attendance and achievement", "student", "students", "years enrolled in a charter school (standardised)", "the student won the charter school's admission lottery", "maths test score (standardised)", "prior-year reading score (standardised)"),
    IvTopic("Military service and civilian earnings", "man", "men", "years of military service (standardised)", "the man received a low draft-lottery number", "civilian earnings index", "birth-cohort size (standardised)"),
    IvTopic("Family size and mothers' labour supply", "mother", "mothers", "number of children (standardised)", "the mother's first two children are of the same sex", "annual hours worked (standardised)", "mother's age at first birth (standardised)"),
    IvTopic("Incarceration length and later employment", "defendant", "defendants", "months incarcerated (standardised)", "the case was assigned to a judge whose past sentencing is harsher than the court median", "employment index two years later", "prior-offence index"),
    IvTopic("Housing mobility and adult earnings", "family", "families", "years lived in a low-poverty neighbourhood (standardised)", "the family was offered a housing voucher in the lottery", "adult earnings index of the children", "baseline household income (standardised)"),
    IvTopic("Health insurance and health outcomes", "adult", "adults", "months with health insurance (standardised)", "the adult was selected in the insurance-enrolment lottery", "self-reported health index", "baseline body-mass index (standardised)"),
    IvTopic("Class size and pupil achievement", "pupil", "pupils", "class size (standardised)", "the pupil's school won funding for extra teachers in a random draw", "reading score (standardised)", "school enrolment (standardised)"),
    IvTopic("Air pollution and respiratory health", "resident", "residents", "fine-particle exposure (standardised)", "the resident's home lies downwind of the regional power plant on most days", "respiratory-health index", "household-size index"),
    IvTopic("Mobile money and household consumption", "household", "households", "mobile-money transactions (standardised)", "a mobile-phone tower was built within 2 km of the village for unrelated engineering reasons", "consumption per adult (standardised)", "distance-to-market index"),
    IvTopic("Tutoring and grades: an encouragement experiment", "student", "students", "hours of tutoring attended (standardised)", "the student was randomly sent a personal invitation letter", "end-of-year grade point average (standardised)", "baseline motivation index"),
    IvTopic("Retirement saving and household wealth", "employee", "employees", "retirement contribution rate (standardised)", "the employee was hired after automatic enrolment became the default", "net household wealth (standardised)", "employee tenure (standardised)"),
    IvTopic("Bed-net use and child health", "household", "households", "share of nights children slept under a bed net (standardised)", "the household received a randomly assigned bed-net discount voucher", "child haemoglobin level (standardised)", "dwelling-quality index"),
    IvTopic("Hospital treatment intensity and survival", "patient", "patients", "treatment intensity index", "the patient lives closer to a hospital with a specialised cardiac unit than to any other hospital", "one-year survival index", "comorbidity index"),
    IvTopic("Microcredit access and business profits", "entrepreneur", "entrepreneurs", "loan amount received (standardised)", "the entrepreneur's neighbourhood was randomly chosen for a new lender branch", "monthly business profit (standardised)", "years of business experience (standardised)"),
    IvTopic("Job-training participation and earnings", "job seeker", "job seekers", "weeks of job training completed (standardised)", "the job seeker was randomly offered a training slot", "earnings index one year later", "previous-job tenure (standardised)"),
)

RDD_TOPICS: Final[tuple[RddTopic, ...]] = (
    RddTopic("Merit scholarships and college completion", "student", "students", "entrance-exam score", "a merit scholarship", "college completion index"),
    RddTopic("Incumbency and future electoral success", "party candidate", "party candidates", "vote share in the previous election", "holding the seat as incumbent", "vote-share index in the next election"),
    RddTopic("Pension eligibility and retirement", "worker", "workers", "age", "eligibility for an early-retirement pension", "labour-force participation index"),
    RddTopic("Remedial classes and later test scores", "pupil", "pupils", "placement-test score", "assignment to a remedial class", "next-year test score index"),
    RddTopic("Credit approval and small-firm growth", "small firm", "small firms", "credit score", "approval of a bank loan", "employment-growth index"),
    RddTopic("Cash transfers and child nutrition", "household", "households", "poverty-index score", "enrolment in a cash-transfer programme", "child nutrition index"),
    RddTopic("Regulation thresholds and firm productivity", "firm", "firms", "employee headcount", "being subject to labour-market regulation", "productivity index"),
    RddTopic("Neonatal intensive care and infant health", "newborn", "newborns", "birth-weight score (lower weights score higher)", "admission to neonatal intensive care", "one-year health index"),
    RddTopic("Pollution alerts and outdoor activity", "city-day", "city-days", "air-quality forecast index", "the issue of a public pollution alert", "outdoor-activity index"),
    RddTopic("Grant funding and research output", "research proposal", "research proposals", "panel review score", "receiving the research grant", "publication index five years later"),
    RddTopic("Selective schools and university entry", "applicant", "applicants", "admission-test score", "admission to a selective secondary school", "university-entry index"),
    RddTopic("Unemployment-benefit duration and job finding", "job seeker", "job seekers", "age at job loss", "an extended benefit entitlement", "re-employment speed index"),
    RddTopic("Tax-filing thresholds and reported income", "self-employed worker", "self-employed workers", "gross revenue", "a simplified tax regime", "reported-profit index"),
    RddTopic("Honours designation and graduate earnings", "graduate", "graduates", "final grade average", "an honours designation on the diploma", "starting-salary index"),
    RddTopic("Place-based subsidies and local employment", "municipality", "municipalities", "deprivation index", "designation as a subsidy zone", "local employment index"),
    RddTopic("Speed cameras and accidents", "road segment", "road segments", "prior accident-risk score", "installation of a speed camera", "accident-rate index"),
    RddTopic("Gifted programmes and student outcomes", "student", "students", "screening-test score", "placement in a gifted programme", "achievement index two years later"),
)
# fmt: on

TOPICS_BY_FAMILY: Final[dict[str, tuple[object, ...]]] = {
    "did": DID_TOPICS,
    "event_study": ES_TOPICS,
    "iv": IV_TOPICS,
    "rdd": RDD_TOPICS,
}
