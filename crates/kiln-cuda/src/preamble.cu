// Kiln's CUDA C preamble: element semantics shared by every kernel, the
// same as the reference interpreter's (kiln_runtime::interp::elementwise
// and kiln_runtime::convert). No header is included: NVRTC alone compiles
// it (the PyPI NVRTC has no cuda_fp16.h), so f16 and bf16 conversions are
// the PTX instructions cuda_fp16.h and cuda_bf16.h use themselves.

#define KILN_F32_NAN __int_as_float(0x7fc00000)
#define KILN_F64_NAN __longlong_as_double(0x7ff8000000000000LL)

// f16 and bf16 values live in f32 registers, rounded to their format.
// (The test suite compiles this preamble as host C++ to run the generated
// code without a GPU; it defines KILN_HOST_EMULATION and these four.)
#ifndef KILN_HOST_EMULATION
__device__ __forceinline__ unsigned short kiln_f2h(float x) {
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float kiln_h2f(unsigned short h) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
  return r;
}
__device__ __forceinline__ unsigned short kiln_f2bf(float x) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float kiln_bf2f(unsigned short h) {
  return __uint_as_float(((unsigned int)h) << 16);
}
#endif
__device__ __forceinline__ float kiln_round_f16(float x) { return kiln_h2f(kiln_f2h(x)); }
__device__ __forceinline__ float kiln_round_bf16(float x) { return kiln_bf2f(kiln_f2bf(x)); }

// Float to integer as PyTorch's x86-64 build converts: out of range and
// NaN give the "integer indefinite" value; narrow types go through 32
// bits; u32 and u64 through the bias-by-2^(n-1) sequence.
__device__ __forceinline__ int kiln_f2i32(double x) {
  return (x != x || x >= 2147483648.0 || x < -2147483648.0) ? (int)0x80000000u : (int)x;
}
__device__ __forceinline__ long long kiln_f2i64(double x) {
  return (x != x || x >= 9223372036854775808.0 || x < -9223372036854775808.0)
             ? (long long)0x8000000000000000ULL
             : (long long)x;
}
__device__ __forceinline__ unsigned int kiln_f2u32(double x) {
  return x >= 2147483648.0 ? ((unsigned int)kiln_f2i32(x - 2147483648.0) ^ 0x80000000u)
                           : (unsigned int)kiln_f2i32(x);
}
__device__ __forceinline__ unsigned long long kiln_f2u64(double x) {
  return x >= 9223372036854775808.0
             ? ((unsigned long long)kiln_f2i64(x - 9223372036854775808.0) ^ 0x8000000000000000ULL)
             : (unsigned long long)kiln_f2i64(x);
}

// Four floats (two doubles) from 16-byte-aligned memory in one load (the
// fused attention kernel's shared tiles). (The host emulation copies the
// bytes: C++ may not read floats through another type.)
#ifdef KILN_HOST_EMULATION
template <typename T> static inline void kiln_load16(const T* p, T* r) { memcpy(r, p, 16); }
#else
__device__ __forceinline__ void kiln_load16(const float* p, float* r) {
  const uint4 u = *(const uint4*)p;
  r[0] = __uint_as_float(u.x);
  r[1] = __uint_as_float(u.y);
  r[2] = __uint_as_float(u.z);
  r[3] = __uint_as_float(u.w);
}
__device__ __forceinline__ void kiln_load16(const double* p, double* r) {
  const uint4 u = *(const uint4*)p;
  r[0] = __longlong_as_double((long long)(((unsigned long long)u.y << 32) | u.x));
  r[1] = __longlong_as_double((long long)(((unsigned long long)u.w << 32) | u.z));
}
#endif

