//! The random ops' distributions. Their bits are Kiln's own (Philox at
//! each position, not PyTorch's Mersenne twister), so they are checked as
//! PyTorch's own tests check its generators: by distribution. Continuous
//! draws of 100,000 values pass a Kolmogorov–Smirnov test against the
//! distribution's CDF at the 0.1% level (D < 1.95/√n); discrete ones a
//! chi-square test of their frequencies (or a mean within 5 standard
//! errors); and the dropouts keep and scale exactly as PyTorch's formulas
//! say. Also: a seed gives the same values on every backend, whatever the
//! result's strides, and other seeds give other values. Dtypes, shapes and
//! PyTorch's refusals are in `torch_values.json` (`interp_values.rs`).

use kiln::{DType, Device, MemoryFormat, Tensor, TensorSpec, trace};
use kiln_runtime::Tensor as HostTensor;

const N: i64 = 100_000;

/// Runs a traced closure with no inputs (or the given ones) and returns
/// its results' values as f64, after checking that the interpreter and
/// the compiled program agree bit for bit.
fn draw(
    specs: &[TensorSpec],
    inputs: &[HostTensor],
    f: impl FnOnce(&[Tensor]) -> Vec<Tensor>,
) -> Vec<Vec<f64>> {
    let traced = trace(specs, f).unwrap();
    let compiled = traced.compile(Device::CPU).unwrap().run(inputs).unwrap();
    let interpreted = traced.interpret(inputs).unwrap();
    for (c, i) in compiled.iter().zip(&interpreted) {
        assert_eq!(c.shape(), i.shape());
        assert_eq!(
            c.values(),
            i.values(),
            "compiled and interpreted draws differ"
        );
    }
    compiled
        .iter()
        .map(|t| t.values().into_iter().map(|v| v.f64()).collect())
        .collect()
}

fn one(f: impl FnOnce() -> Tensor) -> Vec<f64> {
    draw(&[], &[], |_| vec![f()]).remove(0)
}

/// The Kolmogorov–Smirnov statistic of `values` against `cdf`.
fn ks(mut values: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = cdf(v);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

fn assert_ks(what: &str, values: Vec<f64>, cdf: impl Fn(f64) -> f64) {
    let n = values.len() as f64;
    let d = ks(values, cdf);
    assert!(
        d < 1.95 / n.sqrt(),
        "{what}: KS statistic {d} over {n} values"
    );
}

/// Pearson's chi-square of observed counts against expected ones.
fn chi_square(observed: &[f64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(o, e)| (o - e) * (o - e) / e)
        .sum()
}

/// The standard normal CDF.
fn phi(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

#[test]
fn rand_and_uniform_are_uniform() {
    let v = one(|| kiln::rand(&[N], Some(DType::F64), 1));
    assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
    assert_ks("rand f64", v, |x| x.clamp(0.0, 1.0));
    let v = one(|| kiln::rand(&[N], None, 2));
    assert_ks("rand f32", v, |x| x.clamp(0.0, 1.0));
    // f16 and bf16 hold 11 and 8 random bits: never 1 after rounding.
    for (dtype, bits) in [(DType::F16, 11), (DType::BF16, 8)] {
        let v = one(|| kiln::rand(&[N], Some(dtype), 3));
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)), "{dtype}");
        let grid = (1u64 << bits) as f64;
        assert!(v.iter().all(|x| (x * grid).fract() == 0.0), "{dtype}");
    }
    let v = draw(&[TensorSpec::new([N], DType::F64)], &[zeros(N)], |xs| {
        vec![xs[0].uniform(-2.0, 3.0, 4)]
    })
    .remove(0);
    assert!(v.iter().all(|x| (-2.0..3.0).contains(x)));
    assert_ks("uniform(-2, 3)", v, |x| ((x + 2.0) / 5.0).clamp(0.0, 1.0));
}

fn zeros(n: i64) -> HostTensor {
    HostTensor::from_vec(vec![0.0f64; n as usize], &[n]).unwrap()
}

