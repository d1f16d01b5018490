"""Every way a Python script commonly prints the day and time it runs (tests/test_golden_clock.py)."""

import datetime as dt
import email.utils
import time

import numpy as np
import pandas as pd

now = dt.datetime.now()
utc = dt.datetime.now(dt.UTC)
today = dt.date.today()
for value in (now, utc, today, now.time()):
    print(value)
    print(repr(value))
print(now.isoformat(), utc.isoformat(), now.ctime(), sep="\n")
print(time.time(), int(time.time()), time.ctime(), time.asctime(), sep="\n")
print(time.localtime())
print(utc.timestamp(), email.utils.formatdate(), email.utils.formatdate(usegmt=True), sep="\n")
print(pd.Timestamp.now(), repr(pd.Timestamp.now()), pd.Timestamp.today().date(), sep="\n")
print(pd.DataFrame({"when": [now], "day": [today]}))
print(np.datetime64("now"), repr(np.datetime64("now")), np.datetime64(now, "us"), sep="\n")
FORMATS = (
    "%a %b %d %Y", "%A, %B %d, %Y", "%d %b %Y", "%d-%b-%Y", "%d/%m/%Y", "%m/%d/%Y", "%m/%d/%y",
    "%x", "%X", "%c", "%D", "%F", "%T", "%R", "%Y-%m-%dT%H:%M:%S%z", "%H:%M:%S.%f", "%I:%M %p",
    "%e %B %Y", "%Y/%m/%d", "%d.%m.%Y", "%G-W%V-%u", "%A", "%B", "%b %Y", "%Y%m%dT%H%M%S", "%s",
    "%A %d %B %Y at %I:%M:%S %p",
)  # fmt: skip
for f in FORMATS:
    print(f, "=", now.strftime(f), "|", utc.strftime(f))
print(f"{now:%d.%m.%Y %H:%M}")
print("done")
