//! Kiln's benchmark workloads (issue 7), each against baselines measured
//! in the same run: a plain Rust loop for the same computation (what a
//! user would write by hand), and for the chain the reference interpreter
//! (on a 1/16 slice: it is some 100× slower).
//!
//!     cargo bench -p kiln --bench workloads
//!
//! Every compiled run allocates its output, as a caller's would; Kiln's
//! caching allocator hands back the pages of the last run's dropped output.
//! `BENCHMARKS.md` records the figures.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use half::f16;
use kiln::runtime::Tensor;
use kiln::runtime::random::Stream;
use kiln::{Compiled, DType, Device, MemoryFormat, TensorSpec, trace};

const N: usize = 16 << 20;

fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut s = Stream::new(seed);
    (0..n).map(|_| s.unit() as f32 * 4.0).collect()
}

fn tensor<T: kiln::runtime::Element>(data: Vec<T>, shape: &[i64]) -> Tensor {
    Tensor::from_vec(data, shape).expect("a valid tensor")
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

fn compile(specs: &[TensorSpec], f: impl FnOnce(&[kiln::Tensor]) -> kiln::Tensor) -> Compiled {
    trace(specs, f)
        .and_then(|t| t.compile(Device::CPU))
        .expect("the workload compiles")
}

fn chain(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain_f32_16M");
    g.throughput(Throughput::Bytes((N * 4 * 4) as u64));
    let specs: Vec<TensorSpec> = (0..3)
        .map(|_| TensorSpec::new([N as i64], DType::F32))
        .collect();
    let program = compile(&specs, |v| (((&v[0] * 2.0) + &v[1]).relu() * &v[2]) - 1.0);
    let (x, y, z) = (floats(N, 1), floats(N, 2), floats(N, 3));
    let inputs = [
        tensor(x.clone(), &[N as i64]),
        tensor(y.clone(), &[N as i64]),
        tensor(z.clone(), &[N as i64]),
    ];
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&inputs).unwrap()))
    });
    g.bench_function("rust_loop", |b| {
        b.iter(|| {
            let out: Vec<f32> = x
                .iter()
                .zip(&y)
                .zip(&z)
                .map(|((x, y), z)| (x * 2.0 + y).max(0.0) * z - 1.0)
                .collect();
            black_box(out)
        })
    });
    g.finish();

    let mut g = c.benchmark_group("chain_f32_1M");
    let m = N / 16;
    g.throughput(Throughput::Bytes((m * 4 * 4) as u64));
    let small_specs: Vec<TensorSpec> = (0..3)
        .map(|_| TensorSpec::new([m as i64], DType::F32))
        .collect();
    let traced = trace(&small_specs, |v| {
        (((&v[0] * 2.0) + &v[1]).relu() * &v[2]) - 1.0
    })
    .unwrap();
    let small: Vec<Tensor> = (0..3)
        .map(|i| tensor(floats(m, i + 1), &[m as i64]))
        .collect();
    let compiled = traced.compile(Device::CPU).unwrap();
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(compiled.run(&small).unwrap()))
    });
    g.bench_function("interpreter", |b| {
        b.iter(|| black_box(traced.interpret(&small).unwrap()))
    });
    g.finish();
}

fn chain_mixed(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain_mixed_16M");
    g.throughput(Throughput::Bytes((N * (4 + 2 + 8 + 8)) as u64));
    let specs = [
        TensorSpec::new([N as i64], DType::I32),
        TensorSpec::new([N as i64], DType::F16),
        TensorSpec::new([N as i64], DType::F64),
    ];
    let program = compile(&specs, |v| (((&v[0] * 2.0) + &v[1]).relu() * &v[2]) - 1.0);
    let mut s = Stream::new(4);
    let x: Vec<i32> = (0..N).map(|_| (s.next_u64() % 19) as i32 - 9).collect();
    let y: Vec<f16> = floats(N, 5).into_iter().map(f16::from_f32).collect();
    let z: Vec<f64> = floats(N, 6).into_iter().map(f64::from).collect();
    let inputs = [
        tensor(x.clone(), &[N as i64]),
        tensor(y.clone(), &[N as i64]),
        tensor(z.clone(), &[N as i64]),
    ];
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&inputs).unwrap()))
    });
    g.bench_function("rust_loop", |b| {
        b.iter(|| {
            let out: Vec<f64> = x
                .iter()
                .zip(&y)
                .zip(&z)
                .map(|((&x, &y), &z)| {
                    let a = x as f32 * 2.0 + y.to_f32();
                    a.max(0.0) as f64 * z - 1.0
                })
                .collect();
            black_box(out)
        })
    });
    g.finish();
}