#[test]
fn normal_draws_are_normal() {
    let v = one(|| kiln::randn(&[N], Some(DType::F64), 5));
    assert_ks("randn", v, phi);
    let v = one(|| kiln::normal_scalars(3.0, 0.5, &[N], Some(DType::F64), 6));
    assert_ks("normal(3, 0.5)", v, |x| phi((x - 3.0) / 0.5));
    // A tensor mean, one number std: each element around its own mean.
    let means = HostTensor::from_vec(
        (0..N).map(|i| (i % 7) as f64 - 3.0).collect::<Vec<_>>(),
        &[N],
    )
    .unwrap();
    let v = draw(&[TensorSpec::new([N], DType::F64)], &[means], |xs| {
        vec![xs[0].normal_around(2.0, 7)]
    })
    .remove(0);
    let standardized = v
        .iter()
        .enumerate()
        .map(|(i, x)| (x - ((i % 7) as f64 - 3.0)) / 2.0)
        .collect();
    assert_ks("normal(mean tensor, 2)", standardized, phi);
    let v = draw(&[TensorSpec::new([N], DType::F64)], &[zeros(N)], |xs| {
        vec![xs[0].log_normal(0.5, 0.25, 8)]
    })
    .remove(0);
    assert!(v.iter().all(|x| *x > 0.0));
    let logs = v.iter().map(|x| x.ln()).collect();
    assert_ks("log_normal(0.5, 0.25)", logs, |x| phi((x - 0.5) / 0.25));
}

#[test]
fn exponential_and_cauchy_follow_their_cdfs() {
    let v = draw(&[TensorSpec::new([N], DType::F64)], &[zeros(N)], |xs| {
        vec![xs[0].exponential(2.0, 9), xs[0].cauchy(1.0, 0.5, 10)]
    });
    assert!(v[0].iter().all(|x| *x >= 0.0 && x.is_finite()));
    assert_ks("exponential(2)", v[0].clone(), |x| {
        1.0 - (-2.0 * x.max(0.0)).exp()
    });
    assert!(v[1].iter().all(|x| x.is_finite()));
    assert_ks("cauchy(1, 0.5)", v[1].clone(), |x| {
        0.5 + ((x - 1.0) / 0.5).atan() / std::f64::consts::PI
    });
}

#[test]
fn discrete_draws_have_their_frequencies() {
    // randint over [-5, 7): twelve equally likely values.
    let v = one(|| kiln::randint(-5, 7, &[N], None, 11));
    let mut counts = vec![0.0; 12];
    for x in &v {
        assert!((-5.0..7.0).contains(x) && x.fract() == 0.0);
        counts[(*x + 5.0) as usize] += 1.0;
    }
    let chi = chi_square(&counts, &[N as f64 / 12.0; 12]);
    assert!(
        chi < 31.3,
        "randint: chi-square {chi} over 11 degrees of freedom"
    );

    // bernoulli with p = 0.3, and with each element's own probability.
    let probabilities: Vec<f64> = (0..N)
        .map(|i| [0.0, 0.25, 0.5, 1.0][i as usize % 4])
        .collect();
    let p = HostTensor::from_vec(probabilities.clone(), &[N]).unwrap();
    let v = draw(&[TensorSpec::new([N], DType::F64)], &[p], |xs| {
        vec![xs[0].bernoulli_p(0.3, 12), xs[0].bernoulli(13)]
    });
    let mean = v[0].iter().sum::<f64>() / N as f64;
    let se = (0.3f64 * 0.7 / N as f64).sqrt();
    assert!((mean - 0.3).abs() < 5.0 * se, "bernoulli(0.3): mean {mean}");
    for (k, want) in [(0usize, 0.0), (1, 0.25), (2, 0.5), (3, 1.0)] {
        let picked: Vec<f64> = v[1].iter().skip(k).step_by(4).copied().collect();
        let mean = picked.iter().sum::<f64>() / picked.len() as f64;
        let se = (want * (1.0 - want) / picked.len() as f64)
            .sqrt()
            .max(1e-12);
        assert!(
            (mean - want).abs() <= 5.0 * se,
            "bernoulli(p = {want}): mean {mean}"
        );
    }

    // geometric(0.3): at least 1; P(X = k) = 0.7^(k−1)·0.3.
    let v = draw(
        &[TensorSpec::new([N], DType::I64)],
        &[HostTensor::from_vec(vec![0i64; N as usize], &[N]).unwrap()],
        |xs| vec![xs[0].geometric(0.3, 14)],
    )
    .remove(0);
    assert!(v.iter().all(|x| *x >= 1.0));
    let mut counts = vec![0.0; 8];
    for x in &v {
        counts[(*x as usize).min(8) - 1] += 1.0;
    }
    let expected: Vec<f64> = (1..=8)
        .map(|k| {
            let p = if k < 8 {
                0.7f64.powi(k - 1) * 0.3
            } else {
                0.7f64.powi(7)
            };
            p * N as f64
        })
        .collect();
    let chi = chi_square(&counts, &expected);
    assert!(
        chi < 24.3,
        "geometric: chi-square {chi} over 7 degrees of freedom"
    );
}

