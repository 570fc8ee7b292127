//! The element semantics of every pointwise op, as Cranelift
//! instructions, matching the reference interpreter
//! (`kiln_runtime::interp::elementwise` and `convert`): NaN-propagating
//! `maximum`, `relu(-0.0) = -0.0`, integer wrap-around, x86-64's
//! float-to-integer conversions, integer division by zero reported.
//!
//! Ops without a vector form return [`NoVector`]; the kernel is then
//! compiled with scalar code only.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Value, types};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::Variable;
use kiln_ir::{BinaryOp, DType, UnaryOp};
use kiln_math::Function2;
use kiln_runtime::interp::elementwise::f32_algorithm;

use super::math::{Calls, Helper, function, function2};
use super::values::{Class, Emit, Val, Width};

/// The op has no vector form here.
#[derive(Debug)]
pub struct NoVector;

pub type Emitted<T> = Result<T, NoVector>;

/// What an op emitter needs beyond the instruction builder.
pub struct Ctx<'c> {
    pub calls: &'c mut Calls,
    pub call_conv: CallConv,
    /// Set to 1 when an integer division by zero happens.
    pub status: Variable,
}

/// The kiln-math function a unary op computes in f32 lanes (f16, bf16
/// and f32 computation dtypes), where it has one: inline in `Emit::unary`,
/// or by the AVX-512 call of a vector loop (`Gen::sixteen_function`).
pub fn lane_function(op: UnaryOp, compute: DType) -> Option<kiln_math::Function> {
    (Class::of(compute) == Class::F32)
        .then(|| f32_algorithm(op))
        .flatten()
}

impl Emit<'_, '_> {
    fn scalar_only(&self) -> Emitted<()> {
        if self.w == Width::Vector {
            Err(NoVector)
        } else {
            Ok(())
        }
    }

    /// A binary integer helper call on scalar values widened to i64, its
    /// result truncated back to the operands' width.
    fn call_i64(
        &mut self,
        ctx: &mut Ctx,
        helper: Helper,
        a: Val,
        b: Val,
        c: Class,
        signed: bool,
    ) -> Emitted<Val> {
        self.scalar_only()?;
        let (x, y) = if c.is_wide() {
            (a, b)
        } else {
            (self.widen_int(a, signed), self.widen_int(b, signed))
        };
        let r = ctx
            .calls
            .call(self.b, ctx.call_conv, helper, &[x.part(0), y.part(0)]);
        let r = Val::one(r);
        Ok(if c.is_wide() { r } else { self.truncate_int(r) })
    }

    /// A helper call on each (scalar) value, in f64 for f32-class values.
    fn call_f64(&mut self, ctx: &mut Ctx, helper: Helper, args: &[Val], c: Class) -> Emitted<Val> {
        self.scalar_only()?;
        let mut wide: Vec<Value> = Vec::with_capacity(args.len());
        for a in args {
            let v = if c == Class::F32 {
                self.b.ins().fpromote(types::F64, a.part(0))
            } else {
                a.part(0)
            };
            wide.push(v);
        }
        let r = ctx.calls.call(self.b, ctx.call_conv, helper, &wide);
        Ok(Val::one(if c == Class::F32 {
            self.b.ins().fdemote(types::F32, r)
        } else {
            r
        }))
    }

    /// A comparison mask of `x` against zero: `x != 0` (NaN is truthy).
    pub fn truthy(&mut self, x: Val, d: DType) -> Val {
        let c = Class::of(d);
        if c.is_float() {
            let z = self.fconst(c, 0.0);
            let m = self.zip(x, z, |b, v, z| b.ins().fcmp(FloatCC::NotEqual, v, z));
            self.mask_to_bool(m)
        } else {
            let z = self.iconst(c, 0);
            let m = self.zip(x, z, |b, v, z| b.ins().icmp(IntCC::NotEqual, v, z));
            self.mask_to_bool(m)
        }
    }

