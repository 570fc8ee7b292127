//! The parts of complex tensors: `real`, `imag` and `complex` (the
//! primitives), and `conj`, `conj_physical`, `angle`, `isreal`, `polar`,
//! `view_as_real` and `view_as_complex` defined by them.
//!
//! PyTorch's `real`, `imag`, `view_as_real` and `view_as_complex` are views
//! that reinterpret a complex tensor's storage as pairs of floats. Kiln's
//! results are values, so these are copies laid out where PyTorch's views
//! put their elements: the real part of a complex tensor of strides `s`
//! has strides `2s` (and `view_as_real` appends a dim of stride 1), so
//! strides, and everything computed from them, are PyTorch's; only
//! aliasing differs. `conj` is PyTorch's lazy conjugation, here computed.
//! On real tensors `real`, `conj` and `conj_physical` are the tensor
//! itself, as in PyTorch.

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::graph::{Operand, ValueId};
use crate::infer::{Arg, InferCtx, Inferred, err, nth_tensor, single, wrong_rule};
use crate::layout::{LayoutArg, ResultLayout};
use crate::ops::expand::Emitter;
use crate::ops::{BinaryOp, Op, UnaryOp};
use crate::scalar::Scalar;
use crate::types::TensorType;

/// `real`, `imag`, `conj`, `conj_physical`, `isreal`, `view_as_real`,
/// `view_as_complex`: one tensor in, PyTorch's result dtype and shape and
/// its refusals.
pub fn infer_part(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = nth_tensor(args, 0)?;
    let d = x.dtype;
    let (shape, dtype) = match op {
        Op::Real => (x.shape.clone(), d.to_real()),
        Op::Conj | Op::ConjPhysical => (x.shape.clone(), d),
        Op::Imag => {
            if !d.is_complex() {
                return Err(err(
                    ErrorKind::DType,
                    "imag is not implemented for tensors with non-complex dtypes.",
                ));
            }
            (x.shape.clone(), d.to_real())
        }
        Op::Isreal => (x.shape.clone(), DType::Bool),
        Op::ViewAsReal => {
            if !d.is_complex() {
                return Err(err(
                    ErrorKind::DType,
                    "view_as_real is only supported for complex tensors",
                ));
            }
            let mut shape = x.shape.clone();
            shape.push(2);
            (shape, d.to_real())
        }
        Op::ViewAsComplex => {
            if !matches!(d, DType::F16 | DType::F32 | DType::F64) {
                return Err(err(
                    ErrorKind::DType,
                    format!(
                        "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
                        d.scalar_type_name()
                    ),
                ));
            }
            if x.shape.last() != Some(&2) {
                return Err(err(
                    ErrorKind::Shape,
                    "Tensor must have a last dimension of size 2",
                ));
            }
            (x.shape[..x.rank() - 1].to_vec(), d.to_complex()?)
        }
        Op::Angle => {
            if d == DType::C32 {
                return Err(err(
                    ErrorKind::DType,
                    "\"angle_cpu\" not implemented for 'ComplexHalf'",
                ));
            }
            let out = if d.is_complex() {
                d.to_real()
            } else {
                crate::infer::floating(d, ctx)
            };
            (x.shape.clone(), out)
        }
        _ => return Err(wrong_rule("complex part")),
    };
    // `real` keeps a real tensor's dtype.
    let dtype = if matches!(op, Op::Real) && !d.is_complex() {
        d
    } else {
        dtype
    };
    Ok(single(shape, dtype, vec![None]))
}