#[test]
fn multinomial_draws_in_proportion() {
    let weights = HostTensor::from_vec(vec![1.0f32, 0.0, 2.0, 5.0, 2.0], &[1, 5]).unwrap();
    let spec = [TensorSpec::new([1, 5], DType::F32)];
    let v = draw(&spec, &[weights.clone()], |xs| {
        vec![xs[0].multinomial(20_000, true, 15)]
    })
    .remove(0);
    let mut counts = [0.0; 5];
    for x in &v {
        counts[*x as usize] += 1.0;
    }
    assert_eq!(counts[1], 0.0, "a category of weight 0 is never drawn");
    let expected: Vec<f64> = [1.0, 2.0, 5.0, 2.0]
        .iter()
        .map(|w| w / 10.0 * 20_000.0)
        .collect();
    let observed = [counts[0], counts[2], counts[3], counts[4]];
    let chi = chi_square(&observed, &expected);
    assert!(chi < 16.3, "multinomial with replacement: chi-square {chi}");

    // Without replacement: distinct positions per row; the first draw in
    // proportion to the weights, weight-0 categories only after the rest.
    let rows = 4000;
    let w: Vec<f32> = (0..rows)
        .flat_map(|_| [1.0f32, 0.0, 2.0, 5.0, 2.0])
        .collect();
    let weights = HostTensor::from_vec(w, &[rows, 5]).unwrap();
    let spec = [TensorSpec::new([rows, 5], DType::F32)];
    let v = draw(&spec, &[weights], |xs| {
        vec![xs[0].multinomial(5, false, 16)]
    })
    .remove(0);
    let mut first = [0.0; 5];
    for row in v.chunks(5) {
        let mut seen = [false; 5];
        for x in row {
            assert!(!seen[*x as usize], "row {row:?} repeats a category");
            seen[*x as usize] = true;
        }
        assert_eq!(row[4], 1.0, "the weight-0 category comes last: {row:?}");
        first[row[0] as usize] += 1.0;
    }
    let expected: Vec<f64> = [1.0, 2.0, 5.0, 2.0]
        .iter()
        .map(|w| w / 10.0 * rows as f64)
        .collect();
    let chi = chi_square(&[first[0], first[2], first[3], first[4]], &expected);
    assert!(
        chi < 16.3,
        "multinomial without replacement: chi-square {chi}"
    );
}

