//! Printing tensors the way PyTorch's `_tensor_str` does: one formatter per
//! tensor (integral floats as `1.`, otherwise four decimals or scientific
//! notation for wide ranges), right-aligned columns, nested brackets, `...`
//! past 1000 elements, and the dtype and device when not the defaults.

use std::fmt::{self, Write};

use kiln_ir::DType;

use crate::convert::Elem;
use crate::tensor::Tensor;

const THRESHOLD: i64 = 1000;
const EDGE_ITEMS: i64 = 3;

/// How every element of one tensor is written.
enum Style {
    Bool,
    Int,
    /// Integral floats: `1.`.
    IntFloat,
    Fixed,
    Scientific,
}

fn style_for(dtype: DType, reals: &[f64]) -> Style {
    if dtype.is_bool() {
        return Style::Bool;
    }
    if dtype.is_integral() {
        return Style::Int;
    }
    let finite: Vec<f64> = reals
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x != 0.0)
        .map(f64::abs)
        .collect();
    if finite.is_empty() {
        return Style::IntFloat;
    }
    let (min, max) = finite
        .iter()
        .fold((f64::INFINITY, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    if finite.iter().all(|x| x.fract() == 0.0) {
        return if max > 1e8 {
            Style::Scientific
        } else {
            Style::IntFloat
        };
    }
    if max / min > 1000.0 || max > 1e8 || min < 1e-4 {
        Style::Scientific
    } else {
        Style::Fixed
    }
}

fn format_real(x: f64, style: &Style) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    match style {
        Style::IntFloat => format!("{x:.0}."),
        Style::Fixed => format!("{x:.4}"),
        Style::Scientific => {
            let s = format!("{x:.4e}");
            // Rust writes 1.0000e8; Python writes 1.0000e+08.
            match s.split_once('e') {
                Some((m, e)) => {
                    let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
                    format!("{m}e{sign}{digits:0>2}")
                }
                None => s,
            }
        }
        Style::Int | Style::Bool => format!("{x}"),
    }
}

fn format_value(v: Elem, style: &Style) -> String {
    match v {
        Elem::B(b) => (if b { "True" } else { "False" }).into(),
        Elem::I(i) => i.to_string(),
        Elem::F(x) => format_real(x, style),
        Elem::C(re, im) => {
            let sign = if im.is_sign_negative() && !im.is_nan() {
                "-"
            } else {
                "+"
            };
            format!(
                "{}{sign}{}j",
                format_real(re, style),
                format_real(im.abs(), style)
            )
        }
    }
}

/// Indices kept along a dim of `size` (all, or the edges when summarising).
fn kept(size: i64, summarize: bool) -> Vec<Option<i64>> {
    if summarize && size > 2 * EDGE_ITEMS {
        let mut v: Vec<Option<i64>> = (0..EDGE_ITEMS).map(Some).collect();
        v.push(None);
        v.extend((size - EDGE_ITEMS..size).map(Some));
        v
    } else {
        (0..size).map(Some).collect()
    }
}

fn collect(t: &Tensor, prefix: &mut Vec<i64>, summarize: bool, out: &mut Vec<Elem>) {
    let d = prefix.len();
    if d == t.shape().len() {
        out.push(t.get(prefix));
        return;
    }
    for i in kept(t.shape()[d], summarize).into_iter().flatten() {
        prefix.push(i);
        collect(t, prefix, summarize, out);
        prefix.pop();
    }
}

fn write_nested(
    f: &mut dyn Write,
    t: &Tensor,
    prefix: &mut Vec<i64>,
    summarize: bool,
    style: &Style,
    width: usize,
    indent: usize,
) -> fmt::Result {
    let d = prefix.len();
    let rank = t.shape().len();
    f.write_str("[")?;
    let items = kept(t.shape()[d], summarize);
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            if d + 1 == rank {
                f.write_str(", ")?;
            } else {
                f.write_str(",")?;
                for _ in 0..(rank - d - 1) {
                    f.write_str("\n")?;
                }
                write!(f, "{:indent$}", "", indent = indent + d + 1)?;
            }
        }
        match item {
            None => f.write_str("...")?,
            Some(i) if d + 1 == rank => {
                prefix.push(*i);
                write!(f, "{:>width$}", format_value(t.get(prefix), style))?;
                prefix.pop();
            }
            Some(i) => {
                prefix.push(*i);
                write_nested(f, t, prefix, summarize, style, width, indent)?;
                prefix.pop();
            }
        }
    }
    f.write_str("]")
}

/// Writes `tensor(...)` as PyTorch prints it.
pub fn write_tensor(f: &mut dyn Write, t: &Tensor) -> fmt::Result {
    let summarize = t.numel() > THRESHOLD;
    let mut values = Vec::new();
    collect(t, &mut Vec::new(), summarize, &mut values);
    let reals: Vec<f64> = values
        .iter()
        .flat_map(|v| match v {
            Elem::C(re, im) => vec![*re, *im],
            other => vec![other.f64()],
        })
        .collect();
    let style = style_for(t.dtype(), &reals);
    let width = values
        .iter()
        .map(|v| format_value(*v, &style).len())
        .max()
        .unwrap_or(0);
    f.write_str("tensor(")?;
    if t.shape().is_empty() {
        f.write_str(&format_value(t.get(&[]), &style))?;
    } else if t.numel() == 0 {
        f.write_str("[]")?;
        if t.shape().len() > 1 {
            let dims: Vec<String> = t.shape().iter().map(i64::to_string).collect();
            write!(f, ", size=({})", dims.join(", "))?;
        }
    } else {
        write_nested(
            f,
            t,
            &mut Vec::new(),
            summarize,
            &style,
            width,
            "tensor(".len(),
        )?;
    }
    let default = matches!(
        t.dtype(),
        DType::F32 | DType::I64 | DType::Bool | DType::C64
    );
    if !default {
        write!(f, ", dtype=torch.{}", t.dtype().torch_name())?;
    }
    if !t.device().is_cpu() {
        write!(f, ", device='{}'", t.device())?;
    }
    f.write_str(")")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_pytorch() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(t.to_string(), "tensor([[1., 2.],\n        [3., 4.]])");
        let t = Tensor::from_vec(vec![1.5f64, -2.25], &[2]).unwrap();
        assert_eq!(
            t.to_string(),
            "tensor([ 1.5000, -2.2500], dtype=torch.float64)"
        );
        let t = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(t.to_string(), "tensor([ True, False])");
        let t = Tensor::from_vec(vec![7i32], &[]).unwrap();
        assert_eq!(t.to_string(), "tensor(7, dtype=torch.int32)");
    }
}
