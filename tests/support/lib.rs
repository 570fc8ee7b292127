//! Shared helpers for Kiln's integration tests: the oracle tables recorded
//! from PyTorch (`tests/data/*.json`), and the conversions from their JSON
//! conventions (dtype names, scalar operands, hex floats) to Kiln's types.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

pub mod cuda_emulator;
pub mod cuda_tools;
pub mod differential;
pub mod programs;

use kiln::{DType, Geometry, Scalar};
use serde_json::Value;

/// The repository's `tests/` folder.
pub fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Loads (once per process) an oracle table from `tests/data/`.
pub fn oracle(name: &str) -> &'static Value {
    static CACHE: OnceLock<Mutex<HashMap<String, &'static Value>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().expect("oracle cache poisoned");
    map.entry(name.to_string()).or_insert_with(|| {
        let path = tests_dir().join("data").join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Box::leak(Box::new(
            serde_json::from_str(&text).expect("oracle tables are valid JSON"),
        ))
    })
}

/// A dtype as the oracle writes it. `torch:<name>` (a dtype outside IR.md's
/// table, such as bcomplex32) gives `None`.
pub fn dtype(v: &Value) -> Option<DType> {
    let s = v.as_str().expect("dtype names are strings");
    if s.starts_with("torch:") {
        return None;
    }
    Some(DType::from_name(s).unwrap_or_else(|| panic!("oracle dtype {s} is not known to Kiln")))
}

/// The oracle's scalar operand `{"scalar": kind, "value": text}`.
pub fn scalar(v: &Value) -> Result<Scalar, kiln::Error> {
    let kind = v["scalar"].as_str().expect("scalar kind");
    let text = v["value"].as_str().expect("scalar value");
    Ok(match kind {
        "bool" => Scalar::Bool(text == "true"),
        "int" => Scalar::from_i128(text.parse().expect("int literal fits i128"))?,
        "float" => Scalar::Float(parse_float(text)),
        "complex" => {
            let inner = text
                .strip_prefix("complex(")
                .and_then(|t| t.strip_suffix(')'))
                .expect("complex(re, im)");
            let (re, im) = inner.split_once(',').expect("two parts");
            Scalar::Complex(parse_float(re.trim()), parse_float(im.trim()))
        }
        other => panic!("unknown scalar kind {other}"),
    })
}

/// Parses a decimal float as the oracle writes it (`inf`, `-0.0`, `nan`).
pub fn parse_float(s: &str) -> f64 {
    match s {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" => f64::NAN,
        // A NaN with the sign bit (signbit and copysign read it).
        "-nan" => -f64::NAN,
        _ => s.parse().unwrap_or_else(|_| panic!("bad float {s}")),
    }
}

/// Parses Python's `float.hex()` form, e.g. `-0x1.fffffe0000000p+127`.
pub fn parse_hex_float(s: &str) -> f64 {
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let s = s.strip_prefix("0x").expect("hex float starts with 0x");
    let (mantissa, exp) = s.split_once('p').expect("hex float has an exponent");
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = u64::from_str_radix(int_part, 16).expect("hex digits") as f64;
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        value += c.to_digit(16).expect("hex digit") as f64 * scale;
        scale /= 16.0;
    }
    let exp: i32 = exp.parse().expect("decimal exponent");
    let v = value * 2f64.powi(exp);
    if neg { -v } else { v }
}

pub fn int_list(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected a list, got {v}"))
        .iter()
        .map(|x| x.as_i64().expect("integer"))
        .collect()
}

/// A strided input as the oracle describes it (shape, strides, storage_offset).
pub fn geometry(v: &Value) -> Geometry {
    Geometry::new(
        int_list(&v["shape"]),
        int_list(&v["strides"]),
        v["storage_offset"].as_i64().unwrap_or(0),
    )
}

/// Collects mismatches so a test reports all of them, not just the first.
#[derive(Default)]
pub struct Mismatches {
    checked: usize,
    failures: Vec<String>,
}

impl Mismatches {
    pub fn check(&mut self, ok: bool, describe: impl FnOnce() -> String) {
        self.checked += 1;
        if !ok {
            self.failures.push(describe());
        }
    }

