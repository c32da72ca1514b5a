#!/usr/bin/python3
# Reference values for tests/unit/test_stats.c, computed with SciPy 1.10
# (Debian python3-scipy) and NumPy. Run: /usr/bin/python3 tests/data/stats/refs.py
# Output: tests/data/stats/refs.txt (one "name value" line each, 17 digits).
import numpy as np
from scipy import stats

BASE = [0.2231, 0.2264, 0.2219, 0.2290, 0.2247, 0.2275, 0.2238, 0.2259,
        0.2282, 0.2226, 0.2270, 0.2251]
CUR = [0.2330, 0.2361, 0.2312, 0.2349]
ODD = [3.0, -1.5, 7.25, 0.0, 2.5, 2.5, 11.0]

out = []


def put(name, v):
    out.append("%s %.17g" % (name, float(v)))


# descriptives
b = np.array(BASE)
put("base.mean", np.mean(b))
put("base.var", np.var(b, ddof=1))
put("base.median", np.median(b))
put("odd.median", np.median(ODD))
put("base.mad", stats.median_abs_deviation(b, scale="normal"))
put("odd.mad", stats.median_abs_deviation(ODD, scale="normal"))
for q in (0.0, 0.1, 0.5, 0.9, 1.0):
    put("base.quantile.%g" % q, np.quantile(b, q))
s = BASE[0]
for v in BASE[1:]:
    s = 0.3 * v + (1 - 0.3) * s
put("base.ewma.0.3", s)


# Upper alpha quantile of t(df). SciPy 1.10's t.ppf/t.isf stop at about
# 1e-9 relative for non-integer df (t.sf of the result is off by 2e-9 at
# df 5.47); its t.sf is accurate, so one Newton step on it fixes that.
def tq(a, df):
    q = stats.t.isf(a, df)
    return q + (stats.t.sf(q, df) - a) / stats.t.pdf(q, df)


# shared-variance and prediction tests, by hand on scipy's t distribution
def tdist(name, est, se, df, d0, alt, alpha):
    t = (est - d0) / se
    if alt == "greater":
        p = stats.t.sf(t, df)
        lo, hi = est - tq(alpha, df) * se, np.inf
    elif alt == "less":
        p = stats.t.cdf(t, df)
        lo, hi = -np.inf, est + tq(alpha, df) * se
    else:
        p = 2 * stats.t.sf(abs(t), df)
        q = tq(alpha / 2, df)
        lo, hi = est - q * se, est + q * se
    put(name + ".t", t)
    put(name + ".df", df)
    put(name + ".p", p)
    put(name + ".est", est)
    put(name + ".se", se)
    put(name + ".lo", lo)
    put(name + ".hi", hi)


c = np.array(CUR)
sb = np.std(b, ddof=1)
est = np.mean(c) - np.mean(b)
se = sb * np.sqrt(1 / len(c) + 1 / len(b))
tdist("shared.greater", est, se, len(b) - 1, 0.0, "greater", 0.05)
tdist("shared.margin", est, se, len(b) - 1, 0.005, "greater", 0.05)
tdist("shared.two", est, se, len(b) - 1, 0.0, "two-sided", 0.1)
tdist("shared.less", est, se, len(b) - 1, 0.0, "less", 0.05)
for x in (0.2330, 0.2262):
    tdist("pred.%g" % x, x - np.mean(b), sb * np.sqrt(1 + 1 / len(b)),
          len(b) - 1, 0.0, "greater", 0.05)

# Welch: scipy's own test, margin by shifting the baseline by delta0
for name, d0, alt in (("welch.greater", 0.0, "greater"),
                      ("welch.margin", 0.005, "greater"),
                      ("welch.two", 0.0, "two-sided"),
                      ("welch.less", 0.0, "less")):
    r = stats.ttest_ind(c, b + d0, equal_var=False, alternative=alt)
    vb, vc = np.var(b, ddof=1) / len(b), np.var(c, ddof=1) / len(c)
    df = (vb + vc) ** 2 / (vb ** 2 / (len(b) - 1) + vc ** 2 / (len(c) - 1))
    tdist(name, est, np.sqrt(vb + vc), df, d0, alt, 0.05)
    put(name + ".scipy_t", r.statistic)
    put(name + ".scipy_p", r.pvalue)

# Mann-Whitney
TX = [5, 7, 7, 9, 12, 12, 15, 3]
TY = [1, 4, 7, 2, 6, 9, 3, 5, 8, 10]
EX = [1.8, 3.1, 4.6, 5.2, 7.7]
EY = [0.4, 1.1, 2.5, 2.9, 3.3, 4.0, 6.1]
rng = np.random.default_rng(20240601)
BX = np.round(rng.normal(1.0, 1.0, 12), 6)
BY = np.round(rng.normal(0.0, 1.0, 30), 6)
for alt in ("greater", "less", "two-sided"):
    r = stats.mannwhitneyu(TX, TY, use_continuity=True, alternative=alt,
                           method="asymptotic")
    put("mw.ties.%s.u" % alt, r.statistic)
    put("mw.ties.%s.p" % alt, r.pvalue)
    r = stats.mannwhitneyu(np.array(TX) - 1.5, TY, use_continuity=True,
                           alternative=alt, method="asymptotic")
    put("mw.shift.%s.u" % alt, r.statistic)
    put("mw.shift.%s.p" % alt, r.pvalue)
    r = stats.mannwhitneyu(EX, EY, alternative=alt, method="exact")
    put("mw.exact.%s.u" % alt, r.statistic)
    put("mw.exact.%s.p" % alt, r.pvalue)
    r = stats.mannwhitneyu(EX, EY, use_continuity=True, alternative=alt,
                           method="asymptotic")
    put("mw.exact_asym.%s.p" % alt, r.pvalue)
    r = stats.mannwhitneyu(BX, BY, alternative=alt, method="exact")
    put("mw.big.%s.u" % alt, r.statistic)
    put("mw.big.%s.p" % alt, r.pvalue)
out.append("mw.big.x " + " ".join("%.6f" % v for v in BX))
out.append("mw.big.y " + " ".join("%.6f" % v for v in BY))

# Benjamini-Hochberg, by hand as R's p.adjust(method="BH"), NaN as 1
P = [0.01, 0.04, 0.03, 0.005, 0.5, np.nan, 0.04, 0.9, 0.0001, 0.2]
p = np.where(np.isnan(P), 1.0, P)
n = len(p)
o = np.argsort(-p, kind="stable")
i = np.arange(n, 0, -1)
qs = np.minimum(1, np.minimum.accumulate(n / i * p[o]))
q = np.empty(n)
q[o] = qs
for k, v in enumerate(q):
    put("bh.%d" % k, v)

print("\n".join(out))
