//! Math that kernels call out for, and the inline f32 functions.
//!
//! The f32 functions of `kiln-math` (exp, log, tanh, erf, erfc, sin, cos,
//! atan, asin, acos, atan2) are
//! inline: [`Lanes`] implements its `Builder` over Cranelift values, so
//! scalar and 4-lane vector code run the interpreter's algorithm step for
//! step and give the same bits (and where the CPU has AVX-512F, or AVX2
//! and FMA, vector rows call the same algorithm on 16 or 8 lanes instead:
//! [`Helper::Sixteen`]).
//! Other functions (log2, expm1, pow, floor
//! division, f64 math, ...) are calls to the reference interpreter's own
//! element semantics, computed in f64 for f16/bf16/f32 inputs and rounded
//! once: bit-identical to the interpreter ([`Helper::Unary`],
//! [`Helper::Binary`]).

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, InstBuilder, SigRef, Signature, Value, types};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use kiln_ir::{BinaryOp, DType, UnaryOp};
use kiln_math::{Builder, Function, Function2};
use kiln_runtime::convert::Elem;
use kiln_runtime::interp::elementwise::{self, float_div_floor, float_remainder, int_pow};

use super::ops::Ctx;
use super::values::{Class, Emit, Val, Width};

/// A function kernels call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    /// A float unary op by the interpreter's own function, in f64.
    Unary(UnaryOp),
    /// A float binary op by the interpreter's own function, in f64.
    Binary(BinaryOp),
    DivFloor32,
    DivFloor64,
    Remainder32,
    Remainder64,
    IntPow,
    /// An f32 function by `kiln_math::exact`: the f64 function, rounded.
    Exact(Function),
    /// An integer binary op of this dtype's width by the interpreter's
    /// own function (gcd, lcm, the shifts), on values widened to i64.
    IntWidth(BinaryOp, DType),
    /// A float binary op whose value depends on the dtype, by the
    /// interpreter's own function (nextafter in the dtype's format, the
    /// orthogonal polynomials' degree limits), on values widened to f64.
    FloatWidth(BinaryOp, DType),
    /// A kiln-math function on the n floats at a pointer (a multiple of
    /// 16), in place, by AVX-512 or AVX2 (`kiln_runtime::sixteen_lanes`:
    /// only where the CPU has one of them).
    Sixteen(Function),
}

/// The op and dtype of [`Helper::IntWidth`] and [`Helper::FloatWidth`],
/// packed into the first argument.
fn width_code(op: BinaryOp, d: DType) -> Option<usize> {
    let o = BinaryOp::ALL.iter().position(|o| *o == op)?;
    let t = DType::ALL.iter().position(|t| *t == d)?;
    Some(o * DType::ALL.len() + t)
}

fn width_decode(code: u32) -> Option<(BinaryOp, DType)> {
    let n = DType::ALL.len();
    let code = code as usize;
    Some((*BinaryOp::ALL.get(code / n)?, *DType::ALL.get(code % n)?))
}

/// The interpreter's value of an integer op in a dtype's width.
extern "C" fn int_width(code: u32, x: i64, y: i64) -> i64 {
    width_decode(code).map_or(0, |(op, d)| {
        elementwise::int_in_width(op, i128::from(x), i128::from(y), d) as i64
    })
}

/// The interpreter's value of a float op in a dtype's format.
extern "C" fn float_width(code: u32, x: f64, y: f64) -> f64 {
    width_decode(code).map_or(f64::NAN, |(op, d)| {
        match elementwise::binary(op, Elem::F(x), Elem::F(y), d) {
            Ok(Elem::F(r)) => r,
            _ => f64::NAN,
        }
    })
}

/// `kiln_math::exact` (the function by its index in [`Function::ALL`]).
extern "C" fn exact_f32(f: u32, x: f32) -> f32 {
    Function::ALL
        .get(f as usize)
        .map_or(f32::NAN, |&f| kiln_math::exact(f, x))
}

/// The interpreter's value of a float unary op (the op by its index in
/// [`UnaryOp::ALL`]), for ops without inline code.
extern "C" fn unary_f64(op: u32, x: f64) -> f64 {
    let Some(&op) = UnaryOp::ALL.get(op as usize) else {
        return f64::NAN;
    };
    match elementwise::unary(op, Elem::F(x), DType::F64) {
        Ok(Elem::F(r)) => r,
        _ => f64::NAN,
    }
}

