//! `kiln bench`: compile time (cold, then cached), run time (median and
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

pub fn bench(
    path: &Path,
    files: &Files,
    backend_name: &str,
    json: bool,
    common: &Common,
) -> Result<()> {
    let module = load(path, common)?;
    let kind = backend(backend_name)?;
    let start = Instant::now();
    let compiled = Compiler::new(kind).compile(&module)?;
    let compile = start.elapsed();
    let start = Instant::now();
    Compiler::new(kind).compile(&module)?;
    let cached = start.elapsed();

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
    for _ in 0..WARMUP {
        compiled.run(&inputs)?;
    }
    let mut times = Vec::new();
    let began = Instant::now();
    while times.len() < MIN_RUNS || (began.elapsed() < BUDGET && times.len() < MAX_RUNS) {
        let t = Instant::now();
        let outputs = compiled.run(&inputs)?;
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
    let device = match compiled.device_times(&inputs, times.len()) {
        Some(device_times) => {
            let mut device_times = device_times?;
            device_times.sort();
            device_times.get(device_times.len() / 2).copied()
        }
        None => None,
    };
    let device_gbps = device.map(|d| bytes as f64 / d.as_secs_f64() / 1e9);
    let memory = kiln::memory_stats();
    if json {
        let device_json = match (device, device_gbps) {
            (Some(d), Some(g)) => format!(
                ", \"device_ms_median\": {:.4}, \"device_gbps\": {g:.2}",
                ms(d)
            ),
            _ => String::new(),
        };
        let rss = peak_rss().map_or("null".to_string(), |b| b.to_string());
        println!(
            "{{\"compile_ms\": {:.3}, \"cached_compile_ms\": {:.4}, \"run_ms_median\": {:.3}, \"run_ms_min\": {:.3}, \"bytes\": {bytes}, \"gbps\": {gbps:.2}, \"runs\": {}{device_json}, \"peak_rss_bytes\": {rss}, \"peak_live_bytes\": {}, \"pooled_bytes\": {}, \"code_bytes\": {}}}",
            ms(compile),
            ms(cached),
            ms(median),
            ms(min),
            times.len(),
            memory.host.peak_live_bytes,
            memory.host.pooled_bytes,
            memory.code_bytes
        );
    } else {
        println!("{} on {}", path.display(), compiled.backend());
        println!(
            "  compile      {:>10.3} ms (cached {:.4} ms)",
            ms(compile),
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