    /// Rounds a result computed in its class to the node's dtype.
    pub fn finish(&mut self, x: Val, d: DType) -> Val {
        match d {
            DType::F16 | DType::BF16 => self.round_to(x, d),
            _ if !d.is_floating_point() => self.wrap(x, d),
            _ => x,
        }
    }

    /// A primitive unary op on a value of its computation dtype: one arm
    /// per op (values of every class: bool and integers, f32 for
    /// f16/bf16/f32, f64).
    pub fn unary(&mut self, ctx: &mut Ctx, op: UnaryOp, x: Val, compute: DType) -> Emitted<Val> {
        use UnaryOp::*;
        let c = Class::of(compute);
        let float = c.is_float();
        let boolean = compute.is_bool();
        let signed = compute.is_signed();
        let r = match op {
            Neg if float => self.map(x, |b, v| b.ins().fneg(v)),
            Neg => self.map(x, |b, v| b.ins().ineg(v)),
            Abs if float => self.map(x, |b, v| b.ins().fabs(v)),
            Abs if boolean || !signed => x,
            Abs => {
                if c.is_wide() {
                    self.scalar_only()?;
                }
                self.map(x, |b, v| b.ins().iabs(v))
            }
            // kiln-math's f32 functions, inline in any width.
            _ if let Some(f) = lane_function(op, compute) => function(self, ctx, f, x),
            // The interpreter's function, in f64.
            Exp
            | Log
            | Log2
            | Log1p
            | Expm1
            | Sin
            | Cos
            | Tanh
            | Erf
            | Atan
            | Asin
            | Acos
            | Erfc
            | Erfinv
            | Lgamma
            | Digamma
            | I0
            | SpecialI0e
            | SpecialI1
            | SpecialI1e
            | SpecialErfcx
            | SpecialBesselJ0
            | SpecialBesselJ1
            | SpecialBesselY0
            | SpecialBesselY1
            | SpecialModifiedBesselI0
            | SpecialModifiedBesselI1
            | SpecialModifiedBesselK0
            | SpecialModifiedBesselK1
            | SpecialScaledModifiedBesselK0
            | SpecialScaledModifiedBesselK1
            | SpecialSphericalBesselJ0
            | SpecialAiryAi
            | SpecialNdtri => self.call_f64(ctx, Helper::Unary(op), &[x], c)?,
            Sqrt => self.map(x, |b, v| b.ins().sqrt(v)),
            Rsqrt => {
                let s = self.map(x, |b, v| b.ins().sqrt(v));
                let one = self.fconst(c, 1.0);
                self.zip(one, s, |b, o, v| b.ins().fdiv(o, v))
            }
            Reciprocal => {
                let one = self.fconst(c, 1.0);
                self.zip(one, x, |b, o, v| b.ins().fdiv(o, v))
            }
            Relu if float => {
                let z = self.fconst(c, 0.0);
                let neg = self.zip(x, z, |b, v, z| b.ins().fcmp(FloatCC::LessThan, v, z));
                self.select(neg, z, x, c)
            }
            Relu if boolean || !signed => x,
            Relu => {
                if c.is_wide() {
                    self.scalar_only()?;
                }
                let z = self.iconst(c, 0);
                self.zip(x, z, |b, v, z| b.ins().smax(v, z))
            }
            Floor if float => self.map(x, |b, v| b.ins().floor(v)),
            Ceil if float => self.map(x, |b, v| b.ins().ceil(v)),
            Trunc if float => self.map(x, |b, v| b.ins().trunc(v)),
            Round if float => self.map(x, |b, v| b.ins().nearest(v)),
            // Integers (and bool) are their own rounding.
            Floor | Ceil | Trunc | Round => x,
            Sign if float => {
                let z = self.fconst(c, 0.0);
                let one = self.fconst(c, 1.0);
                let minus = self.fconst(c, -1.0);
                let pos = self.zip(x, z, |b, v, z| b.ins().fcmp(FloatCC::GreaterThan, v, z));
                let neg = self.zip(x, z, |b, v, z| b.ins().fcmp(FloatCC::LessThan, v, z));
                let r = self.select(neg, minus, z, c);
                self.select(pos, one, r, c)
            }
            Sign if boolean => x,
            Sign => {
                let z = self.iconst(c, 0);
                let one = self.iconst(c, 1);
                let minus = self.iconst(c, -1);
                let pos_cc = if signed {
                    IntCC::SignedGreaterThan
                } else {
                    IntCC::UnsignedGreaterThan
                };
                let pos = self.zip(x, z, |b, v, z| b.ins().icmp(pos_cc, v, z));
                let neg = self.zip(x, z, |b, v, z| b.ins().icmp(IntCC::SignedLessThan, v, z));
                let r = if signed {
                    self.select(neg, minus, z, c)
                } else {
                    z
                };
                self.select(pos, one, r, c)
            }
            LogicalNot => {
                let t = if boolean { x } else { self.truthy(x, compute) };
                let one = self.iconst(Class::I32, 1);
                return Ok(self.zip(t, one, |b, v, o| b.ins().bxor(v, o)));
            }
            BitwiseNot if boolean => {
                let one = self.iconst(c, 1);
                self.zip(x, one, |b, v, o| b.ins().bxor(v, o))
            }
            BitwiseNot => self.map(x, |b, v| b.ins().bnot(v)),
            Isnan if float => {
                let m = self.zip(x, x, |b, v, u| b.ins().fcmp(FloatCC::Unordered, v, u));
                return Ok(self.mask_to_bool(m));
            }
            Isnan => return Ok(self.iconst(Class::I32, 0)),
            // The sign bit: an integer comparison of the float's bits
            // (which counts -0.0 and negative NaNs).
            Signbit if float => {
                let ic = if c == Class::F64 {
                    Class::I64
                } else {
                    Class::I32
                };
                if ic.is_wide() {
                    self.scalar_only()?;
                }
                let bits = self.bits(x, ic);
                let z = self.iconst(ic, 0);
                let m = self.zip(bits, z, |b, v, z| b.ins().icmp(IntCC::SignedLessThan, v, z));
                return Ok(self.mask_to_bool(m));
            }
            Signbit if boolean || !signed => return Ok(self.iconst(Class::I32, 0)),
            Signbit => {
                if c.is_wide() {
                    self.scalar_only()?;
                }
                let z = self.iconst(c, 0);
                let m = self.zip(x, z, |b, v, z| b.ins().icmp(IntCC::SignedLessThan, v, z));
                return Ok(self.mask_to_bool(m));
            }
        };
        Ok(if boolean { r } else { self.finish(r, compute) })
    }

