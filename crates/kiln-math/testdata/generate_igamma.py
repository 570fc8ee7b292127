"""Reference values of the regularized incomplete gamma functions for
kiln_math's `gamma_inc` test (`special::tests::incomplete_gamma_over_its_regimes`):
lines `a x P Q`, P and Q from mpmath at 40 digits, rounded to f64.

Points: a log-uniform over [1e-3, 1e3] with x from a/100 to 10a and x near
a (a normal step of √a), x within ±70% of a up to a = 200 (where the
prefactor's exponent series meets ln(1 + σ)), a < 10 with x in [700, 760]
(e^-x subnormal), a < 1 with x just above a + 1 (the continued fraction's
slowest corner), and a fixed grid. Run with mpmath installed:
    python3 generate_igamma.py > igamma.txt
"""
import random

import mpmath

mpmath.mp.dps = 40
random.seed(2033)


def line(a, x):
    try:
        p = mpmath.gammainc(a, 0, x, regularized=True)
        q = mpmath.gammainc(a, x, mpmath.inf, regularized=True)
    except Exception:  # mpmath's series did not converge: leave the point out
        return None
    return f"{a!r} {x!r} {float(p)!r} {float(q)!r}"


points = []
for _ in range(200):
    a = 10 ** random.uniform(-3, 3)
    if random.random() < 0.6:
        x = a * 10 ** random.uniform(-2, 1)
    else:
        x = max(1e-300, a + random.gauss(0, 1) * a ** 0.5)
    points.append((a, x))
for _ in range(150):
    a = 10 ** random.uniform(-2, 2.3)
    points.append((a, a * (1 + random.uniform(-0.7, 0.7))))
for _ in range(60):
    points.append((random.uniform(0.01, 10), random.uniform(700, 760)))
for _ in range(60):
    a = random.uniform(0.001, 1)
    points.append((a, random.uniform(a + 1, a + 3)))
for a in [1e-3, 0.5, 1, 2, 9.99, 10, 10.01, 50, 100, 1000, 1e4]:
    for x in [a * 0.5, a * 0.9, a, a + 1, a * 1.1, a * 2, 0.1, 1.5]:
        points.append((a, x))
for a, x in points:
    text = line(a, x)
    if text:
        print(text)
