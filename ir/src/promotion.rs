//! Type promotion and casting: which dtype an op computes in, and which
//! results may be written to which outputs.
//!
//! PyTorch rules: `torch.promote_types` (c10's `promoteTypes`),
//! `torch.result_type` (ATen's `ResultTypeState`: dimensioned tensors outrank
//! zero-dim tensors, which outrank scalars, and a lower class only counts when
//! its category is higher), and `torch.can_cast` (c10's `canCast`, used for
//! `out=` and in-place ops). The default dtype — what
//! `torch.set_default_dtype` sets — is always an explicit input here.

use std::fmt;

use crate::dtype::{Category, DType};
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::ScalarKind;

/// The default floating dtype: the type of float scalars and of int→float
/// results such as `div` of integers. PyTorch's default is float32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DefaultDType {
    /// float32, PyTorch's default; complex scalars are then complex64.
    #[default]
    F32,
    /// float64 (`torch.set_default_dtype(torch.float64)`); complex
    /// scalars are then complex128.
    F64,
}

impl DefaultDType {
    /// The default floating dtype itself (`f32` or `f64`).
    pub fn dtype(self) -> DType {
        match self {
            DefaultDType::F32 => DType::F32,
            DefaultDType::F64 => DType::F64,
        }
    }

    /// The default complex dtype that goes with it (`c64` or `c128`).
    pub fn complex(self) -> DType {
        match self {
            DefaultDType::F32 => DType::C64,
            DefaultDType::F64 => DType::C128,
        }
    }
}

impl TryFrom<DType> for DefaultDType {
    type Error = Error;

    fn try_from(dtype: DType) -> Result<Self> {
        match dtype {
            DType::F32 => Ok(DefaultDType::F32),
            DType::F64 => Ok(DefaultDType::F64),
            other => Err(Error::new(
                ErrorKind::DType,
                format!("the default dtype must be f32 or f64, not {other}"),
            )),
        }
    }
}

impl fmt::Display for DefaultDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.dtype().fmt(f)
    }
}

fn promotion_error(what: &str, a: DType, b: DType) -> Error {
    Error::new(
        ErrorKind::Promotion,
        format!(
            "Promotion for {what} is not supported, attempted to promote {} and {}",
            a.scalar_type_name(),
            b.scalar_type_name()
        ),
    )
}

/// `torch.promote_types(a, b)`: the smallest dtype both values fit, by
/// PyTorch's promotion lattice. Symmetric, with `bool` as identity.
pub fn promote_types(a: DType, b: DType) -> Result<DType> {
    if a == b {
        return Ok(a);
    }
    if a.is_float8() || b.is_float8() {
        return Err(promotion_error("Float8 Types", a, b));
    }
    if a.is_barebones_unsigned() || b.is_barebones_unsigned() {
        // c10 lets a floating dtype absorb uint16/32/64; nothing else does.
        if a.is_floating_point() {
            return Ok(a);
        }
        if b.is_floating_point() {
            return Ok(b);
        }
        return Err(promotion_error("uint16, uint32, uint64 types", a, b));
    }
    if a == DType::F4E2M1FNX2 || b == DType::F4E2M1FNX2 {
        // PyTorch fails an internal assertion here (its table has no row).
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "Promotion for Float4_e2m1fn_x2 is not supported, attempted to promote {} and {}",
                a.scalar_type_name(),
                b.scalar_type_name()
            ),
        ));
    }
    Ok(promote_core(a, b))
}

/// The lattice over the thirteen core dtypes (u8, i8..i64, f16, bf16, f32,
/// f64, c32, c64, c128, bool); `a != b` and neither is a shell or uint16+.
fn promote_core(a: DType, b: DType) -> DType {
    use Category::*;
    let (hi, lo) = if a.category() >= b.category() {
        (a, b)
    } else {
        (b, a)
    };
    match (hi.category(), lo.category()) {
        (_, Bool) => hi,
        (Integral, Integral) => promote_integral(hi, lo),
        (Floating, Integral) => hi,
        (Floating, Floating) => promote_floating(hi, lo),
        (Complex, _) => {
            let real = promote_core_or_same(hi.to_real(), lo.to_real());
            real.to_complex()
                .expect("the real part of a core complex dtype is f16, f32 or f64")
        }
        _ => unreachable!("categories are ordered so hi >= lo"),
    }
}

fn promote_core_or_same(a: DType, b: DType) -> DType {
    if a == b { a } else { promote_core(a, b) }
}

fn promote_integral(a: DType, b: DType) -> DType {
    match (a, b) {
        // Mixing uint8 with int8 needs int16 to hold both ranges.
        (DType::U8, DType::I8) | (DType::I8, DType::U8) => DType::I16,
        (DType::U8, other) | (other, DType::U8) => other,
        _ if a.itemsize() >= b.itemsize() => a,
        _ => b,
    }
}

fn promote_floating(a: DType, b: DType) -> DType {
    match (a, b) {
        // Neither half format holds the other.
        (DType::F16, DType::BF16) | (DType::BF16, DType::F16) => DType::F32,
        _ if a.itemsize() >= b.itemsize() => a,
        _ => b,
    }
}