#[test]
fn dropouts_keep_and_scale_as_pytorch() {
    let n = 20_000;
    let x: Vec<f32> = (0..n).map(|i| 1.0 + (i % 13) as f32 * 0.25).collect();
    let input = HostTensor::from_vec(x.clone(), &[n]).unwrap();
    let v = draw(&[TensorSpec::new([n], DType::F32)], &[input], |xs| {
        let (out, mask) = xs[0].native_dropout(0.4, true, 18);
        vec![
            xs[0].dropout(0.25, true, 17),
            out,
            mask,
            xs[0].dropout(0.25, false, 17),
        ]
    });
    // dropout: x · (1 / 0.75 in f32), or 0.
    let scale = 1.0f32 / 0.75f32;
    let zeroed = v[0].iter().filter(|y| **y == 0.0).count() as f64 / n as f64;
    assert!(
        (zeroed - 0.25).abs() < 5.0 * (0.25f64 * 0.75 / n as f64).sqrt(),
        "{zeroed}"
    );
    for (y, x) in v[0].iter().zip(&x) {
        assert!(*y == 0.0 || *y == f64::from(x * scale), "{y} from {x}");
    }
    // native_dropout: (x · mask) · (1 / 0.6) where the mask says.
    let scale = (1.0f64 / 0.6) as f32;
    for ((y, m), x) in v[1].iter().zip(&v[2]).zip(&x) {
        let want = if *m == 1.0 { x * scale } else { 0.0 };
        assert_eq!(*y, f64::from(want));
    }
    let kept = v[2].iter().sum::<f64>() / n as f64;
    assert!(
        (kept - 0.6).abs() < 5.0 * (0.24f64 / n as f64).sqrt(),
        "{kept}"
    );
    // Not training: the input.
    assert!(v[3].iter().zip(&x).all(|(y, x)| *y == f64::from(*x)));

    // feature_dropout zeroes whole channels.
    let input = HostTensor::from_vec(vec![1.0f32; 64 * 32 * 9], &[64, 32, 3, 3]).unwrap();
    let v = draw(
        &[TensorSpec::new([64, 32, 3, 3], DType::F32)],
        &[input],
        |xs| vec![xs[0].feature_dropout(0.5, true, 19)],
    )
    .remove(0);
    let mut dropped = 0;
    for channel in v.chunks(9) {
        assert!(channel.iter().all(|y| *y == channel[0]), "{channel:?}");
        assert!(channel[0] == 0.0 || channel[0] == 2.0);
        dropped += usize::from(channel[0] == 0.0);
    }
    let share = dropped as f64 / (64.0 * 32.0);
    assert!(
        (share - 0.5).abs() < 5.0 * (0.25f64 / 2048.0).sqrt(),
        "{share}"
    );
}

#[test]
fn values_depend_on_the_seed_and_position_only() {
    let shape = [2i64, 3, 4, 5];
    let n = shape.iter().product::<i64>() as usize;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let contiguous = HostTensor::from_vec(data, &shape).unwrap();
    let spec = |format| TensorSpec::new(shape, DType::F32).memory_format(format);
    let a = draw(
        &[spec(MemoryFormat::Contiguous)],
        &[contiguous.clone()],
        |xs| {
            vec![
                xs[0].uniform(0.0, 1.0, 21),
                xs[0].uniform(0.0, 1.0, 21),
                xs[0].uniform(0.0, 1.0, 22),
            ]
        },
    );
    assert_eq!(a[0], a[1], "one seed, one draw");
    assert_ne!(a[0], a[2], "another seed, other values");
    // The same logical values from a channels_last input (whose result is
    // channels_last too).
    let cl = contiguous.with_strides(&[60, 1, 15, 3]).unwrap();
    let b = draw(&[spec(MemoryFormat::ChannelsLast)], &[cl], |xs| {
        vec![xs[0].uniform(0.0, 1.0, 21)]
    });
    assert_eq!(a[0], b[0]);
    // rand of that shape draws the same numbers as uniform(0, 1).
    let r = one(|| kiln::rand(&shape, None, 21));
    assert_eq!(a[0], r);
}

#[test]
fn bad_probabilities_are_run_time_errors() {
    let p = HostTensor::from_vec(vec![0.5f32, 1.5], &[2]).unwrap();
    let traced = trace(&[TensorSpec::new([2], DType::F32)], |xs| xs[0].bernoulli(1)).unwrap();
    let err = traced.compile(Device::CPU).unwrap().run(&[p]).unwrap_err();
    assert!(
        err.to_string().contains("Expected p_in >= 0 && p_in <= 1"),
        "{err}"
    );
    let w = HostTensor::from_vec(vec![1.0f32, -1.0], &[2]).unwrap();
    let traced = trace(&[TensorSpec::new([2], DType::F32)], |xs| {
        xs[0].multinomial(1, true, 1)
    })
    .unwrap();
    let err = traced.compile(Device::CPU).unwrap().run(&[w]).unwrap_err();
    assert!(
        err.to_string()
            .contains("probability tensor contains either"),
        "{err}"
    );
    let z = HostTensor::from_vec(vec![0.0f32, 0.0], &[2]).unwrap();
    let err = traced.compile(Device::CPU).unwrap().run(&[z]).unwrap_err();
    assert!(
        err.to_string().contains("sum of probabilities <= 0"),
        "{err}"
    );
}