    /// A primitive binary op on values of its computation dtype (logical
    /// ops: of their own dtypes, only truthiness counts): one arm per op.
    #[allow(clippy::too_many_arguments)]
    pub fn binary(
        &mut self,
        ctx: &mut Ctx,
        op: BinaryOp,
        a: Val,
        a_dtype: DType,
        b: Val,
        b_dtype: DType,
        compute: DType,
    ) -> Emitted<Val> {
        use BinaryOp::*;
        let c = Class::of(compute);
        let float = c.is_float();
        let boolean = compute.is_bool();
        let signed = compute.is_signed();
        let r = match op {
            // Inference refuses bool subtraction.
            Sub if boolean => return Err(NoVector),
            Add | Maximum | BitwiseOr if boolean => self.zip(a, b, |bl, u, v| bl.ins().bor(u, v)),
            Mul | Minimum | BitwiseAnd if boolean => self.zip(a, b, |bl, u, v| bl.ins().band(u, v)),
            BitwiseXor => self.zip(a, b, |bl, u, v| bl.ins().bxor(u, v)),
            Add if float => self.zip(a, b, |bl, u, v| bl.ins().fadd(u, v)),
            Add => self.zip(a, b, |bl, u, v| bl.ins().iadd(u, v)),
            Sub if float => self.zip(a, b, |bl, u, v| bl.ins().fsub(u, v)),
            Sub => self.zip(a, b, |bl, u, v| bl.ins().isub(u, v)),
            Mul if float => self.zip(a, b, |bl, u, v| bl.ins().fmul(u, v)),
            Mul => {
                if c.is_wide() {
                    self.scalar_only()?;
                }
                self.zip(a, b, |bl, u, v| bl.ins().imul(u, v))
            }
            // Integer true division computes in floats (inference converts).
            Div => self.zip(a, b, |bl, u, v| bl.ins().fdiv(u, v)),
            DivTrunc if float => {
                let q = self.zip(a, b, |bl, u, v| bl.ins().fdiv(u, v));
                self.map(q, |bl, v| bl.ins().trunc(v))
            }
            DivFloor | Remainder if float => {
                self.scalar_only()?;
                let helper = match (op, c) {
                    (DivFloor, Class::F32) => Helper::DivFloor32,
                    (DivFloor, _) => Helper::DivFloor64,
                    (_, Class::F32) => Helper::Remainder32,
                    _ => Helper::Remainder64,
                };
                let r = ctx
                    .calls
                    .call(self.b, ctx.call_conv, helper, &[a.part(0), b.part(0)]);
                Val::one(r)
            }
            // fmod of floats: the interpreter's function (exact).
            Fmod if float => self.call_f64(ctx, Helper::Binary(op), &[a, b], c)?,
            // Hurwitz zeta, the incomplete gamma functions: the
            // interpreter's f64 functions.
            SpecialZeta | Igamma | Igammac => self.call_f64(ctx, Helper::Binary(op), &[a, b], c)?,
            // nextafter steps in the compute dtype's own format (f16 and
            // bf16 too), and the orthogonal polynomials' degree limits
            // depend on it: the interpreter's function, on values widened
            // to f64 (exactly) and narrowed back (exactly for nextafter,
            // rounded once for the polynomials).
            Nextafter | kiln_ir::polynomial_ops!() => {
                self.scalar_only()?;
                let wide = |e: &mut Self, v: Val| {
                    if c == Class::F32 {
                        e.b.ins().fpromote(types::F64, v.part(0))
                    } else {
                        v.part(0)
                    }
                };
                let (x, y) = (wide(self, a), wide(self, b));
                let r = ctx.calls.call(
                    self.b,
                    ctx.call_conv,
                    Helper::FloatWidth(op, compute),
                    &[x, y],
                );
                Val::one(if c == Class::F32 {
                    self.b.ins().fdemote(types::F32, r)
                } else {
                    r
                })
            }
            // gcd, lcm and shifts in the integer's own width: the
            // interpreter's function on values widened to i64.
            Gcd | Lcm | BitwiseLeftShift | BitwiseRightShift => {
                self.call_i64(ctx, Helper::IntWidth(op, compute), a, b, c, signed)?
            }
            DivTrunc | DivFloor | Remainder | Fmod => {
                self.scalar_only()?;
                Val::one(self.int_division(ctx, op, a.part(0), b.part(0), signed))
            }
            Pow if boolean => {
                // x ** 1 == x and x ** 0 == 1.
                let one = self.iconst(c, 1);
                let not_b = self.zip(b, one, |bl, v, o| bl.ins().bxor(v, o));
                self.zip(a, not_b, |bl, u, v| bl.ins().bor(u, v))
            }
            Pow if float => self.call_f64(ctx, Helper::Binary(op), &[a, b], c)?,
            Pow => self.call_i64(ctx, Helper::IntPow, a, b, c, signed)?,
            Maximum if float => self.float_extreme(a, b, c, true),
            Minimum if float => self.float_extreme(a, b, c, false),
            Maximum | Minimum => {
                if c.is_wide() {
                    self.scalar_only()?;
                }
                let max = op == Maximum;
                self.zip(a, b, |bl, u, v| match (max, signed) {
                    (true, true) => bl.ins().smax(u, v),
                    (true, false) => bl.ins().umax(u, v),
                    (false, true) => bl.ins().smin(u, v),
                    (false, false) => bl.ins().umin(u, v),
                })
            }
            Eq | Ne | Lt | Le | Gt | Ge => {
                let m = if float {
                    let cc = float_cc(op);
                    self.zip(a, b, |bl, u, v| bl.ins().fcmp(cc, u, v))
                } else {
                    let cc = int_cc(op, signed && !boolean);
                    if c.is_wide() && !matches!(op, Eq | Ne) {
                        self.scalar_only()?;
                    }
                    self.zip(a, b, |bl, u, v| bl.ins().icmp(cc, u, v))
                };
                return Ok(self.mask_to_bool(m));
            }
            LogicalAnd | LogicalOr | LogicalXor => {
                let x = self.truthy(a, a_dtype);
                let y = self.truthy(b, b_dtype);
                return Ok(self.zip(x, y, |bl, u, v| match op {
                    LogicalAnd => bl.ins().band(u, v),
                    LogicalOr => bl.ins().bor(u, v),
                    _ => bl.ins().bxor(u, v),
                }));
            }
            BitwiseAnd => self.zip(a, b, |bl, u, v| bl.ins().band(u, v)),
            BitwiseOr => self.zip(a, b, |bl, u, v| bl.ins().bor(u, v)),
            // Integers compute as floats (inference converts them).
            Atan2 if c == Class::F32 => function2(self, ctx, Function2::Atan2, a, b),
            Atan2 => self.call_f64(ctx, Helper::Binary(op), &[a, b], c)?,
        };
        Ok(if boolean { r } else { self.finish(r, compute) })
    }

