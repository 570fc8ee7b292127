//! `kiln bench`: compile time (cold, again without caches, then cached), run time (median and
//! minimum of repeated runs), bytes moved and the rate they give.
//!
//! Bytes are the inputs read once plus the results written once: the
//! least traffic any implementation needs, so GB/s compares with STREAM.
//! Memory: the process's peak resident set, and Kiln's own counters
//! (peak live and pooled host bytes, machine code) from
//! `kiln::memory_stats`.

use std::path::Path;
use std::time::{Duration, Instant};

use kiln::runtime::random::tensor_for;
use kiln::{Compiler, Result};

use crate::{Common, Files, backend, io, load};

/// Timed runs stop after this much time (and at least `MIN_RUNS` runs).
const BUDGET: Duration = Duration::from_secs(2);
const MIN_RUNS: usize = 5;
const MAX_RUNS: usize = 200;
const WARMUP: usize = 2;

/// What `kiln bench` prints.
pub struct Report {
    /// One JSON object instead of a table.
    pub json: bool,
    /// Each step's time too.
    pub steps: bool,
}

pub fn bench(
    path: &Path,
    files: &Files,
    backend_name: &str,
    report: Report,
    common: &Common,
) -> Result<()> {
    let json = report.json;
    let module = load(path, common)?;
    let kind = backend(backend_name)?;
    let start = Instant::now();
    let compiled = Compiler::new(kind).compile(&module)?;
    let compile = start.elapsed();
    let start = Instant::now();
    Compiler::new(kind).compile(&module)?;
    let cached = start.elapsed();
    // The same program compiled again without caches, in a process whose
    // one-time set-up (the target, the thread pool) is done.
    let start = Instant::now();
    Compiler::new(kind).cache(false).compile(&module)?;
    let uncached = start.elapsed();

    let func = compiled.module().entry()?;
    let inputs = if files.inputs.is_none() && files.input.is_empty() {
        func.params
            .iter()
            .enumerate()
            .map(|(i, &p)| tensor_for(func.ty(p), i as u64 + 1))
            .collect::<Result<Vec<_>>>()?
    } else {
        io::load_inputs(func, files)?
    };
    let mut bytes: u64 = inputs.iter().map(|t| t.tensor_type().nbytes() as u64).sum();
    // Every input bound to the program, as `kiln run` binds them (weights
    // that only feed products held packed, in place of the originals).
    let bound = compiled.bind(inputs.into_iter().map(Some).collect())?;
    let inputs: [kiln::runtime::Tensor; 0] = [];
    for _ in 0..WARMUP {
        bound.run(&inputs)?;
    }
    let mut times = Vec::new();
    let began = Instant::now();
    while times.len() < MIN_RUNS || (began.elapsed() < BUDGET && times.len() < MAX_RUNS) {
        let t = Instant::now();
        let outputs = bound.run(&inputs)?;
        times.push(t.elapsed());
        if times.len() == 1 {
            bytes += outputs
                .iter()
                .map(|t| t.tensor_type().nbytes() as u64)
                .sum::<u64>();
        }
        // Results are dropped after the clock stops, as a caller would.
        drop(outputs);
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = times[times.len() / 2];
    let min = times[0];
    let gbps = bytes as f64 / median.as_secs_f64() / 1e9;
    // On a device with its own memory: the same runs without the copies.
    let device = match bound.device_times(&inputs, times.len()) {
        Some(device_times) => {
            let mut device_times = device_times?;
            device_times.sort();
            device_times.get(device_times.len() / 2).copied()
        }
        None => None,
    };
    let device_gbps = device.map(|d| bytes as f64 / d.as_secs_f64() / 1e9);
    let steps = if report.steps {
        bound
            .step_times(&inputs, times.len().min(50))
            .transpose()?
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let memory = kiln::memory_stats();
    if json {
        // Times in ms rounded to 0.1 µs, rates to 0.01.
        let round = |x: f64, digits: i32| {
            let scale = 10f64.powi(digits);
            (x * scale).round() / scale
        };
        let mut out = serde_json::json!({
            "compile_ms": round(ms(compile), 3),
            "cached_compile_ms": round(ms(cached), 4),
            "warm_compile_ms": round(ms(uncached), 3),
            "run_ms_median": round(ms(median), 3),
            "run_ms_min": round(ms(min), 3),
            "bytes": bytes,
            "gbps": round(gbps, 2),
            "runs": times.len(),
            "peak_rss_bytes": peak_rss(),
            "peak_live_bytes": memory.host.peak_live_bytes,
            "bound_packed_bytes": bound.packing().bytes(),
            "kept_copies_bytes": memory.packed.bytes,
            "pooled_bytes": memory.host.pooled_bytes,
            "code_bytes": memory.code_bytes,
        });
        if let (Some(d), Some(g)) = (device, device_gbps) {
            out["device_ms_median"] = round(ms(d), 4).into();
            out["device_gbps"] = round(g, 2).into();
        }
        if report.steps {
            out["steps"] = steps
                .iter()
                .map(|(name, t)| serde_json::json!({"step": name, "ms": round(ms(*t), 4)}))
                .collect();
        }
        println!("{out}");
    } else {
        println!("{} on {}", path.display(), compiled.backend());
        println!(
            "  compile      {:>10.3} ms (again without caches {:.3} ms, cached {:.4} ms)",
            ms(compile),
            ms(uncached),
            ms(cached)
        );
        println!(
            "  run median   {:>10.3} ms (min {:.3} ms, {} runs)",
            ms(median),
            ms(min),
            times.len()
        );
        println!("  bytes        {bytes:>10} ({gbps:.2} GB/s)");
        if let (Some(d), Some(g)) = (device, device_gbps) {
            println!(
                "  on device    {:>10.4} ms median ({g:.2} GB/s; inputs and results stay in device memory)",
                ms(d)
            );
        }
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        if let Some(peak) = peak_rss() {
            println!(
                "  peak memory  {:>10.1} MiB (resident, the whole process)",
                mib(peak as usize)
            );
        }
        println!(
            "  kiln memory  {:>10.1} MiB peak live, {:.1} MiB pooled, {:.2} MiB of machine code",
            mib(memory.host.peak_live_bytes),
            mib(memory.host.pooled_bytes),
            mib(memory.code_bytes)
        );
        let (bound, kept) = (bound.packing(), memory.packed);
        println!(
            "  weights      {:>10} bound packed in place ({:.1} MiB); {} packed or transformed copies kept ({:.1} MiB)",
            bound.weights(),
            mib(bound.bytes()),
            kept.entries,
            mib(kept.bytes)
        );
        if !steps.is_empty() {
            let total: f64 = steps.iter().map(|(_, t)| ms(*t)).sum();
            println!("  steps (median of each, synchronized; {total:.3} ms in all):");
            for (name, t) in &steps {
                println!(
                    "    {:>9.3} ms {:>5.1}%  {name}",
                    ms(*t),
                    100.0 * ms(*t) / total.max(1e-12)
                );
            }
        }
    }
    Ok(())
}

/// The process's peak resident memory in bytes (Linux), to compare with
/// the inputs and outputs a fused program needs.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