// NaN-propagating maximum and minimum (the first NaN operand, sign and all,
// as the interpreter); max(-0.0, 0.0) is its first operand.
template <typename T> __device__ __forceinline__ T kiln_max(T a, T b) { return a < b ? b : a; }
template <typename T> __device__ __forceinline__ T kiln_min(T a, T b) { return b < a ? b : a; }
__device__ __forceinline__ float kiln_max(float a, float b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
__device__ __forceinline__ double kiln_max(double a, double b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
__device__ __forceinline__ float kiln_min(float a, float b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}
__device__ __forceinline__ double kiln_min(double a, double b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}

// Python's float remainder and floor division.
template <typename T> __device__ __forceinline__ T kiln_fremainder(T a, T b) {
  T m = fmod(a, b);
  return (m != (T)0 && ((b < (T)0) != (m < (T)0))) ? m + b : m;
}
template <typename T> __device__ __forceinline__ T kiln_fdiv_floor(T a, T b) {
  if (b == (T)0) return a / b;
  T m = fmod(a, b);
  T div = (a - m) / b;
  if (m != (T)0 && ((b < (T)0) != (m < (T)0))) div = div - (T)1;
  if (div != (T)0) {
    T floored = floor(div);
    return (div - floored > (T)0.5) ? floored + (T)1 : floored;
  }
  return copysign((T)0, a / b);
}

// Integer division: a zero divisor sets bit 1 of the status word
// (ZeroDivisionError; by an atomic or, so that an index error's bit 2, set
// earlier in the run, stays); MIN / -1 wraps.
template <typename T> __device__ __forceinline__ bool kiln_signed() { return (T)-1 < (T)0; }
template <typename T> __device__ __forceinline__ T kiln_ineg(T a) {
  return (T)(0ULL - (unsigned long long)a);
}
template <typename T> __device__ __forceinline__ T kiln_idiv_trunc(T a, T b, int* st) {
  if (b == (T)0) { atomicOr(st, 1); return (T)0; }
  if (kiln_signed<T>() && b == (T)-1) return kiln_ineg(a);
  return (T)(a / b);
}
template <typename T> __device__ __forceinline__ T kiln_idiv_floor(T a, T b, int* st) {
  if (b == (T)0) { atomicOr(st, 1); return (T)0; }
  if (kiln_signed<T>() && b == (T)-1) return kiln_ineg(a);
  T q = (T)(a / b);
  T r = (T)(a % b);
  if (kiln_signed<T>() && r != (T)0 && ((r < (T)0) != (b < (T)0))) q = (T)(q - (T)1);
  return q;
}
template <typename T> __device__ __forceinline__ T kiln_iremainder(T a, T b, int* st) {
  if (b == (T)0) { atomicOr(st, 1); return (T)0; }
  if (kiln_signed<T>() && b == (T)-1) return (T)0;
  T m = (T)(a % b);
  if (m != (T)0 && ((b < (T)0) != (m < (T)0))) m = (T)(m + b);
  return m;
}
// C's remainder of integers (the sign of the dividend); division by zero
// sets the status (PyTorch's ZeroDivisionError), MIN % -1 is 0.
template <typename T> __device__ __forceinline__ T kiln_ifmod(T a, T b, int* st) {
  if (b == (T)0) { atomicOr(st, 1); return (T)0; }
  if (kiln_signed<T>() && b == (T)-1) return (T)0;
  return (T)(a % b);
}
template <typename T> __device__ __forceinline__ T kiln_ipow(T base, T exp) {
  if (kiln_signed<T>() && exp < (T)0) {
    if (base == (T)1) return (T)1;
    if (base == (T)-1) return ((unsigned long long)exp & 1ULL) ? (T)-1 : (T)1;
    return (T)0;
  }
  unsigned long long r = 1, b = (unsigned long long)base, e = (unsigned long long)exp;
  while (e > 0) {
    if (e & 1ULL) r *= b;
    b *= b;
    e >>= 1;
  }
  return (T)r;
}

// gcd, lcm and shifts of integers in T's width, as PyTorch's kernels
// compute them (kiln_runtime::interp::elementwise::int_in_width): |MIN|
// wraps to MIN, narrow types compute in int, a shift outside [0, width)
// gives 0 (or the sign, for >>).
template <typename T> __device__ __forceinline__ T kiln_iabs_wrap(T x) {
  return x < (T)0 ? kiln_ineg(x) : x;
}
template <typename T> __device__ __forceinline__ T kiln_gcd(T a, T b) {
  a = kiln_iabs_wrap(a);
  b = kiln_iabs_wrap(b);
  while (a != (T)0) {
    T c = a;
    a = (T)(b % a);
    b = c;
  }
  return b;
}
template <typename T> __device__ __forceinline__ T kiln_lcm(T a, T b) {
  T g = kiln_gcd(a, b);
  if (g == (T)0) return (T)0;
  if (sizeof(T) <= 2) {
    long long v = (long long)a / (long long)g * (long long)b;
    return (T)(v < 0 ? -v : v);
  }
  T q = (kiln_signed<T>() && g == (T)-1) ? kiln_ineg(a) : (T)(a / g);
  T p = (T)((unsigned long long)q * (unsigned long long)b);
  return kiln_iabs_wrap(p);
}
template <typename T> __device__ __forceinline__ T kiln_shl(T a, T b) {
  const long long bits = 8 * (long long)sizeof(T);
  if ((long long)b < 0 || (long long)b >= bits) return (T)0;
  return (T)((unsigned long long)a << (unsigned long long)b);
}
template <typename T> __device__ __forceinline__ T kiln_shr(T a, T b) {
  const long long bits = 8 * (long long)sizeof(T);
  if ((long long)b < 0 || (long long)b >= bits) return a < (T)0 ? (T)-1 : (T)0;
  return (T)(a >> b);
}

// nextafter in f16 and bf16 (held in f32 registers): one step of the
// format's bits `h` (a's, encoded) towards b; a and b not NaN, a != b.
__device__ __forceinline__ unsigned short kiln_next16(float a, float b, unsigned short h) {
  if (a == 0.0f) return b > 0.0f ? (unsigned short)1 : (unsigned short)0x8001;
  return ((b > a) == (a > 0.0f)) ? (unsigned short)(h + 1) : (unsigned short)(h - 1);
}
__device__ __forceinline__ float kiln_nextafter_f16(float a, float b) {
  if (a != a || b != b) return KILN_F32_NAN;
  if (a == b) return b;
  return kiln_h2f(kiln_next16(a, b, kiln_f2h(a)));
}
__device__ __forceinline__ float kiln_nextafter_bf16(float a, float b) {
  if (a != a || b != b) return KILN_F32_NAN;
  if (a == b) return b;
  return kiln_bf2f(kiln_next16(a, b, kiln_f2bf(a)));
}

// Special functions in f64: kiln_math::special's algorithms, operation
// for operation (the interpreter and the CPU backend call those).
#define KILN_PI 3.141592653589793
#define KILN_MACHEP 1.1102230246251565e-16
__device__ __forceinline__ double kiln_poly(double z, const double* c, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; ++i) acc = acc * z + c[i];
  return acc;
}
// Giles' approximation of erfinv(a)/a in w = -ln(1 - a^2)
// (kiln_math::special::giles).
__device__ double kiln_giles(double w) {
  const double central[9] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
  const double tail[9] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                          -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
  return w < 5.0 ? kiln_poly(w - 2.5, central, 9) : kiln_poly(sqrt(w) - 3.0, tail, 9);
}
__device__ double kiln_erfinv(double x) {
  double a = fabs(x);
  if (x != x || a > 1.0) return KILN_F64_NAN;
  if (a == 0.0) return x;
  if (a == 1.0) return copysign(__longlong_as_double(0x7ff0000000000000LL), x);
  double w = -log((1.0 - a) * (1.0 + a));
  double y = kiln_giles(w) * a;
  const double two_over_sqrt_pi = 2.0 / sqrt(KILN_PI);
  const double c = 1.0 - a;
  for (int i = 0; i < 4; ++i) {
    double slope = two_over_sqrt_pi * exp(-y * y);
    if (a > 0.5) {
      double e = erfc(y);
      y += log(e / c) * e / slope;
    } else {
      y -= (erf(y) - a) / slope;
    }
  }
  return copysign(y, x);
}
__device__ double kiln_digamma(double x) {
  const double series_c[7] = {1.0 / 12.0, -691.0 / 32760.0, 1.0 / 132.0, -1.0 / 240.0,
                              1.0 / 252.0, -1.0 / 120.0, 1.0 / 12.0};
  if (x == 0.0) return copysign(__longlong_as_double(0x7ff0000000000000LL), -x);
  if (x != x) return x;
  double reflection = 0.0;
  if (x < 0.0) {
    if (x == trunc(x)) return KILN_F64_NAN;
    double r = x - trunc(x);
    reflection = KILN_PI / tan(KILN_PI * r);
    x = 1.0 - x;
  }
  double acc = 0.0;
  while (x < 10.0) {
    acc -= 1.0 / x;
    x += 1.0;
  }
  double series = 0.0;
  if (x < 1e17) {
    double z = 1.0 / (x * x);
    series = z * kiln_poly(z, series_c, 7);
  }
  return (acc + log(x) - 0.5 / x - series) - reflection;
}
// kiln_math::special::bessel_asymptotic: I's asymptotic series at x,
// K's at -x.
__device__ double kiln_bessel_asymptotic(double x, int nu) {
  double mu = 4.0 * (double)(nu * nu), term = 1.0, sum = 1.0, k = 1.0;
  for (int i = 0; i < 60; ++i) {
    double odd = 2.0 * k - 1.0;
    term *= (odd * odd - mu) / (8.0 * k * x);
    sum += term;
    if (fabs(term) < KILN_MACHEP * fabs(sum)) break;
    k += 1.0;
  }
  return sum;
}
__device__ double kiln_bessel_i(double x, int nu, bool scaled) {
  double a = fabs(x);
  if (a != a) return a;
  if (a == __longlong_as_double(0x7ff0000000000000LL)) return scaled ? 0.0 : KILN_F64_NAN;
  if (a <= 30.0) {
    double q = a * a / 4.0, term = 1.0, sum = 1.0, k = 1.0;
    for (int i = 0; i < 100; ++i) {
      term *= q / (k * (k + (double)nu));
      sum += term;
      if (term < KILN_MACHEP * sum) break;
      k += 1.0;
    }
    double s = nu == 1 ? sum * (a / 2.0) : sum;
    return scaled ? s * exp(-a) : s;
  }
  double s = kiln_bessel_asymptotic(a, nu) / (sqrt(2.0 * KILN_PI) * sqrt(a));
  if (scaled) return s;
  double h = exp(a / 2.0);
  return h * (h * s);
}
__device__ double kiln_i0(double x) { return kiln_bessel_i(x, 0, false); }
__device__ double kiln_i0e(double x) { return kiln_bessel_i(x, 0, true); }
__device__ double kiln_i1(double x) {
  double r = kiln_bessel_i(x, 1, false);
  return x < 0.0 ? -r : r;
}
__device__ double kiln_i1e(double x) {
  double r = kiln_bessel_i(x, 1, true);
  return x < 0.0 ? -r : r;
}
// kiln_math::special::k0, k1 (and e^x times them): the power series up
// to 1, the trapezoidal rule on the integral below 25, the asymptotic
// expansion beyond (CUDA's own log, exp, sinh, cosh inside).
__device__ double kiln_bessel_k(double x, int nu, bool scaled) {
  if (x != x || x < 0.0) return KILN_F64_NAN;
  if (x == 0.0) return __longlong_as_double(0x7ff0000000000000LL);
  if (x == __longlong_as_double(0x7ff0000000000000LL)) return 0.0;
  const double euler = 0.5772156649015329;
  if (x <= 1.0) {
    double q = x * x / 4.0, lh = log(x) - 0.6931471805599453, term = 1.0, harmonic = 0.0, k = 1.0, r;
    if (nu == 0) {
      double i0 = 1.0, sum = 0.0;
      for (int i = 0; i < 40; ++i) {
        term *= q / (k * k);
        harmonic += 1.0 / k;
        i0 += term;
        sum += term * harmonic;
        if (term < KILN_MACHEP * i0) break;
        k += 1.0;
      }
      r = -(lh + euler) * i0 + sum;
    } else {
      double i1 = 1.0, sum = 1.0 - 2.0 * euler;
      for (int i = 0; i < 40; ++i) {
        term *= q / (k * (k + 1.0));
        harmonic += 1.0 / k;
        i1 += term;
        sum += term * (2.0 * harmonic + 1.0 / (k + 1.0) - 2.0 * euler);
        if (term < KILN_MACHEP * i1) break;
        k += 1.0;
      }
      r = 1.0 / x + lh * (x / 2.0) * i1 - (x / 4.0) * sum;
    }
    return scaled ? r * exp(x) : r;
  }
  double s;
  if (x < 25.0) {
    s = 0.5;
    double k = 1.0;
    for (int i = 0; i < 400; ++i) {
      double t = k * 0.125, half = sinh(t / 2.0), a = x * (2.0 * half * half);
      s += exp(-a) * (nu == 0 ? 1.0 : cosh(t));
      if (a > 45.0) break;
      k += 1.0;
    }
    s *= 0.125;
  } else {
    s = kiln_bessel_asymptotic(-x, nu) * sqrt(1.5707963267948966 / x);
  }
  if (scaled) return s;
  double h = exp(-x / 2.0);
  return (s * h) * h;
}
__device__ double kiln_k0(double x) { return kiln_bessel_k(x, 0, false); }
__device__ double kiln_k1(double x) { return kiln_bessel_k(x, 1, false); }
__device__ double kiln_k0e(double x) { return kiln_bessel_k(x, 0, true); }
__device__ double kiln_k1e(double x) { return kiln_bessel_k(x, 1, true); }
// kiln_math::special::spherical_j0: sin(x)/x (CUDA's own sin).
__device__ double kiln_spherical_j0(double x) {
  if (fabs(x) == __longlong_as_double(0x7ff0000000000000LL)) return 0.0;
  return x == 0.0 ? 1.0 : sin(x) / x;
}
// Double-doubles (hi + lo), Dekker's and Knuth's exact transformations:
// kiln_math::special::Dd, the same code.
struct kiln_dd { double hi, lo; };
__device__ kiln_dd kiln_dd_two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
__device__ kiln_dd kiln_dd_quick(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
__device__ kiln_dd kiln_dd_two_prod(double a, double b) {
  const double p = a * b;
  return {p, fma(a, b, -p)};
}
__device__ kiln_dd kiln_dd_add(kiln_dd x, kiln_dd y) {
  const kiln_dd s = kiln_dd_two_sum(x.hi, y.hi);
  return kiln_dd_quick(s.hi, s.lo + x.lo + y.lo);
}
__device__ kiln_dd kiln_dd_mul(kiln_dd x, kiln_dd y) {
  const kiln_dd p = kiln_dd_two_prod(x.hi, y.hi);
  return kiln_dd_quick(p.hi, p.lo + (x.hi * y.lo + x.lo * y.hi));
}
__device__ kiln_dd kiln_dd_mul_f(kiln_dd x, double d) {
  const kiln_dd p = kiln_dd_two_prod(x.hi, d);
  return kiln_dd_quick(p.hi, p.lo + x.lo * d);
}
__device__ kiln_dd kiln_dd_div_f(kiln_dd x, double d) {
  const double q1 = x.hi / d;
  const kiln_dd p = kiln_dd_two_prod(q1, d), s = kiln_dd_two_sum(x.hi, -p.hi);
  const double f = s.lo - p.lo + x.lo;
  return kiln_dd_quick(q1, (s.hi + f) / d);
}
// kiln_math::special::airy_ai: the Maclaurin series in double-double below
// |x| = 9, the asymptotic expansions beyond (0 at +-inf, NaN at NaN).
__device__ double kiln_airy_ai(double x) {
  if (x != x) return x;
  if (fabs(x) == __longlong_as_double(0x7ff0000000000000LL)) return 0.0;
  const double a = fabs(x);
  if (a < 9.0) {
    const kiln_dd ai0 = {0.3550280538878172, 2.05233632436212e-17};
    const kiln_dd dai0 = {0.2588194037928068, -2.522243111610832e-17};
    const kiln_dd z = kiln_dd_mul_f(kiln_dd_two_prod(x, x), x);
    kiln_dd t = {1.0, 0.0}, u = {x, 0.0}, f = t, g = u;
    double k = 1.0;
    for (int i = 0; i < 200; ++i) {
      t = kiln_dd_div_f(kiln_dd_mul(t, z), (3.0 * k - 1.0) * (3.0 * k));
      u = kiln_dd_div_f(kiln_dd_mul(u, z), (3.0 * k) * (3.0 * k + 1.0));
      f = kiln_dd_add(f, t);
      g = kiln_dd_add(g, u);
      if (fabs(t.hi) <= 1e-36 * fabs(f.hi) && fabs(u.hi) <= 1e-36 * fabs(g.hi)) break;
      k += 1.0;
    }
    const kiln_dd bg = kiln_dd_mul(dai0, g);
    const kiln_dd r = kiln_dd_add(kiln_dd_mul(ai0, f), {-bg.hi, -bg.lo});
    return r.hi + r.lo;
  }
  // zeta = (2/3) a^(3/2) in double-double.
  const double s = sqrt(a);
  const kiln_dd r = kiln_dd_two_prod(s, s);
  const kiln_dd root = {s, ((a - r.hi) - r.lo) / (2.0 * s)};
  const kiln_dd zeta = kiln_dd_div_f(kiln_dd_mul_f(kiln_dd_mul_f(root, a), 2.0), 3.0);
  if (!(fabs(zeta.hi) <= 1.7976931348623157e308) || (x > 0.0 && zeta.hi > 750.0)) return 0.0;
  double alternating = 0.0, even = 0.0, odd = 0.0, term = 1.0, previous = __longlong_as_double(0x7ff0000000000000LL);
  unsigned j = 0;
  while (fabs(term) < previous && j < 200) {
    alternating += j % 2 == 0 ? term : -term;
    const double sgn = (j / 2) % 2 == 0 ? term : -term;
    if (j % 2 == 0) {
      even += sgn;
    } else {
      odd += sgn;
    }
    if (fabs(term) < 1e-17 * (fabs(even) + fabs(odd))) break;
    previous = fabs(term);
    j += 1;
    const double kk = (double)j;
    term *= (6.0 * kk - 5.0) * (6.0 * kk - 3.0) * (6.0 * kk - 1.0) / (216.0 * kk * (2.0 * kk - 1.0)) / zeta.hi;
  }
  const double quarter = sqrt(sqrt(a));
  if (x > 0.0) {
    const double h = exp(-zeta.hi / 2.0);
    return ((alternating / (2.0 * sqrt(KILN_PI) * quarter) * (1.0 - zeta.lo)) * h) * h;
  }
  const double sz = sin(zeta.hi), cz = cos(zeta.hi), sl = sin(zeta.lo), cl = cos(zeta.lo);
  const double sn = sz * cl + cz * sl, cs = cz * cl - sz * sl;
  const double sq = (sn - cs) / 1.4142135623730951, cq = (cs + sn) / 1.4142135623730951;
  return (cq * even + sq * odd) / (sqrt(KILN_PI) * quarter);
}
// kiln_math::special::erfcx: e^(x^2) erfc(x), the square's rounding
// error applied by an fma; the asymptotic series from 26; the reflection
// below 0 (CUDA's own erfc inside).
__device__ double kiln_exp_square(double x) {
  double square = x * x;
  double rest = fma(x, x, -square);
  return exp(square) * (1.0 + rest);
}
__device__ double kiln_erfcx(double x) {
  const double frac_1_sqrt_pi = 0.5641895835477563;
  if (x != x) return x;
  if (x < 0.0) {
    if (x < -26.7) return __longlong_as_double(0x7ff0000000000000LL);
    return 2.0 * kiln_exp_square(x) - kiln_erfcx(-x);
  }
  if (x < 26.0) return kiln_exp_square(x) * erfc(x);
  if (x > 1e8) return frac_1_sqrt_pi / x;
  double step = 1.0 / (2.0 * x * x), term = 1.0, total = 1.0;
  for (int n = 1; n <= 12; n++) {
    term *= -(double)(2 * n - 1) * step;
    total += term;
  }
  return frac_1_sqrt_pi / x * total;
}
// kiln_math::special::ndtri: -sqrt(2) erfcinv(2y), by erfinv in the
// centre and Newton on ln erfcx(t) - t^2 = ln 2q in the tails.
__device__ double kiln_ndtri(double y) {
  if (!(y >= 0.0 && y <= 1.0)) return KILN_F64_NAN;
  if (y == 0.0) return -__longlong_as_double(0x7ff0000000000000LL);
  if (y == 1.0) return __longlong_as_double(0x7ff0000000000000LL);
  const double sqrt2 = 1.4142135623730951;
  if (y >= 0.25 && y <= 0.75) return sqrt2 * kiln_erfinv(2.0 * y - 1.0);
  const double q = y < 0.5 ? y : 1.0 - y, sign = y < 0.5 ? -1.0 : 1.0;
  const double c = 2.0 * q, w = -log(c * (2.0 - c));
  double t;
  if (w < 16.0) {
    t = kiln_giles(w) * (1.0 - c);
  } else {
    const double l = -log(c);
    t = sqrt(l - log(sqrt(l) * sqrt(KILN_PI)));
  }
  const double target = log(c);
  for (int i = 0; i < 4; ++i) {
    const double e = kiln_erfcx(t);
    t += (log(e) - t * t - target) * e * (sqrt(KILN_PI) / 2.0);
  }
  return sign * sqrt2 * t;
}
__device__ double kiln_zeta(double x, double q) {
  const double em[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1892437580.3183792,
                         74724249600.0, -2950130727918.164, 116467828143500.67,
                         -4597978722407473.0, 1.8152105401943546e17, -7.166165256175667e18};
  if (x == 1.0) return __longlong_as_double(0x7ff0000000000000LL);
  if (x < 1.0) return KILN_F64_NAN;
  if (q <= 0.0) {
    if (q == floor(q)) return __longlong_as_double(0x7ff0000000000000LL);
    if (x != floor(x)) return KILN_F64_NAN;
  }
  if (q == __longlong_as_double(0x7ff0000000000000LL)) return KILN_F64_NAN;
  double s = pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i += 1;
    a += 1.0;
    b = pow(a, -x);
    s += b;
    if (-KILN_MACHEP * s < b && b < KILN_MACHEP * s) return s;
  }
  double w = a;
  s += pow(w, 1.0 - x) / (x - 1.0);
  s -= 0.5 * b;
  double rising = 1.0, k = 0.0;
  for (int j = 0; j < 12; ++j) {
    rising *= x + k;
    b /= w;
    double t = rising * b / em[j];
    s += t;
    if (fabs(t / s) < KILN_MACHEP) return s;
    k += 1.0;
    rising *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}
// kiln_math::special::gamma_inc: the regularized incomplete gamma
// functions P (lower) and Q by their series, DLMF 8.7.3 and the continued
// fraction, with the prefactor x^a e^-x / Gamma(a+1) computed without the
// cancellation of its logarithm (the same code, with CUDA's own exp, log,
// log1p, pow, expm1, lgamma and tgamma).
__device__ double kiln_ln_gamma_1p(double a) {
  const double c[25] = {0.03846153903467518, 0.04000000119214014, 0.04166666915034121, 0.04347826605304026, 0.04545455629320467, 0.047619070330142226, 0.05000004769810169, 0.05263167937961666, 0.055555767627403614, 0.058823978658684585, 0.06250095514121304, 0.06666870588242046, 0.07143294629536133, 0.0769325164113522, 0.083353840546109, 0.09095401714582904, 0.1000994575127818, 0.11133426586956469, 0.12550966952474304, 0.1440498967688461, 0.1695571769974082, 0.20738555102867398, 0.27058080842778454, 0.40068563438653143, 0.8224670334241132};
  if (a >= 0.2) return lgamma(1.0 + a);
  return -0.5772156649015329 * a + a * a * kiln_poly(-a, c, 25);
}
__device__ double kiln_gamma_inc_prefactor(double a, double x) {
  if (a < 10.0) {
    const double p = pow(x, a);
    if (!(fabs(p) <= 1.7976931348623157e308)) return exp(a * log(x) - x - lgamma(a + 1.0));
    const double e = exp(-x);
    if (e >= 2.2250738585072014e-308) return p * e / tgamma(a + 1.0);
    const double h = exp(-x / 2.0);
    return p / tgamma(a + 1.0) * h * h;
  }
  const double sigma = (x - a) / a;
  double phi;
  if (fabs(sigma) < 0.3) {
    double sum = 0.0, power = sigma * sigma, k = 2.0;
    for (int i = 0; i < 60; ++i) {
      const double term = power / k;
      sum += term;
      if (fabs(term) <= KILN_MACHEP * fabs(sum)) break;
      power *= -sigma;
      k += 1.0;
    }
    phi = sum;
  } else if (sigma >= -0.5) {
    phi = sigma - log1p(sigma);
  } else {
    phi = sigma - log(x / a);
  }
  const double stirling[8] = {-3617.0 / 122400.0, 1.0 / 156.0, -691.0 / 360360.0, 1.0 / 1188.0,
                              -1.0 / 1680.0, 1.0 / 1260.0, -1.0 / 360.0, 1.0 / 12.0};
  const double inverse = 1.0 / a, star = inverse * kiln_poly(inverse * inverse, stirling, 8);
  return exp(-a * phi) / (sqrt(2.0 * KILN_PI) * sqrt(a) * exp(star));
}
__device__ double kiln_gamma_inc(double a, double x, int lower) {
  const double nan = KILN_F64_NAN, inf = __longlong_as_double(0x7ff0000000000000LL);
  if (a < 0.0 || x < 0.0) return nan;
  if (a == 0.0) return x > 0.0 ? (lower ? 1.0 : 0.0) : nan;
  if (x == 0.0) return lower ? 0.0 : 1.0;
  if (a == inf) return x == inf ? nan : (lower ? 0.0 : 1.0);
  if (x == inf) return lower ? 1.0 : 0.0;
  if (a != a || x != x) return nan;
  if (x < a + 1.0) {
    if (!lower && a < 1.0) {
      double term = 1.0, sum = 0.0, n = 1.0;
      for (int i = 0; i < 2000; ++i) {
        term *= -x / n;
        const double t = term / (a + n);
        sum += t;
        if (fabs(t) <= KILN_MACHEP * fabs(sum)) break;
        n += 1.0;
      }
      const double log_x = log(x);
      return -expm1(a * log_x - kiln_ln_gamma_1p(a)) - a * pow(x, a) / tgamma(1.0 + a) * sum;
    }
    const double d = kiln_gamma_inc_prefactor(a, x);
    double term = 1.0, sum = 1.0, k = 1.0;
    bool converged = d == 0.0;
    for (int i = 0; i < 100000; ++i) {
      if (converged) break;
      term *= x / (a + k);
      sum += term;
      converged = term <= KILN_MACHEP * sum;
      k += 1.0;
    }
    if (!converged) return nan;
    const double p = d * sum;
    return lower ? p : 1.0 - p;
  }
  const double d = kiln_gamma_inc_prefactor(a, x);
  if (d == 0.0) return lower ? 1.0 : 0.0;
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, dd = 1.0 / b, h = dd, i = 1.0;
  bool converged = false;
  for (int it = 0; it < 100000; ++it) {
    const double an = -i * (i - a);
    b += 2.0;
    dd = an * dd + b;
    if (fabs(dd) < tiny) dd = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    dd = 1.0 / dd;
    const double step = dd * c;
    h *= step;
    if (fabs(step - 1.0) <= KILN_MACHEP) {
      converged = true;
      break;
    }
    i += 1.0;
  }
  if (!converged) return nan;
  const double q = a * d * h;
  return lower ? 1.0 - q : q;
}

// torch.special's orthogonal polynomials: kiln_math::polynomials (ATen's
// algorithms in double, an infinity of the right sign where a value
// overflows, at most 2^16 recurrence steps), the same code. `kind` is the
// index in Polynomial::ALL; `single`: the values are f32 (Hermite's degree
// limit is 128 then, else 512).
#define KILN_F64_INF __longlong_as_double(0x7ff0000000000000LL)
#define KILN_MAX_RECURRENCE 65536LL
__device__ long long kiln_degree(double n) {
  // C's truncation, with x86's i64::MIN for NaN and values beyond i64.
  if (!(n >= -9.223372036854775808e18 && n < 9.223372036854775808e18)) return -9223372036854775807LL - 1;
  return (long long)n;
}
__device__ double kiln_parity(long long n, double v) { return n % 2 == 0 ? v : -v; }
__device__ double kiln_signed_inf(double x, long long n) {
  return x < 0.0 && n % 2 != 0 ? -KILN_F64_INF : KILN_F64_INF;
}
__device__ double kiln_chebyshev(int kind, double x, long long n, long long closed_above) {
  // kind: 0 T, 1 U, 2 V, 3 W.
  const double nf = (double)n, n1 = (double)((unsigned long long)n + 1ULL);
  const double n2 = (double)(2ULL * (unsigned long long)n + 1ULL);
  if (fabs(x) == 1.0) {
    const bool pos = x > 0.0;
    if (kind == 0) return pos ? 1.0 : kiln_parity(n, 1.0);
    if (kind == 1) return pos ? n1 : kiln_parity(n, n1);
    if (kind == 2) return pos ? 1.0 : kiln_parity(n, n2);
    return pos ? n2 : kiln_parity(n, 1.0);
  }
  if (n > closed_above && fabs(x) < 1.0) {
    const double a = acos(x);
    if (kind == 0) return cos(nf * a);
    if (kind == 1) return sin(a) != 0.0 ? sin(n1 * a) / sin(a) : n1 * cos(n1 * a) / x;
    if (kind == 2) return sin(a / 2.0) != 1.0 ? cos((nf + 0.5) * a) / cos(a / 2.0) : kiln_parity(n, n2);
    if (cos(a / 2.0) != 1.0) return sin((nf + 0.5) * a) / sin(a / 2.0);
    return x > 0.0 ? n2 : kiln_parity(n, 1.0);
  }
  const double first = kind == 0 ? x : kind == 1 ? x + x : kind == 2 ? x + x - 1.0 : x + x + 1.0;
  if (n == 0) return 1.0;
  if (n == 1) return first;
  if (x != x) return KILN_F64_NAN;
  if (fabs(x) == KILN_F64_INF) return kiln_signed_inf(x, n);
  if (n > KILN_MAX_RECURRENCE) {
    const double ax = fabs(x), t = log(ax + sqrt(ax - 1.0) * sqrt(ax + 1.0)), half = (nf + 0.5) * t;
    if (t == KILN_F64_INF) return kiln_signed_inf(x, n);
    const double v = cosh(half) / cosh(t / 2.0), w = sinh(half) / sinh(t / 2.0);
    const double m = kind == 0 ? cosh(nf * t) : kind == 1 ? sinh(n1 * t) / sinh(t) : (kind == 2) == (x > 0.0) ? v : w;
    return x > 0.0 ? m : kiln_parity(n, m);
  }
  double p = 1.0, q = first;
  for (long long k = 2; k <= n; ++k) {
    const double r = (x + x) * q - p;
    if (fabs(r) == KILN_F64_INF) return kiln_signed_inf(x, n);
    p = q;
    q = r;
  }
  return q;
}
// One step's bookkeeping of a rescaled recurrence: when the newest term
// passes 2^512, both terms are scaled by 2^-512 (exactly but in the
// subnormals). (A step that overflows returns the leading term's infinity
// at the call.)
__device__ void kiln_rescale(double& p, double& q, unsigned& scaled) {
  if (fabs(q) > ldexp(1.0, 512)) {
    p *= ldexp(1.0, -512);
    q *= ldexp(1.0, -512);
    scaled += 1;
  }
}
__device__ double kiln_unscale(double q, unsigned scaled) {
  for (unsigned i = 0; i < scaled; ++i) q *= ldexp(1.0, 512);
  return q;
}
__device__ double kiln_polynomial(int kind, double x, double n_value, int single) {
  const long long n = kiln_degree(n_value);
  if (n < 0) return 0.0;
  const double y = x + x - 1.0;
  switch (kind) {
    case 0: return kiln_chebyshev(0, x, n, 6);
    case 1: return kiln_chebyshev(1, x, n, 8);
    case 2: return kiln_chebyshev(2, x, n, 8);
    case 3: return kiln_chebyshev(3, x, n, 8);
    case 4: return kiln_chebyshev(0, y, n, 6);
    case 5: return kiln_chebyshev(1, y, n, 6);
    case 6: return kiln_chebyshev(2, y, n, 6);
    case 7: return kiln_chebyshev(3, y, n, 4);
    default: break;
  }
  double p = 1.0, q;
  unsigned scaled = 0;
  if (kind == 8 || kind == 9) {  // Hermite H, He
    q = kind == 8 ? x + x : x;
    if (n == 0) return 1.0;
    if (n == 1) return q;
    if (n > (single ? 128 : 512)) return KILN_F64_NAN;
    if (fabs(x) == KILN_F64_INF) return kiln_signed_inf(x, n);
    for (long long k = 1; k < n; ++k) {
      const double r = kind == 8 ? (x + x) * q - (double)(2 * k) * p : x * q - (double)k * p;
      if (fabs(r) == KILN_F64_INF) return kiln_signed_inf(x, n);
      p = q;
      q = r;
      kiln_rescale(p, q, scaled);
    }
    return kiln_unscale(q, scaled);
  }
  if (kind == 10) {  // Laguerre
    if (fabs(x) == 0.0 || n == 0) return 1.0;
    q = 1.0 - x;
    if (n == 1) return q;
    if (fabs(x) == KILN_F64_INF) return kiln_signed_inf(-x, n);
    if (x != x || n > KILN_MAX_RECURRENCE) return KILN_F64_NAN;
    for (long long k = 1; k < n; ++k) {
      const double kf = (double)k, r = ((kf + kf + (1.0 - x)) * q - kf * p) / (kf + 1.0);
      if (fabs(r) == KILN_F64_INF) return kiln_signed_inf(-x, n);
      p = q;
      q = r;
      kiln_rescale(p, q, scaled);
    }
    return kiln_unscale(q, scaled);
  }
  // Legendre
  if (fabs(x) == 1.0) return x > 0.0 ? 1.0 : kiln_parity(n, 1.0);
  if (n == 0) return 1.0;
  if (n == 1) return x;
  if (fabs(x) == KILN_F64_INF) return kiln_signed_inf(x, n);
  if (x != x || n > KILN_MAX_RECURRENCE) return KILN_F64_NAN;
  q = x;
  for (long long k = 1; k < n; ++k) {
    const double kf = (double)k, r = ((kf + kf + 1.0) * x * q - kf * p) / (kf + 1.0);
    if (fabs(r) == KILN_F64_INF) return kiln_signed_inf(x, n);
    p = q;
    q = r;
    kiln_rescale(p, q, scaled);
  }
  return kiln_unscale(q, scaled);
}

// Block reductions: warp shuffles, then one value per warp through shared
// memory. Every thread of the block calls them and gets the result.
struct kiln_add { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct kiln_mul { template <typename T> __device__ T operator()(T a, T b) const { return a * b; } };
struct kiln_or { __device__ int operator()(int a, int b) const { return a | b; } };
struct kiln_and { __device__ int operator()(int a, int b) const { return a & b; } };
struct kiln_maxf { template <typename T> __device__ T operator()(T a, T b) const { return kiln_max(a, b); } };
struct kiln_minf { template <typename T> __device__ T operator()(T a, T b) const { return kiln_min(a, b); } };

template <typename T, typename F>
__device__ T kiln_block_reduce(T v, T identity, F f) {
  __shared__ T part[32];
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)((blockDim.x + 31) >> 5) ? part[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) part[0] = v;
  }
  __syncthreads();
  return part[0];
}

// Warp reductions: shuffles down to lane 0, whose result every lane gets.
template <typename T, typename F>
__device__ T kiln_warp_reduce(T v, T identity, F f) {
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));
  return __shfl_sync(0xffffffffu, v, 0);
}