    /// PyTorch's `maximum`/`minimum` of floats (and amax/amin folds): `a`
    /// unless `b` is strictly greater (smaller); NaN on either side wins.
    pub fn float_extreme(&mut self, a: Val, b: Val, c: Class, max: bool) -> Val {
        let cc = if max {
            FloatCC::LessThan
        } else {
            FloatCC::GreaterThan
        };
        let take_b = self.zip(a, b, |bl, u, v| bl.ins().fcmp(cc, u, v));
        let r = self.select(take_b, b, a, c);
        let nan = self.zip(a, b, |bl, u, v| bl.ins().fcmp(FloatCC::Unordered, u, v));
        let sum = self.zip(a, b, |bl, u, v| bl.ins().fadd(u, v));
        self.select(nan, sum, r, c)
    }

    /// Integer `//` (trunc or floor) and `%` with PyTorch's semantics:
    /// zero divisors set the status, `MIN / -1` wraps.
    fn int_division(
        &mut self,
        ctx: &mut Ctx,
        op: BinaryOp,
        x: Value,
        y: Value,
        signed: bool,
    ) -> Value {
        let ty = self.b.func.dfg.value_type(x);
        let zero = self.b.ins().iconst(ty, 0);
        let one = self.b.ins().iconst(ty, 1);
        let is_zero = self.b.ins().icmp(IntCC::Equal, y, zero);
        // Record the error; carry on with a harmless divisor.
        let flag = self.b.ins().uextend(types::I32, is_zero);
        let status = self.b.use_var(ctx.status);
        let status = self.b.ins().bor(status, flag);
        self.b.def_var(ctx.status, status);
        let y = self.b.ins().select(is_zero, one, y);
        if !signed {
            return match op {
                BinaryOp::Remainder | BinaryOp::Fmod => self.b.ins().urem(x, y),
                _ => self.b.ins().udiv(x, y),
            };
        }
        // x86 traps on MIN / -1: use y = 1 and negate instead.
        let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
        let safe_y = self.b.ins().select(minus_one, one, y);
        let q = self.b.ins().sdiv(x, safe_y);
        let neg_x = self.b.ins().ineg(x);
        let q = self.b.ins().select(minus_one, neg_x, q);
        let r = self.b.ins().srem(x, safe_y);
        let r = self.b.ins().select(minus_one, zero, r);
        // Floor semantics: adjust when the remainder's sign differs from y's.
        let r_nonzero = self.b.ins().icmp(IntCC::NotEqual, r, zero);
        let r_neg = self.b.ins().icmp(IntCC::SignedLessThan, r, zero);
        let y_neg = self.b.ins().icmp(IntCC::SignedLessThan, y, zero);
        let differ = self.b.ins().bxor(r_neg, y_neg);
        let adjust = self.b.ins().band(r_nonzero, differ);
        match op {
            BinaryOp::DivTrunc => q,
            // fmod truncates: the remainder as it is.
            BinaryOp::Fmod => r,
            BinaryOp::DivFloor => {
                let q1 = self.b.ins().iadd_imm_s(q, -1);
                self.b.ins().select(adjust, q1, q)
            }
            _ => {
                let ry = self.b.ins().iadd(r, y);
                self.b.ins().select(adjust, ry, r)
            }
        }
    }