/// The interpreter's value of a float binary op (by its index in
/// [`BinaryOp::ALL`]).
extern "C" fn binary_f64(op: u32, x: f64, y: f64) -> f64 {
    let Some(&op) = BinaryOp::ALL.get(op as usize) else {
        return f64::NAN;
    };
    match elementwise::binary(op, Elem::F(x), Elem::F(y), DType::F64) {
        Ok(Elem::F(r)) => r,
        _ => f64::NAN,
    }
}

extern "C" fn div_floor32(x: f32, y: f32) -> f32 {
    float_div_floor(x, y)
}
extern "C" fn div_floor64(x: f64, y: f64) -> f64 {
    float_div_floor(x, y)
}
extern "C" fn remainder32(x: f32, y: f32) -> f32 {
    float_remainder(x, y)
}
extern "C" fn remainder64(x: f64, y: f64) -> f64 {
    float_remainder(x, y)
}
extern "C" fn ipow(x: i64, y: i64) -> i64 {
    int_pow(x as i128, y as i128) as i64
}

impl Helper {
    fn address(self) -> usize {
        match self {
            Helper::Unary(_) => unary_f64 as extern "C" fn(u32, f64) -> f64 as usize,
            Helper::Binary(_) => binary_f64 as extern "C" fn(u32, f64, f64) -> f64 as usize,
            Helper::DivFloor32 => div_floor32 as extern "C" fn(f32, f32) -> f32 as usize,
            Helper::DivFloor64 => div_floor64 as extern "C" fn(f64, f64) -> f64 as usize,
            Helper::Remainder32 => remainder32 as extern "C" fn(f32, f32) -> f32 as usize,
            Helper::Remainder64 => remainder64 as extern "C" fn(f64, f64) -> f64 as usize,
            Helper::IntPow => ipow as extern "C" fn(i64, i64) -> i64 as usize,
            Helper::Exact(_) => exact_f32 as extern "C" fn(u32, f32) -> f32 as usize,
            Helper::IntWidth(..) => int_width as extern "C" fn(u32, i64, i64) -> i64 as usize,
            Helper::FloatWidth(..) => float_width as extern "C" fn(u32, f64, f64) -> f64 as usize,
            // Emitted only where the CPU has it (`Gen::sixteen`).
            Helper::Sixteen(_) => kiln_runtime::sixteen_lanes().map_or(0, |f| f as usize),
        }
    }

    /// The op index passed first, for the op-generic helpers.
    fn op_index(self) -> Option<u32> {
        match self {
            Helper::Unary(op) => UnaryOp::ALL.iter().position(|o| *o == op),
            Helper::Binary(op) => BinaryOp::ALL.iter().position(|o| *o == op),
            Helper::Exact(f) | Helper::Sixteen(f) => Function::ALL.iter().position(|g| *g == f),
            Helper::IntWidth(op, d) | Helper::FloatWidth(op, d) => width_code(op, d),
            _ => None,
        }
        .map(|i| i as u32)
    }

    /// The parameter types (the op index first where there is one) and
    /// the result type (none for a helper that writes through a pointer).
    fn signature(self) -> (Vec<types::Type>, Option<types::Type>) {
        let (params, result) = match self {
            Helper::Unary(_) => (vec![types::I32, types::F64], types::F64),
            Helper::Binary(_) => (vec![types::I32, types::F64, types::F64], types::F64),
            Helper::DivFloor64 | Helper::Remainder64 => (vec![types::F64; 2], types::F64),
            Helper::DivFloor32 | Helper::Remainder32 => (vec![types::F32; 2], types::F32),
            Helper::IntPow => (vec![types::I64; 2], types::I64),
            Helper::Exact(_) => (vec![types::I32, types::F32], types::F32),
            Helper::IntWidth(..) => (vec![types::I32, types::I64, types::I64], types::I64),
            Helper::FloatWidth(..) => (vec![types::I32, types::F64, types::F64], types::F64),
            Helper::Sixteen(_) => return (vec![types::I32, types::I64, types::I64], None),
        };
        (params, Some(result))
    }
}

/// A helper's parameter types and result type.
type Shape = (Vec<types::Type>, Option<types::Type>);

/// The signatures a function has imported, by helper shape.
#[derive(Default)]
pub struct Calls {
    sigs: Vec<(Shape, SigRef)>,
}

impl Calls {
    /// Calls `helper` on scalar arguments; its result.
    pub fn call(
        &mut self,
        b: &mut FunctionBuilder,
        call_conv: CallConv,
        helper: Helper,
        args: &[Value],
    ) -> Value {
        let call = self.emit(b, call_conv, helper, args);
        b.inst_results(call)[0]
    }