// Whether (b, bi) beats (a, ai) for argmax (MAX) or argmin: the extreme
// value, NaN the most extreme, the first position on ties.
template <bool MAX, typename T>
__device__ __forceinline__ bool kiln_arg_better(T a, long long ai, T b, long long bi) {
  if (bi < 0) return false;
  if (ai < 0) return true;
  const bool an = a != a, bn = b != b;
  if (an || bn) return an && bn ? bi < ai : bn;
  if (a == b) return bi < ai;
  return MAX ? b > a : b < a;
}

// The block's extreme position; its value too, through `best` if given.
template <bool MAX, typename T>
__device__ long long kiln_block_arg(T v, long long i, T* best = nullptr) {
  __shared__ T pv[32];
  __shared__ long long pi[32];
  for (int o = 16; o > 0; o >>= 1) {
    T ov = __shfl_down_sync(0xffffffffu, v, o);
    long long oi = __shfl_down_sync(0xffffffffu, i, o);
    if (kiln_arg_better<MAX>(v, i, ov, oi)) { v = ov; i = oi; }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) { pv[warp] = v; pi[warp] = i; }
  __syncthreads();
  if (warp == 0) {
    const bool have = lane < (int)((blockDim.x + 31) >> 5);
    v = have ? pv[lane] : v;
    i = have ? pi[lane] : -1;
    for (int o = 16; o > 0; o >>= 1) {
      T ov = __shfl_down_sync(0xffffffffu, v, o);
      long long oi = __shfl_down_sync(0xffffffffu, i, o);
      if (kiln_arg_better<MAX>(v, i, ov, oi)) { v = ov; i = oi; }
    }
    if (lane == 0) { pv[0] = v; pi[0] = i; }
  }
  __syncthreads();
  if (best) *best = pv[0];
  return pi[0];
}

