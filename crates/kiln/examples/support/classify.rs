//! The image classifiers' command line (the ResNet and MobileNetV3
//! examples): a checkpoint, images from a safetensors file or generated,
//! compile, timed runs, the top class, and the logits written out.

use std::path::PathBuf;

use clap::Parser;
use kiln::nn::{TracedModel, VarStore};
use kiln::{Device, Error, ErrorKind, Result};

/// Runs an image classifier (see the example's documentation).
#[derive(Parser, Debug)]
pub struct Args {
    /// The torchvision model's state_dict as safetensors (default: random weights).
    pub checkpoint: Option<PathBuf>,
    /// Images: a safetensors file with a float32 `input` [batch, 3, height, width].
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Where to write the logits (safetensors, tensor `logits`).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Batch of the generated images when there is no --input.
    #[arg(long, default_value_t = 1)]
    pub batch: i64,
    /// Side of the generated images when there is no --input.
    #[arg(long, default_value_t = 224)]
    pub size: i64,
    /// Timed runs after the first.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

/// The images of `--input`, or a batch of gradient images: pixel
/// (c, y, x) is (c + y + x) / size − 1.
fn images(args: &Args) -> Result<kiln::runtime::Tensor> {
    if let Some(path) = &args.input {
        return kiln::runtime::io::read_safetensors(path)?
            .remove("input")
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Input,
                    format!("{}: no tensor named 'input'", path.display()),
                )
            });
    }
    let s = args.size;
    let pixels = (0..args.batch * 3 * s * s)
        .map(|i| (((i / (s * s)) % 3) + (i / s) % s + i % s) as f32 / s as f32 - 1.0)
        .collect();
    kiln::runtime::Tensor::from_vec(pixels, &[args.batch, 3, s, s])
}

/// Traces the model for the images' shape (`trace(batch, [height,
/// width])`), compiles it for the CPU, runs it, and reports.
pub fn run(
    args: &Args,
    name: &str,
    vs: &VarStore,
    num_classes: i64,
    trace: impl Fn(i64, [i64; 2]) -> Result<TracedModel>,
) -> Result<()> {
    let images = images(args)?;
    let &[batch, 3, height, width] = images.shape() else {
        return Err(Error::new(
            ErrorKind::Input,
            format!(
                "input must be [batch, 3, height, width], got {:?}",
                images.shape()
            ),
        ));
    };
    let start = std::time::Instant::now();
    let compiled = trace(batch, [height, width])?.compile(Device::CPU)?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    let inputs = std::slice::from_ref(&images);
    let logits = compiled.run(inputs)?.remove(0);
    let mut times: Vec<f64> = (0..args.runs)
        .map(|_| {
            let start = std::time::Instant::now();
            compiled
                .run(inputs)
                .map(|_| start.elapsed().as_secs_f64() * 1e3)
        })
        .collect::<Result<_>>()?;
    times.sort_by(f64::total_cmp);
    println!(
        "{name} from {}: {batch}x3x{height}x{width} images, {num_classes} classes; compile {compile_ms:.0} ms, run {} ms (median of {})",
        vs.source(),
        times
            .get(times.len() / 2)
            .map_or("-".into(), |t| format!("{t:.1}")),
        times.len(),
    );
    let row: Vec<f64> = logits
        .values()
        .into_iter()
        .take(num_classes as usize)
        .map(|v| v.f64())
        .collect();
    let best = row
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    println!(
        "image 0: class {best} (logit {:.4}); logits[..5] {:?}",
        row.get(best).copied().unwrap_or(f64::NAN),
        &row[..row.len().min(5)]
    );
    if let Some(path) = &args.output {
        kiln::runtime::io::write_safetensors(path, &[("logits".into(), &logits)])?;
    }
    Ok(())
}