fn rows(c: &mut Criterion) {
    let (r, n) = (4096usize, 4096usize);
    let x = floats(r * n, 7);
    let input = [tensor(x.clone(), &[r as i64, n as i64])];
    let spec = [TensorSpec::new([r as i64, n as i64], DType::F32)];

    let mut g = c.benchmark_group("softmax_4096x4096");
    g.throughput(Throughput::Bytes((r * n * 8) as u64));
    let program = compile(&spec, |v| v[0].softmax(1));
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&input).unwrap()))
    });
    g.bench_function("rust_loop", |b| {
        b.iter(|| {
            let mut out = vec![0f32; r * n];
            for (row, o) in x.chunks(n).zip(out.chunks_mut(n)) {
                let m = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
                let mut sum = 0.0;
                for (o, &v) in o.iter_mut().zip(row) {
                    *o = (v - m).exp();
                    sum += *o;
                }
                o.iter_mut().for_each(|v| *v /= sum);
            }
            black_box(out)
        })
    });
    g.finish();

    let mut g = c.benchmark_group("sum_rows_4096x4096");
    g.throughput(Throughput::Bytes((r * n * 4) as u64));
    let program = compile(&spec, |v| v[0].sum(&[1], false));
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&input).unwrap()))
    });
    g.bench_function("rust_loop", |b| {
        b.iter(|| {
            black_box(
                x.chunks(n)
                    .map(|row| row.iter().sum::<f32>())
                    .collect::<Vec<_>>(),
            )
        })
    });
    g.finish();

    let mut g = c.benchmark_group("transposed_add_4096x4096");
    g.throughput(Throughput::Bytes((r * n * 12) as u64));
    let specs = [spec[0].clone(), spec[0].clone()];
    let program = compile(&specs, |v| &v[0].t() + &v[1]);
    let y = floats(r * n, 8);
    let inputs = [input[0].clone(), tensor(y.clone(), &[r as i64, n as i64])];
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&inputs).unwrap()))
    });
    g.bench_function("rust_loop", |b| {
        b.iter(|| {
            let mut out = vec![0f32; r * n];
            for i in 0..r {
                for j in 0..n {
                    out[i * n + j] = x[j * r + i] + y[i * n + j];
                }
            }
            black_box(out)
        })
    });
    g.finish();
}

fn layer_norm(c: &mut Criterion) {
    let (r, n) = (8192usize, 1024usize);
    let x = floats(r * n, 9);
    let input = [tensor(x.clone(), &[r as i64, n as i64])];
    let mut g = c.benchmark_group("layer_norm_8192x1024");
    g.throughput(Throughput::Bytes((r * n * 8) as u64));
    let program = compile(&[TensorSpec::new([r as i64, n as i64], DType::F32)], |v| {
        v[0].layer_norm(&[n as i64], None, None, 1e-5)
    });
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&input).unwrap()))
    });
    g.bench_function("rust_loop", |b| {
        b.iter(|| {
            let mut out = vec![0f32; r * n];
            for (row, o) in x.chunks(n).zip(out.chunks_mut(n)) {
                let mean = row.iter().sum::<f32>() / n as f32;
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
                let rstd = 1.0 / (var + 1e-5).sqrt();
                for (o, &v) in o.iter_mut().zip(row) {
                    *o = (v - mean) * rstd;
                }
            }
            black_box(out)
        })
    });
    g.finish();
}

fn sum_all(c: &mut Criterion) {
    let x = floats(N, 10);
    let input = [tensor(x.clone(), &[N as i64])];
    let mut g = c.benchmark_group("sum_16M");
    g.throughput(Throughput::Bytes((N * 4) as u64));
    let program = compile(&[TensorSpec::new([N as i64], DType::F32)], |v| {
        v[0].sum(&[], false)
    });
    g.bench_function("kiln", |b| {
        b.iter(|| black_box(program.run(&input).unwrap()))
    });
    g.bench_function("rust_loop", |b| b.iter(|| black_box(x.iter().sum::<f32>())));
    g.finish();
}

