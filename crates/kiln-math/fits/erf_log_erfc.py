"""Fits ERF_LOG_ERFC (crates/kiln-math/src/algorithms.rs): ln erfc(x) as a
polynomial in t = x - 2.5 for 1 <= x <= 4, where erf computes
1 - e^{P(t)}. What matters is erf's error, |dP|·erfc(x) against erf's ulp,
so the fit weighs P's error by erfc(x) (iteratively reweighted least
squares towards the minimax), then checks erf through an f32 evaluation
(Horner with one rounding per step, as fused multiply-adds; e^P off by up
to an ulp either way, as kiln-math's exp may be) against mpmath on every
thousandth f32 of [1, 4].

    python3 crates/kiln-math/fits/erf_log_erfc.py    (numpy, mpmath)
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30
LO, HI, CENTER, DEGREE = 1.0, 4.0, 2.5, 6

nodes = np.cos(np.pi * (np.arange(400) + 0.5) / 400) * (HI - LO) / 2 + (LO + HI) / 2
target = np.array([float(mp.log(mp.erfc(x))) for x in nodes])
weight = np.array([float(mp.erfc(x)) for x in nodes])
vander = np.vander(nodes - CENTER, DEGREE + 1, increasing=True)
w = weight.copy()
for _ in range(30):
    coef, *_ = np.linalg.lstsq(vander * w[:, None], target * w, rcond=None)
    err = np.abs((vander @ coef - target) * weight)
    w = w * (err / err.max()) ** 0.5 + w * 1e-3
coef32 = coef.astype(np.float32)

lo_bits, hi_bits = np.float32(LO).view(np.int32), np.float32(HI).view(np.int32)
x = np.arange(lo_bits, hi_bits + 1, 1000, dtype=np.int32).view(np.float32)
want = np.array([float(mp.erf(float(v))) for v in x]).astype(np.float32)
t = (x - np.float32(CENTER)).astype(np.float32)
p = np.full_like(t, coef32[-1])
for c in coef32[-2::-1]:
    p = (p.astype(np.float64) * t + np.float64(c)).astype(np.float32)
e = np.exp(p.astype(np.float64)).astype(np.float32)
worst = 0
for off in (-1, 0, 1):
    got = (1.0 - (e.view(np.int32) + off).view(np.float32).astype(np.float64)).astype(np.float32)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    worst = max(worst, int(ulps.max()))
# The fit's error with the coefficients rounded to f32, as erf uses them.
rounded = np.abs((vander @ coef32.astype(np.float64) - target) * weight).max()
print(f"weighted error of P (f32 coefficients): {rounded:.3g}; erf on {len(x)} inputs: at most {worst} ulps")
print("pub const ERF_LOG_ERFC: [f32; %d] = [" % (DEGREE + 1))
for c in coef32:
    print(f"    {np.format_float_positional(c, unique=True)},")
print("];")