    /// `cond ? a : b` with a bool condition.
    pub fn where_(&mut self, cond: Val, a: Val, b: Val, d: DType) -> Val {
        let c = Class::of(d);
        let m = self.bool_to_mask(cond, c);
        self.select(m, a, b, c)
    }

    /// PyTorch's conversion from `from` to `to` (x86-64 semantics for
    /// floats out of an integer's range).
    pub fn cast(&mut self, x: Val, from: DType, to: DType) -> Emitted<Val> {
        if from == to {
            return Ok(x);
        }
        let (fc, tc) = (Class::of(from), Class::of(to));
        if to.is_bool() {
            return Ok(self.truthy(x, from));
        }
        if !fc.is_float() && !tc.is_float() {
            // Integer (or bool) to integer: extend or truncate, then wrap.
            let y = match (fc.is_wide(), tc.is_wide()) {
                (false, true) => self.widen_int(x, from.is_signed()),
                (true, false) => self.truncate_int(x),
                _ => x,
            };
            return Ok(self.wrap(y, to));
        }
        if !fc.is_float() {
            // Integer to float: one rounding (to f32 first for f16/bf16).
            // Narrow unsigned values fit a signed i32 exactly.
            let signed = from.is_signed() || from.bits() < 32;
            let y = match self.w {
                Width::Scalar => {
                    let ty = tc.ty(Width::Scalar);
                    let v = x.part(0);
                    Val::one(if signed {
                        self.b.ins().fcvt_from_sint(ty, v)
                    } else {
                        self.b.ins().fcvt_from_uint(ty, v)
                    })
                }
                Width::Vector => {
                    if fc.is_wide() || tc.is_wide() || !signed {
                        return Err(NoVector);
                    }
                    Val::one(self.b.ins().fcvt_from_sint(types::F32X4, x.part(0)))
                }
            };
            return Ok(self.finish(y, to));
        }
        if tc.is_float() {
            // Float to float, through f32 for the small formats.
            let y = match (fc, tc) {
                (Class::F32, Class::F64) => self.promote(x),
                (Class::F64, Class::F32) => self.demote(x),
                _ => x,
            };
            return Ok(self.finish(y, to));
        }
        // Float to integer.
        self.float_to_int(x, fc, to)
    }