    /// Calls a helper that returns nothing (it writes through a pointer
    /// among `args`).
    pub fn call_in_place(
        &mut self,
        b: &mut FunctionBuilder,
        call_conv: CallConv,
        helper: Helper,
        args: &[Value],
    ) {
        self.emit(b, call_conv, helper, args);
    }

    fn emit(
        &mut self,
        b: &mut FunctionBuilder,
        call_conv: CallConv,
        helper: Helper,
        args: &[Value],
    ) -> cranelift_codegen::ir::Inst {
        let shape = helper.signature();
        let sig = match self.sigs.iter().find(|(s, _)| *s == shape) {
            Some((_, r)) => *r,
            None => {
                let mut sig = Signature::new(call_conv);
                for &t in &shape.0 {
                    sig.params.push(AbiParam::new(t));
                }
                sig.returns.extend(shape.1.map(AbiParam::new));
                let r = b.import_signature(sig);
                self.sigs.push((shape, r));
                r
            }
        };
        let mut all = Vec::with_capacity(args.len() + 1);
        if let Some(index) = helper.op_index() {
            all.push(b.ins().iconst(types::I32, index as i64));
        }
        all.extend_from_slice(args);
        let callee = b.ins().iconst(types::I64, helper.address() as i64);
        b.ins().call_indirect(sig, callee, &all)
    }
}

/// `kiln_math`'s operations as Cranelift instructions on f32-class
/// values (one lane, or four), for every function it defines.
pub struct Lanes<'x, 'a, 'b, 'c> {
    /// The instruction emitter, at the kernel's width.
    pub e: &'x mut Emit<'a, 'b>,
    /// Helper calls (for arguments a function's fast path does not cover).
    pub ctx: &'x mut Ctx<'c>,
}

/// `f(x)` on f32-class values, inline.
pub fn function(e: &mut Emit, ctx: &mut Ctx, f: Function, x: Val) -> Val {
    f.build(&mut Lanes { e, ctx }, x)
}

/// `f(a, c)` on f32-class values, inline.
pub fn function2(e: &mut Emit, ctx: &mut Ctx, f: Function2, a: Val, c: Val) -> Val {
    f.build(&mut Lanes { e, ctx }, a, c)
}

const F: Class = Class::F32;
const I: Class = Class::I32;

impl Builder for Lanes<'_, '_, '_, '_> {
    type F = Val;
    type I = Val;
    type M = Val;

