//! Math that kernels call out for, and the inline f32 exponential.
//!
//! Functions without a cheap exact inline form (sin, log, tanh, erf, pow,
//! floor division, ...) are calls to the reference interpreter's own
//! element semantics, computed in f64 for f16/bf16/f32 inputs and rounded
//! once: bit-identical to the interpreter. Any float unary or binary op
//! can be computed this way ([`Helper::Unary`], [`Helper::Binary`]). The f32 exponential is inline
//! (it is what softmax spends its time in): the interpreter's own algorithm,
//! step for step, in scalar and vector code alike.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{AbiParam, InstBuilder, SigRef, Signature, Value, types};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use kiln_ir::{BinaryOp, DType, UnaryOp};
use kiln_runtime::convert::Elem;
use kiln_runtime::interp::elementwise::{
    self, EXP_F32_HI, EXP_F32_LN2_HI, EXP_F32_LN2_LO, EXP_F32_LO, EXP_F32_POLY, float_div_floor,
    float_remainder, int_pow,
};

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
        }
    }

    /// The op index passed first, for the op-generic helpers.
    fn op_index(self) -> Option<u32> {
        match self {
            Helper::Unary(op) => UnaryOp::ALL.iter().position(|o| *o == op),
            Helper::Binary(op) => BinaryOp::ALL.iter().position(|o| *o == op),
            _ => None,
        }
        .map(|i| i as u32)
    }

    /// The parameter types (the op index first where there is one) and
    /// the result type.
    fn signature(self) -> (Vec<types::Type>, types::Type) {
        match self {
            Helper::Unary(_) => (vec![types::I32, types::F64], types::F64),
            Helper::Binary(_) => (vec![types::I32, types::F64, types::F64], types::F64),
            Helper::DivFloor64 | Helper::Remainder64 => (vec![types::F64; 2], types::F64),
            Helper::DivFloor32 | Helper::Remainder32 => (vec![types::F32; 2], types::F32),
            Helper::IntPow => (vec![types::I64; 2], types::I64),
        }
    }
}

/// The signatures a function has imported, by helper shape.
#[derive(Default)]
pub struct Calls {
    sigs: Vec<((Vec<types::Type>, types::Type), SigRef)>,
}

impl Calls {
    /// Calls `helper` on scalar arguments.
    pub fn call(
        &mut self,
        b: &mut FunctionBuilder,
        call_conv: CallConv,
        helper: Helper,
        args: &[Value],
    ) -> Value {
        let shape = helper.signature();
        let sig = match self.sigs.iter().find(|(s, _)| *s == shape) {
            Some((_, r)) => *r,
            None => {
                let mut sig = Signature::new(call_conv);
                for &t in &shape.0 {
                    sig.params.push(AbiParam::new(t));
                }
                sig.returns.push(AbiParam::new(shape.1));
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
        let call = b.ins().call_indirect(sig, callee, &all);
        b.inst_results(call)[0]
    }
}

/// e^x for f32-class values, inline: the interpreter's [`exp_f32`], step
/// for step in f32 arithmetic (so the bits agree), in scalar or vector code.
pub fn exp_f32(e: &mut Emit, x: Val) -> Val {
    let c = Class::F32;
    let k = |e: &mut Emit, v: f32| e.fconst(c, v as f64);
    // Clamp (a NaN input is selected back at the end).
    let hi = k(e, EXP_F32_HI);
    let lo = k(e, EXP_F32_LO);
    let above = e.zip(x, hi, |b, v, h| b.ins().fcmp(FloatCC::GreaterThan, v, h));
    let xc = e.select(above, hi, x, c);
    let below = e.zip(xc, lo, |b, v, l| b.ins().fcmp(FloatCC::LessThan, v, l));
    let xc = e.select(below, lo, xc, c);
    let log2e = k(e, std::f32::consts::LOG2_E);
    let t = e.zip(xc, log2e, |b, v, u| b.ins().fmul(v, u));
    let n = e.map(t, |b, v| b.ins().nearest(v));
    let ln2_hi = k(e, EXP_F32_LN2_HI);
    let ln2_lo = k(e, EXP_F32_LN2_LO);
    let minus_n = e.map(n, |b, v| b.ins().fneg(v));
    let r = e.zip3(minus_n, ln2_hi, xc, |b, u, v, w| b.ins().fma(u, v, w));
    let r = e.zip3(minus_n, ln2_lo, r, |b, u, v, w| b.ins().fma(u, v, w));
    let mut p = k(e, EXP_F32_POLY[0]);
    for &coeff in &EXP_F32_POLY[1..] {
        let cv = k(e, coeff);
        p = e.zip3(p, r, cv, |b, u, v, w| b.ins().fma(u, v, w));
    }
    let r2 = e.zip(r, r, |b, v, u| b.ins().fmul(v, u));
    p = e.zip3(p, r2, r, |b, u, v, w| b.ins().fma(u, v, w));
    let one = k(e, 1.0);
    p = e.zip(p, one, |b, v, u| b.ins().fadd(v, u));
    // n is an integer in [-150, 128]: the conversion is exact.
    let ni = match e.w {
        Width::Scalar => e.map(n, |b, v| b.ins().fcvt_to_sint_sat(types::I32, v)),
        Width::Vector => e.map(n, |b, v| b.ins().x86_cvtt2dq(types::I32X4, v)),
    };
    let n1 = e.map(ni, |b, v| b.ins().sshr_imm_u(v, 1));
    let n2 = e.zip(ni, n1, |b, v, u| b.ins().isub(v, u));
    let bias = e.iconst(Class::I32, 127);
    for part in [n1, n2] {
        let biased = e.zip(part, bias, |b, v, u| b.ins().iadd(v, u));
        let bits = e.map(biased, |b, v| b.ins().ishl_imm_u(v, 23));
        let pow2 = e.bits(bits, c);
        p = e.zip(p, pow2, |b, v, u| b.ins().fmul(v, u));
    }
    let nan = e.zip(x, x, |b, v, u| b.ins().fcmp(FloatCC::Unordered, v, u));
    e.select(nan, x, p, c)
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
