# Every way an R script commonly prints the day and time it runs (tests/test_golden_clock.py).
now <- Sys.time()
today <- Sys.Date()
print(now)
print(today)
print(date())
print(format(now, usetz = TRUE))
print(as.POSIXlt(now))
cat(format(now), "\n")
cat(as.numeric(now), "\n")
print(as.numeric(now))
print(trunc(as.numeric(now)))
print(weekdays(today))
print(months(today))
print(data.frame(when = now, day = today))
formats <- c(
  "%a %b %d %Y", "%A, %B %d, %Y", "%d %b %Y", "%d-%b-%Y", "%d/%m/%Y", "%m/%d/%Y", "%m/%d/%y",
  "%x", "%X", "%c", "%D", "%F", "%T", "%R", "%Y-%m-%dT%H:%M:%S%z", "%H:%M:%OS3", "%I:%M %p",
  "%e %B %Y", "%Y/%m/%d", "%d.%m.%Y", "%G-W%V-%u", "%A", "%B", "%b %Y", "%Y%m%dT%H%M%S", "%s",
  "%b %e %H:%M:%S %Z %Y", "%A %d %B %Y at %I:%M:%S %p"
)
for (f in formats) cat(f, "=", format(now, f), "\n")
options(digits.secs = 6)
print(now)
cat("done\n")