    fn f32(&mut self, v: f32) -> Val {
        self.e.fconst(F, f64::from(v))
    }
    fn i32(&mut self, v: i32) -> Val {
        self.e.iconst(I, i64::from(v))
    }
    fn add(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().fadd(x, y))
    }
    fn sub(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().fsub(x, y))
    }
    fn mul(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().fmul(x, y))
    }
    fn div(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().fdiv(x, y))
    }
    fn sqrt(&mut self, a: Val) -> Val {
        self.e.map(a, |b, x| b.ins().sqrt(x))
    }
    fn fma(&mut self, a: Val, b: Val, c: Val) -> Val {
        self.e.zip3(a, b, c, |b, x, y, z| b.ins().fma(x, y, z))
    }
    fn neg(&mut self, a: Val) -> Val {
        self.e.map(a, |b, x| b.ins().fneg(x))
    }
    fn abs(&mut self, a: Val) -> Val {
        self.e.map(a, |b, x| b.ins().fabs(x))
    }
    fn round(&mut self, a: Val) -> Val {
        self.e.map(a, |b, x| b.ins().nearest(x))
    }
    fn lt(&mut self, a: Val, b: Val) -> Val {
        self.e
            .zip(a, b, |b, x, y| b.ins().fcmp(FloatCC::LessThan, x, y))
    }
    fn gt(&mut self, a: Val, b: Val) -> Val {
        self.e
            .zip(a, b, |b, x, y| b.ins().fcmp(FloatCC::GreaterThan, x, y))
    }
    fn is_nan(&mut self, a: Val) -> Val {
        self.e
            .zip(a, a, |b, x, y| b.ins().fcmp(FloatCC::Unordered, x, y))
    }
    fn select(&mut self, m: Val, a: Val, b: Val) -> Val {
        self.e.select(m, a, b, F)
    }
    fn nonzero(&mut self, a: Val) -> Val {
        let zero = self.e.iconst(I, 0);
        self.e
            .zip(a, zero, |b, x, z| b.ins().icmp(IntCC::NotEqual, x, z))
    }
    fn to_i32(&mut self, a: Val) -> Val {
        match self.e.w {
            Width::Scalar => self
                .e
                .map(a, |b, x| b.ins().fcvt_to_sint_sat(types::I32, x)),
            Width::Vector => self.e.map(a, |b, x| b.ins().x86_cvtt2dq(types::I32X4, x)),
        }
    }
    fn to_f32(&mut self, a: Val) -> Val {
        let ty = F.ty(self.e.w);
        self.e.map(a, |b, x| b.ins().fcvt_from_sint(ty, x))
    }
    fn iadd(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().iadd(x, y))
    }
    fn isub(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().isub(x, y))
    }
    fn iand(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().band(x, y))
    }
    fn ior(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().bor(x, y))
    }
    fn ixor(&mut self, a: Val, b: Val) -> Val {
        self.e.zip(a, b, |b, x, y| b.ins().bxor(x, y))
    }
    fn shl(&mut self, a: Val, n: u32) -> Val {
        self.e.map(a, |b, x| b.ins().ishl_imm_u(x, i64::from(n)))
    }
    fn sar(&mut self, a: Val, n: u32) -> Val {
        self.e.map(a, |b, x| b.ins().sshr_imm_u(x, i64::from(n)))
    }
    fn bits(&mut self, a: Val) -> Val {
        self.e.bits(a, I)
    }
    fn from_bits(&mut self, a: Val) -> Val {
        self.e.bits(a, F)
    }
    fn unless_rare(&mut self, usual: Val, common: Val, rare: impl FnOnce(&mut Self) -> Val) -> Val {
        // A branch around the rare code, taken when some lane needs it.
        let all = self.lanes_true(usual, true);
        self.branch_around(all, false, common, |s| {
            let r = rare(s);
            s.select(usual, common, r).part(0)
        })
    }
    fn exact(&mut self, f: Function, x: Val, when: Val, fast: Val) -> Val {
        // A branch around the calls, which the fast path almost always
        // makes unnecessary.
        let any = self.lanes_true(when, false);
        self.branch_around(any, true, fast, |s| match s.e.w {
            Width::Scalar => {
                s.ctx
                    .calls
                    .call(s.e.b, s.ctx.call_conv, Helper::Exact(f), &[x.part(0)])
            }
            Width::Vector => {
                let mut v = fast.part(0);
                for lane in 0..4u8 {
                    let xi = s.e.b.ins().extractlane(x.part(0), lane);
                    let r = s
                        .ctx
                        .calls
                        .call(s.e.b, s.ctx.call_conv, Helper::Exact(f), &[xi]);
                    v = s.e.b.ins().insertlane(v, r, lane);
                }
                // Lanes the fast path covers keep its value.
                s.e.select(when, Val::one(v), fast, F).part(0)
            }
        })
    }
}

impl Lanes<'_, '_, '_, '_> {
    /// Whether every lane of a mask holds (`all`), or some lane does, as
    /// one truth value to branch on.
    fn lanes_true(&mut self, m: Val, all: bool) -> Value {
        match (self.e.w, all) {
            (Width::Scalar, _) => m.part(0),
            (Width::Vector, true) => self.e.b.ins().vall_true(m.part(0)),
            (Width::Vector, false) => self.e.b.ins().vany_true(m.part(0)),
        }
    }

    /// `slow(self)` where `cond` is `slow_if`, else `fast`: the slow code
    /// in a block of its own that only that branch runs.
    fn branch_around(
        &mut self,
        cond: Value,
        slow_if: bool,
        fast: Val,
        slow: impl FnOnce(&mut Self) -> Value,
    ) -> Val {
        let b = &mut *self.e.b;
        let slow_block = b.create_block();
        let join = b.create_block();
        b.append_block_param(join, F.ty(self.e.w));
        let fast_args = [fast.part(0).into()];
        if slow_if {
            b.ins().brif(cond, slow_block, &[], join, &fast_args);
        } else {
            b.ins().brif(cond, join, &fast_args, slow_block, &[]);
        }
        b.switch_to_block(slow_block);
        b.seal_block(slow_block);
        let v = slow(self);
        let b = &mut *self.e.b;
        b.ins().jump(join, &[v.into()]);
        b.switch_to_block(join);
        b.seal_block(join);
        Val::one(b.block_params(join)[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_match_the_interpreter() {
        assert_eq!(div_floor32(-3.0, 2.0), -2.0);
        assert_eq!(remainder64(-3.0, 2.0), 1.0);
        assert_eq!(ipow(2, 10), 1024);
        assert_eq!(ipow(2, -1), 0);
    }
}