/// `complex(real, imag)` and `polar(abs, angle)`: two f16, f32 or f64
/// tensors of one dtype, broadcast; the complex counterpart.
pub fn infer_pair(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    if !matches!(op, Op::Complex | Op::Polar) {
        return Err(wrong_rule("complex pair"));
    }
    let (a, b) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    let float = |d: DType| matches!(d, DType::F16 | DType::F32 | DType::F64);
    if !float(a.dtype) || !float(b.dtype) {
        return Err(err(
            ErrorKind::DType,
            format!(
                "Expected both inputs to be Half, Float or Double tensors but got {} and {}",
                a.dtype.scalar_type_name(),
                b.dtype.scalar_type_name()
            ),
        ));
    }
    if a.dtype != b.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "Expected object of scalar type {} but got scalar type {} for second argument",
                a.dtype.scalar_type_name(),
                b.dtype.scalar_type_name()
            ),
        ));
    }
    let shape = crate::view::broadcast_shapes(&a.shape, &b.shape)?;
    Ok(single(shape, a.dtype.to_complex()?, vec![None, None]))
}

/// Where PyTorch's views put the parts: `real`/`imag` of a complex tensor
/// at twice its strides, `view_as_real` with a last dim of stride 1,
/// `view_as_complex` at half the strides (which must be even where the dim
/// is longer than 1, with a last dim of stride 1 and an even storage
/// offset: PyTorch's checks); a real tensor's `real` and `conj`
/// are the tensor itself; `conj_physical` a copy like it; `angle` of a
/// complex tensor contiguous, of a real one TensorIterator's; `isreal`
/// TensorIterator's.
pub fn layout(
    op: &Op,
    args: &[LayoutArg<'_>],
    results: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let (g, ty) = crate::layout::first_geometry(args)?;
    let doubled = || g.strides.iter().map(|s| 2 * s).collect::<Vec<_>>();
    let layout = match op {
        // Of a real tensor, PyTorch's conj and conj_physical return the
        // tensor itself.
        Op::Real | Op::Conj | Op::ConjPhysical if !ty.dtype.is_complex() => {
            ResultLayout::View(g.clone())
        }
        Op::Real | Op::Imag => ResultLayout::Fresh(doubled()),
        Op::ViewAsReal => {
            let mut strides = doubled();
            strides.push(1);
            ResultLayout::Fresh(strides)
        }
        Op::ViewAsComplex => {
            let n = g.rank();
            if g.strides[n - 1] != 1 {
                return Err(err(
                    ErrorKind::Layout,
                    "Tensor must have a last dimension with stride 1",
                ));
            }
            // A dim of size 1 is not checked (PyTorch 2.15 skips it; its
            // stride halves, rounding down, as PyTorch's does).
            if g.strides[..n - 1]
                .iter()
                .zip(&g.shape)
                .any(|(s, &size)| size != 1 && s % 2 != 0)
            {
                return Err(err(
                    ErrorKind::Layout,
                    "Tensor must have a stride divisible by 2 for all but last dimension",
                ));
            }
            if g.offset % 2 != 0 {
                return Err(err(
                    ErrorKind::Layout,
                    "Tensor must have a storage_offset divisible by 2",
                ));
            }
            ResultLayout::Fresh(g.strides[..n - 1].iter().map(|s| s / 2).collect())
        }
        // PyTorch's conj is a view: the operand's strides, dense or not.
        Op::Conj => ResultLayout::Fresh(g.strides.clone()),
        Op::ConjPhysical => return crate::layout::preserve_copy_layout(op, args, results),
        Op::Angle if ty.dtype.is_complex() => {
            ResultLayout::Fresh(crate::layout::contiguous_strides(&results[0].shape))
        }
        Op::Angle | Op::Isreal => {
            ResultLayout::Fresh(crate::layout::pointwise_layout(args, &results[0].shape))
        }
        _ => return Err(wrong_rule("complex part layout")),
    };
    Ok(vec![layout])
}

fn one(v: ValueId) -> Result<Option<Vec<ValueId>>> {
    Ok(Some(vec![v]))
}

fn value(operands: &[Operand], i: usize) -> Result<ValueId> {
    match operands.get(i) {
        Some(Operand::Value(v)) => Ok(*v),
        _ => Err(err(
            ErrorKind::Arity,
            format!("operand {} is not a tensor", i + 1),
        )),
    }
}

/// The composites: `conj` = `complex(real, −imag)`; `angle` = `atan2(imag,
/// real)`, or for real tensors π below zero, 0 at or above, NaN kept;
/// `isreal` = `imag == 0`; `polar` = `complex(abs·cos θ, abs·sin θ)`;
/// `view_as_real` stacks the parts; `view_as_complex` pairs the last dim.
pub fn expand(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = value(operands, 0)?;
    let ty = e.ty(x).clone();
    let part = |e: &mut Emitter<'_>, op: Op| e.push(op, vec![Operand::Value(x)]);
    match op {
        Op::Conj | Op::ConjPhysical => {
            if !ty.dtype.is_complex() {
                return one(x);
            }
            let re = part(e, Op::Real)?;
            let im = part(e, Op::Imag)?;
            let im = e.unary(UnaryOp::Neg, im)?;
            one(e.push(Op::Complex, vec![Operand::Value(re), Operand::Value(im)])?)
        }
        Op::Angle => {
            if ty.dtype.is_complex() {
                let re = part(e, Op::Real)?;
                let im = part(e, Op::Imag)?;
                return one(e.binary(BinaryOp::Atan2, im, Operand::Value(re))?);
            }
            let float = if ty.dtype.is_floating_point() {
                ty.dtype
            } else {
                e.default_dtype()
            };
            let xf = e.cast(x, float)?;
            let negative = e.binary(BinaryOp::Lt, xf, Operand::Scalar(Scalar::Int(0)))?;
            // π in the result's dtype (a 0-dim tensor, so the where
            // computes in that dtype, not the default one).
            let pi = e.push(
                Op::Full {
                    shape: vec![],
                    value: Scalar::Float(std::f64::consts::PI),
                    dtype: Some(float),
                    device: Some(ty.device),
                },
                vec![],
            )?;
            let pi = e.push(
                Op::Where,
                vec![
                    Operand::Value(negative),
                    Operand::Value(pi),
                    Operand::Scalar(Scalar::Float(0.0)),
                ],
            )?;
            let nan = e.unary(UnaryOp::Isnan, xf)?;
            one(e.push(
                Op::Where,
                vec![Operand::Value(nan), Operand::Value(xf), Operand::Value(pi)],
            )?)
        }
        Op::Isreal => {
            if !ty.dtype.is_complex() {
                return one(e.push(
                    Op::Full {
                        shape: ty.shape.clone(),
                        value: Scalar::Bool(true),
                        dtype: Some(DType::Bool),
                        device: Some(ty.device),
                    },
                    vec![],
                )?);
            }
            let im = part(e, Op::Imag)?;
            one(e.binary(BinaryOp::Eq, im, Operand::Scalar(Scalar::Int(0)))?)
        }
        Op::Polar => {
            let theta = value(operands, 1)?;
            let c = e.unary(UnaryOp::Cos, theta)?;
            let s = e.unary(UnaryOp::Sin, theta)?;
            let re = e.binary(BinaryOp::Mul, x, Operand::Value(c))?;
            let im = e.binary(BinaryOp::Mul, x, Operand::Value(s))?;
            one(e.push(Op::Complex, vec![Operand::Value(re), Operand::Value(im)])?)
        }
        Op::ViewAsReal => {
            let re = part(e, Op::Real)?;
            let im = part(e, Op::Imag)?;
            one(e.push(
                Op::Stack { dim: -1 },
                vec![Operand::Value(re), Operand::Value(im)],
            )?)
        }
        Op::ViewAsComplex => {
            let re = part(e, Op::Select { dim: -1, index: 0 })?;
            let im = part(e, Op::Select { dim: -1, index: 1 })?;
            one(e.push(Op::Complex, vec![Operand::Value(re), Operand::Value(im)])?)
        }
        _ => Ok(None),
    }
}