/// One operand as type promotion sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A tensor with at least one dimension.
    Tensor(DType),
    /// A zero-dimensional tensor.
    ZeroDim(DType),
    /// A scalar literal (a Python number), by kind.
    Scalar(ScalarKind),
}

impl Operand {
    /// A tensor operand of the given rank.
    pub fn tensor(dtype: DType, rank: usize) -> Operand {
        if rank == 0 {
            Operand::ZeroDim(dtype)
        } else {
            Operand::Tensor(dtype)
        }
    }
}

/// ATen's `ResultTypeState`: the running promotion of each operand class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ResultTypeState {
    dim: Option<DType>,
    zero_dim: Option<DType>,
    wrapped: Option<DType>,
}

fn promote_skip_undefined(a: Option<DType>, b: DType) -> Result<DType> {
    match a {
        None => Ok(b),
        Some(a) => promote_types(a, b),
    }
}

/// ATen's `combine_categories`: a lower class only changes the result when its
/// category is higher than the higher class's.
fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Result<Option<DType>> {
    let is = |d: Option<DType>, c: Category| d.is_some_and(|d| d.category() == c);
    if is(higher, Category::Complex) {
        return Ok(higher);
    }
    if is(lower, Category::Complex) {
        if let Some(h) = higher.filter(|h| h.is_floating_point()) {
            return h.to_complex().map(Some);
        }
        return Ok(lower);
    }
    if is(higher, Category::Floating) {
        return Ok(higher);
    }
    if let Some(l) = lower {
        if higher == Some(DType::Bool) || l.is_floating_point() {
            return promote_skip_undefined(higher, l).map(Some);
        }
    }
    Ok(higher.or(lower))
}

/// `torch.result_type(*operands)`: the dtype an op over these operands
/// computes in. Dimensioned tensors outrank zero-dim tensors, which outrank
/// scalars; a lower class wins only with a higher category. Float scalars
/// count as the default dtype, complex scalars as its complex counterpart.
pub fn result_type(operands: &[Operand], default: DefaultDType) -> Result<DType> {
    let mut state = ResultTypeState::default();
    for op in operands {
        match *op {
            Operand::Tensor(d) => state.dim = Some(promote_skip_undefined(state.dim, d)?),
            Operand::ZeroDim(d) => {
                state.zero_dim = Some(promote_skip_undefined(state.zero_dim, d)?)
            }
            Operand::Scalar(k) => {
                state.wrapped = Some(promote_skip_undefined(
                    state.wrapped,
                    k.promotion_dtype(default),
                )?)
            }
        }
    }
    let lower = combine_categories(state.zero_dim, state.wrapped)?;
    combine_categories(state.dim, lower)?
        .ok_or_else(|| Error::new(ErrorKind::Arity, "result_type needs at least one operand"))
}

/// `torch.can_cast(from, to)`: whether an op computing `from` may write into
/// an output of dtype `to` (out= and in-place). A cast may not lower the
/// category (complex > floating > integral > bool).
pub fn can_cast(from: DType, to: DType) -> bool {
    from.category() <= to.category()
}

/// [`can_cast`] as a check, with PyTorch's error text.
pub fn check_can_cast(from: DType, to: DType) -> Result<()> {
    if can_cast(from, to) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Cast,
            format!(
                "result type {} can't be cast to the desired output type {}",
                from.scalar_type_name(),
                to.scalar_type_name()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked_promotions() {
        assert_eq!(promote_types(DType::U8, DType::I8).unwrap(), DType::I16);
        assert_eq!(promote_types(DType::F16, DType::BF16).unwrap(), DType::F32);
        assert_eq!(promote_types(DType::C32, DType::BF16).unwrap(), DType::C64);
        assert_eq!(promote_types(DType::I64, DType::F16).unwrap(), DType::F16);
        assert_eq!(
            promote_types(DType::U16, DType::F4E2M1FNX2).unwrap(),
            DType::F4E2M1FNX2
        );
        assert!(promote_types(DType::U16, DType::I32).is_err());
    }

    #[test]
    fn scalars_only_count_by_category() {
        let d = DefaultDType::F32;
        let i32t = Operand::Tensor(DType::I32);
        assert_eq!(
            result_type(&[i32t, Operand::Scalar(ScalarKind::Int)], d).unwrap(),
            DType::I32
        );
        assert_eq!(
            result_type(&[i32t, Operand::Scalar(ScalarKind::Float)], d).unwrap(),
            DType::F32
        );
        assert_eq!(
            result_type(
                &[
                    Operand::Tensor(DType::F16),
                    Operand::Scalar(ScalarKind::Complex)
                ],
                d
            )
            .unwrap(),
            DType::C32
        );
        assert_eq!(
            result_type(
                &[Operand::Tensor(DType::U8), Operand::ZeroDim(DType::I64)],
                d
            )
            .unwrap(),
            DType::U8
        );
    }

    #[test]
    fn cast_error_text() {
        let e = check_can_cast(DType::F32, DType::I64).unwrap_err();
        assert_eq!(
            e.message(),
            "result type Float can't be cast to the desired output type Long"
        );
    }
}