fn matmul(c: &mut Criterion) {
    for n in [1024usize, 4096] {
        let mut g = c.benchmark_group(format!("matmul_{n}"));
        g.throughput(Throughput::Elements((2 * n * n * n) as u64));
        let spec = TensorSpec::new([n as i64, n as i64], DType::F32);
        let program = compile(&[spec.clone(), spec], |v| v[0].matmul(&v[1]));
        let (a, b) = (floats(n * n, 11), floats(n * n, 12));
        let inputs = [
            tensor(a.clone(), &[n as i64, n as i64]),
            tensor(b.clone(), &[n as i64, n as i64]),
        ];
        g.bench_function("kiln", |bch| {
            bch.iter(|| black_box(program.run(&inputs).unwrap()))
        });
        if n == 1024 {
            g.bench_function("rust_loop", |bch| {
                bch.iter(|| {
                    // i-k-j order: the inner loop streams rows (vectorizable).
                    let mut out = vec![0f32; n * n];
                    for i in 0..n {
                        for k in 0..n {
                            let aik = a[i * n + k];
                            let row = &b[k * n..(k + 1) * n];
                            for (o, &bv) in out[i * n..(i + 1) * n].iter_mut().zip(row) {
                                *o += aik * bv;
                            }
                        }
                    }
                    black_box(out)
                })
            });
        }
        g.finish();
    }
}

fn channels_last(c: &mut Criterion) {
    let (n, ch, h, w) = (32usize, 64usize, 56usize, 56usize);
    let numel = n * ch * h * w;
    let mut g = c.benchmark_group("channels_last_relu_32x64x56x56");
    g.throughput(Throughput::Bytes((numel * 8) as u64));
    let specs = [
        TensorSpec::new([n as i64, ch as i64, h as i64, w as i64], DType::F32)
            .memory_format(MemoryFormat::ChannelsLast),
        TensorSpec::new([1, ch as i64, 1, 1], DType::F32),
        TensorSpec::new([1, ch as i64, 1, 1], DType::F32),
    ];
    let program = compile(&specs, |v| ((&v[0] * &v[1]) + &v[2]).relu());
    // The data in NHWC order, as channels_last stores it.
    let x = floats(numel, 13);
    let (s, b) = (floats(ch, 14), floats(ch, 15));
    let logical = {
        let t = Tensor::from_vec(x.clone(), &[n as i64, h as i64, w as i64, ch as i64]).unwrap();
        let g = t.geometry().permute(&[0, 3, 1, 2]).unwrap();
        t.view(g).unwrap()
    };
    let inputs = [
        logical,
        tensor(s.clone(), &[1, ch as i64, 1, 1]),
        tensor(b.clone(), &[1, ch as i64, 1, 1]),
    ];
    g.bench_function("kiln", |bch| {
        bch.iter(|| black_box(program.run(&inputs).unwrap()))
    });
    g.bench_function("rust_loop", |bch| {
        bch.iter(|| {
            let out: Vec<f32> = x
                .chunks(ch)
                .flat_map(|px| {
                    px.iter()
                        .zip(&s)
                        .zip(&b)
                        .map(|((v, s), b)| (v * s + b).max(0.0))
                })
                .collect();
            black_box(out)
        })
    });
    g.finish();
}

fn compile_latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile_chain");
    let specs: Vec<TensorSpec> = (0..3)
        .map(|_| TensorSpec::new([N as i64], DType::F32))
        .collect();
    let chain = |v: &[kiln::Tensor]| (((&v[0] * 2.0) + &v[1]).relu() * &v[2]) - 1.0;
    g.bench_function(BenchmarkId::new("trace_to_jit", "cold"), |b| {
        b.iter(|| {
            let traced = trace(&specs, chain).unwrap();
            black_box(
                kiln::Compiler::default()
                    .cache(false)
                    .compile(traced.module())
                    .unwrap(),
            )
        })
    });
    g.bench_function(BenchmarkId::new("trace_to_jit", "cached"), |b| {
        b.iter(|| {
            let traced = trace(&specs, chain).unwrap();
            black_box(kiln::Compiler::default().compile(traced.module()).unwrap())
        })
    });
    g.finish();
}

criterion_group! {
    name = workloads;
    config = config();
    targets = chain, chain_mixed, rows, layer_norm, sum_all, matmul, channels_last, compile_latency
}
criterion_main!(workloads);