    /// x86-64's truncation of floats to integers as PyTorch's build does it:
    /// out-of-range and NaN give the "integer indefinite" value, narrow types
    /// go through 32 bits, u32/u64 through the 2^(n-1) bias.
    fn float_to_int(&mut self, x: Val, fc: Class, to: DType) -> Emitted<Val> {
        if self.w == Width::Vector {
            // Only the 32-bit path has a vector instruction with the x86
            // semantics (cvttps2dq).
            if fc != Class::F32 || matches!(to, DType::U32) || Class::of(to).is_wide() {
                return Err(NoVector);
            }
            let r = Val::one(self.b.ins().x86_cvtt2dq(types::I32X4, x.part(0)));
            return Ok(self.wrap(r, to));
        }
        let v = x.part(0);
        let fty = fc.ty(Width::Scalar);
        let truncate = |e: &mut Self, v: Value, bits: u32| -> Value {
            let ity = if bits == 64 { types::I64 } else { types::I32 };
            let limit = 2f64.powi(bits as i32 - 1);
            let (lim, neg) = if fty == types::F32 {
                (
                    e.b.ins().f32const(limit as f32),
                    e.b.ins().f32const(-limit as f32),
                )
            } else {
                (e.b.ins().f64const(limit), e.b.ins().f64const(-limit))
            };
            let too_big = e.b.ins().fcmp(FloatCC::GreaterThanOrEqual, v, lim);
            let too_small = e.b.ins().fcmp(FloatCC::LessThan, v, neg);
            let nan = e.b.ins().fcmp(FloatCC::Unordered, v, v);
            let bad = e.b.ins().bor(too_big, too_small);
            let bad = e.b.ins().bor(bad, nan);
            let t = e.b.ins().fcvt_to_sint_sat(ity, v);
            let min = e.b.ins().iconst(
                ity,
                if bits == 64 {
                    i64::MIN
                } else {
                    i32::MIN as i64
                },
            );
            e.b.ins().select(bad, min, t)
        };
        let biased = |e: &mut Self, v: Value, bits: u32| -> Value {
            // x >= 2^(n-1): truncate x - 2^(n-1) and set the top bit.
            let big = 2f64.powi(bits as i32 - 1);
            let bigv = if fty == types::F32 {
                e.b.ins().f32const(big as f32)
            } else {
                e.b.ins().f64const(big)
            };
            let is_big = e.b.ins().fcmp(FloatCC::GreaterThanOrEqual, v, bigv);
            let shifted = e.b.ins().fsub(v, bigv);
            let low = truncate(e, v, bits);
            let high = truncate(e, shifted, bits);
            let ity = if bits == 64 { types::I64 } else { types::I32 };
            let top = e.b.ins().iconst(
                ity,
                if bits == 64 {
                    i64::MIN
                } else {
                    i32::MIN as i64
                },
            );
            let high = e.b.ins().bxor(high, top);
            e.b.ins().select(is_big, high, low)
        };
        let r = match to {
            DType::I64 => truncate(self, v, 64),
            DType::U64 => biased(self, v, 64),
            DType::U32 => biased(self, v, 32),
            _ => {
                let t = truncate(self, v, 32);
                return Ok(self.wrap(Val::one(t), to));
            }
        };
        Ok(Val::one(r))
    }
}

fn float_cc(op: BinaryOp) -> FloatCC {
    match op {
        BinaryOp::Eq => FloatCC::Equal,
        BinaryOp::Ne => FloatCC::NotEqual,
        BinaryOp::Lt => FloatCC::LessThan,
        BinaryOp::Le => FloatCC::LessThanOrEqual,
        BinaryOp::Gt => FloatCC::GreaterThan,
        _ => FloatCC::GreaterThanOrEqual,
    }
}

fn int_cc(op: BinaryOp, signed: bool) -> IntCC {
    match (op, signed) {
        (BinaryOp::Eq, _) => IntCC::Equal,
        (BinaryOp::Ne, _) => IntCC::NotEqual,
        (BinaryOp::Lt, true) => IntCC::SignedLessThan,
        (BinaryOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (BinaryOp::Gt, true) => IntCC::SignedGreaterThan,
        (BinaryOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (BinaryOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinaryOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (BinaryOp::Gt, false) => IntCC::UnsignedGreaterThan,
        _ => IntCC::UnsignedGreaterThanOrEqual,
    }
}
