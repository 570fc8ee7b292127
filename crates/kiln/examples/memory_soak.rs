//! The resident set of a long-running process using Kiln, for
//! BENCHMARKS.md ("Memory"): RSS (VmRSS) after a number of iterations of
//! one workload, with Kiln's own counters beside it.
//!
//! ```text
//! cargo run --release -p kiln --example memory_soak -- steady 10000
//! cargo run --release -p kiln --example memory_soak -- shapes 10000
//! ```
//!
//! - `steady`: one program (a `[1000, 64]` f32 pointwise chain and a row
//!   reduction), compiled once, run on a fresh input each iteration
//!   (`Tensor::from_vec`), everything dropped after the run.
//! - `shapes`: a program of a new shape `[n, 64]` each iteration (n = 1,
//!   2, ...; past 2000 it starts over at 1), traced, compiled, run once,
//!   dropped.
//!
//! Prints one line per checkpoint (0, 250, 500, 1000, 2000, 5000, 10000
//! and the last iteration): iterations, RSS in MB, Kiln's live, pooled and
//! code bytes, program cache entries.

use kiln::runtime::Tensor as Data;
use kiln::{DType, Device, TensorSpec, memory_stats, trace};

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn program(n: i64) -> kiln::Result<kiln::Traced> {
    trace(&[TensorSpec::new([n, 64], DType::F32).name("x")], |v| {
        let y = (&v[0] * 2.0 + 1.0).tanh();
        let s = y.sum(&[1], true);
        vec![&y - &s, s.exp()]
    })
}

fn input(n: i64, seed: usize) -> kiln::Result<Data> {
    let values: Vec<f32> = (0..n as usize * 64)
        .map(|i| ((i * 7 + seed) % 101) as f32 / 50.0 - 1.0)
        .collect();
    Data::from_vec(values, &[n, 64])
}

fn report(iteration: usize) {
    let s = memory_stats();
    println!(
        "{iteration:>6} iterations: RSS {:7.1} MB | live {:6.1} MB, pooled {:6.1} MB, code {:5.1} MB in {} modules, {} programs cached",
        rss_mb(),
        s.host.live_bytes as f64 / 1e6,
        s.host.pooled_bytes as f64 / 1e6,
        s.code_bytes as f64 / 1e6,
        s.code_modules,
        s.programs.entries
    );
}

fn main() -> kiln::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let workload = args.first().map_or("steady", String::as_str);
    let iterations: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let checkpoints = [0, 250, 500, 1000, 2000, 5000, 10000, iterations];
    println!("workload {workload}, {iterations} iterations");
    match workload {
        "steady" => {
            let compiled = program(1000)?.compile(Device::CPU)?;
            for i in 0..=iterations {
                if checkpoints.contains(&i) {
                    report(i);
                }
                if i < iterations {
                    let out = compiled.run(&[input(1000, i % 7)?])?;
                    std::hint::black_box(out);
                }
            }
        }
        "shapes" => {
            for i in 0..=iterations {
                if checkpoints.contains(&i) {
                    report(i);
                }
                if i < iterations {
                    let n = (i % 2000) as i64 + 1;
                    let compiled = program(n)?.compile(Device::CPU)?;
                    let out = compiled.run(&[input(n, i)?])?;
                    std::hint::black_box(out);
                }
            }
        }
        other => {
            eprintln!("unknown workload {other:?}: expected steady or shapes");
            std::process::exit(2);
        }
    }
    println!("{}", memory_stats());
    Ok(())
}
