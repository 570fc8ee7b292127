//! How long the optimizer (issue 6) takes on graphs of 10, 100 and 1000
//! ops, against the baseline of every other pass of the pipeline on the
//! same graph, measured in the same run.
//!
//!     cargo bench -p kiln --bench optimize
//!
//! The graphs repeat a block of ten ops that gives every kind of rule work
//! (identities, a cast round trip, views to push through pointwise ops and
//! fold, a bound applied twice) and shares values between blocks, so
//! extraction must respect sharing. `BENCHMARKS.md` records the figures.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kiln::passes::PassManager;
use kiln::passes::cse::CsePass;
use kiln::passes::dce::DcePass;
use kiln::passes::optimize::{OptimizeConfig, OptimizePass};
use kiln::runtime::fold::InterpreterFold;
use kiln::{DefaultDType, Module};

/// A program of `blocks` blocks of ten ops on 64×64 tensors.
fn program(blocks: usize) -> String {
    let mut body = String::new();
    let mut x = "%x".to_string();
    for i in 0..blocks {
        body += &format!(
            "  %a{i} = mul {x}, 1.0
  %b{i} = add %a{i}, %y
  %c{i} = permute %b{i} {{dims = [1, 0]}}
  %d{i} = exp %c{i}
  %e{i} = permute %d{i} {{dims = [1, 0]}}
  %f{i} = cast %e{i} {{dtype = f64}}
  %g{i} = cast %f{i} {{dtype = f32}}
  %h{i} = neg %g{i}
  %k{i} = maximum %h{i}, %b{i}
  %m{i} = maximum %k{i}, %b{i}
"
        );
        x = format!("%m{i}");
    }
    format!(
        "func @main(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {{\n{body}  return {x}\n}}\n"
    )
}

/// The module as the optimizer receives it: promoted, laid out, decomposed.
fn prepared(blocks: usize) -> Module {
    let text = program(blocks);
    let mut module = kiln::parse_module("bench.kir", &text, DefaultDType::F32).expect("it parses");
    PassManager::standard()
        .until("decompose")
        .and_then(|p| p.run(&mut module))
        .expect("the passes run");
    module
}

fn optimize_time(c: &mut Criterion) {
    let mut g = c.benchmark_group("optimize");
    for ops in [10, 100, 1000] {
        let module = prepared(ops / 10);
        let optimizer = PassManager::new().with(OptimizePass::new(OptimizeConfig {
            fold: Some(Arc::new(InterpreterFold {
                default_dtype: DefaultDType::F32,
            })),
            // The benchmark measures the rules, not the default time limit.
            time_limit: Duration::from_secs(60),
            ..OptimizeConfig::default()
        }));
        g.bench_function(BenchmarkId::new("optimize", ops), |b| {
            b.iter_batched(
                || module.clone(),
                |mut m| {
                    optimizer.run(&mut m).expect("it optimizes");
                    black_box(m)
                },
                BatchSize::SmallInput,
            )
        });
        let text = program(ops / 10);
        let others = PassManager::standard()
            .until("decompose")
            .expect("a pass named decompose")
            .with(CsePass)
            .with(DcePass);
        g.bench_function(BenchmarkId::new("other_passes", ops), |b| {
            b.iter_batched(
                || kiln::parse_module("bench.kir", &text, DefaultDType::F32).expect("it parses"),
                |mut m| {
                    others.run(&mut m).expect("the passes run");
                    black_box(m)
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group! {
    name = optimize;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = optimize_time
}
criterion_main!(optimize);