    /// Panics, listing the first mismatches (all of them go to
    /// `target/oracle-mismatches/<what>.txt`), unless every check passed.
    pub fn finish(self, what: &str) {
        let file = tests_dir()
            .join("../target/oracle-mismatches")
            .join(format!("{what}.txt"));
        let _ = std::fs::remove_file(&file);
        if !self.failures.is_empty() {
            let _ = std::fs::create_dir_all(file.parent().expect("a folder"));
            let _ = std::fs::write(&file, self.failures.join("\n"));
            let shown: Vec<String> = self
                .failures
                .iter()
                .take(12)
                .map(|s| format!("  {s}"))
                .collect();
            panic!(
                "{what}: {} of {} cases disagree with PyTorch (all in target/oracle-mismatches/{what}.txt):\n{}",
                self.failures.len(),
                self.checked,
                shown.join("\n")
            );
        }
        assert!(self.checked > 0, "{what}: no cases were checked");
    }

    pub fn checked(&self) -> usize {
        self.checked
    }
}

/// The programs of `tests/programs/`, by name, in name order.
pub fn programs() -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(tests_dir().join("programs"))
        .expect("tests/programs exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kir"))
        .map(|p| {
            (
                p.file_stem()
                    .expect("a name")
                    .to_string_lossy()
                    .into_owned(),
                p,
            )
        })
        .collect();
    files.sort();
    files
}

/// Parses a shipped program (under the f32 default dtype).
pub fn load(path: &PathBuf) -> kiln::Module {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    kiln::parse_module(&path.display().to_string(), &text, kiln::DefaultDType::F32)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The bits of an f32 tensor's elements, in logical order (for tests
/// that hold results to exact values, zeros' signs included).
pub fn f32_bits(t: &kiln_runtime::Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .expect("an f32 tensor")
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// ResNet's basic block with `channels` channels over 2×`channels`×10×10
/// images (two 3×3 convolutions, each followed by inference batch norm;
/// ReLU; the block's input added before the last ReLU), returning its
/// output and `returned` (`%x`, or a convolution's result `%c1` or `%c2`,
/// which then has no tail), and inputs for it (random, the variances
/// positive).
pub fn basic_block(channels: i64, returned: &str) -> (kiln::Module, Vec<kiln_runtime::Tensor>) {
    let c = channels;
    let text = format!(
        "func @main(%x: tensor<2x{c}x10x10xf32>, %w1: tensor<{c}x{c}x3x3xf32>, %g1: tensor<{c}xf32>, %b1: tensor<{c}xf32>, %m1: tensor<{c}xf32>, %v1: tensor<{c}xf32>, %w2: tensor<{c}x{c}x3x3xf32>, %g2: tensor<{c}xf32>, %b2: tensor<{c}xf32>, %m2: tensor<{c}xf32>, %v2: tensor<{c}xf32>) -> (tensor<2x{c}x10x10xf32>, tensor<2x{c}x10x10xf32>) {{
  %c1 = conv2d %x, %w1 {{padding = 1}}
  %n1 = batch_norm %c1, %g1, %b1, %m1, %v1
  %r1 = relu %n1
  %c2 = conv2d %r1, %w2 {{padding = 1}}
  %n2 = batch_norm %c2, %g2, %b2, %m2, %v2
  %s = add %n2, %x
  %r2 = relu %s
  return %r2, {returned}
}}
"
    );
    let module = kiln::parse_module("block.kir", &text, kiln::DefaultDType::F32)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut inputs = inputs_for(&module);
    for v in [5, 10] {
        let values: Vec<f32> = (0..c).map(|i| 0.5 + i as f32 / 8.0).collect();
        inputs[v] = kiln_runtime::Tensor::from_vec(values, &[c]).expect("a tensor");
    }
    (module, inputs)
}

/// Deterministic inputs for a module's entry function.
pub fn inputs_for(module: &kiln::Module) -> Vec<kiln_runtime::Tensor> {
    let func = module.entry().expect("an entry function");
    func.params
        .iter()
        .enumerate()
        .map(|(i, p)| kiln_runtime::random::tensor_for(func.ty(*p), 17 + i as u64).expect("inputs"))
        .collect()
}

/// Whether every value of the entry function is on the CPU (so it runs).
pub fn runnable(module: &kiln::Module) -> bool {
    let func = module.entry().expect("an entry function");
    func.values.iter().all(|v| v.ty.device.is_cpu())
}