template <bool MAX, typename T>
__device__ long long kiln_warp_arg(T v, long long i) {
  for (int o = 16; o > 0; o >>= 1) {
    T ov = __shfl_down_sync(0xffffffffu, v, o);
    long long oi = __shfl_down_sync(0xffffffffu, i, o);
    if (kiln_arg_better<MAX>(v, i, ov, oi)) { v = ov; i = oi; }
  }
  return __shfl_sync(0xffffffffu, i, 0);
}

// N elements of T moved as one vector of N * sizeof(T) bytes (2 to 16);
// the address must be aligned to that size.
template <int BYTES> struct kiln_vec_of;
template <> struct kiln_vec_of<16> { typedef uint4 type; };
template <> struct kiln_vec_of<8> { typedef uint2 type; };
template <> struct kiln_vec_of<4> { typedef unsigned int type; };
template <> struct kiln_vec_of<2> { typedef unsigned short type; };
template <typename T, int N> union kiln_pack {
  typename kiln_vec_of<N * sizeof(T)>::type v;
  T e[N];
};
template <typename T, int N> __device__ __forceinline__ kiln_pack<T, N> kiln_vload(const T* p) {
  kiln_pack<T, N> r;
  r.v = *reinterpret_cast<const typename kiln_vec_of<N * sizeof(T)>::type*>(p);
  return r;
}
template <typename T, int N> __device__ __forceinline__ void kiln_vstore(T* p, const kiln_pack<T, N>& x) {
  *reinterpret_cast<typename kiln_vec_of<N * sizeof(T)>::type*>(p) = x.v;
}
