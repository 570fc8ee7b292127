//! Math that kernels call out for, and the inline f32 exponential.
//!
//! Functions without a cheap exact inline form (sin, log, tanh, erf, pow,
//! floor division, ...) are calls to the very functions the reference
//! interpreter uses, computed in f64 for f16/bf16/f32 inputs and rounded
//! once: bit-identical to the interpreter. The f32 exponential is inline
//! (it is what softmax spends its time in), computed in f64 and rounded
//! once, in scalar and vector code alike.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{AbiParam, InstBuilder, SigRef, Signature, Value, types};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use kiln_runtime::interp::elementwise::{float_div_floor, float_remainder, int_pow};

use super::values::{Class, Emit, Val};

/// A function kernels call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    Exp,
    Log,
    Log2,
    Sin,
    Cos,
    Tanh,
    Erf,
    Pow,
    DivFloor32,
    DivFloor64,
    Remainder32,
    Remainder64,
    IntPow,
}

extern "C" fn exp(x: f64) -> f64 {
    x.exp()
}
extern "C" fn log(x: f64) -> f64 {
    x.ln()
}
extern "C" fn log2(x: f64) -> f64 {
    x.log2()
}
extern "C" fn sin(x: f64) -> f64 {
    x.sin()
}
extern "C" fn cos(x: f64) -> f64 {
    x.cos()
}
extern "C" fn tanh(x: f64) -> f64 {
    x.tanh()
}
extern "C" fn erf(x: f64) -> f64 {
    libm::erf(x)
}
extern "C" fn pow(x: f64, y: f64) -> f64 {
    x.powf(y)
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
            Helper::Exp => exp as extern "C" fn(f64) -> f64 as usize,
            Helper::Log => log as extern "C" fn(f64) -> f64 as usize,
            Helper::Log2 => log2 as extern "C" fn(f64) -> f64 as usize,
            Helper::Sin => sin as extern "C" fn(f64) -> f64 as usize,
            Helper::Cos => cos as extern "C" fn(f64) -> f64 as usize,
            Helper::Tanh => tanh as extern "C" fn(f64) -> f64 as usize,
            Helper::Erf => erf as extern "C" fn(f64) -> f64 as usize,
            Helper::Pow => pow as extern "C" fn(f64, f64) -> f64 as usize,
            Helper::DivFloor32 => div_floor32 as extern "C" fn(f32, f32) -> f32 as usize,
            Helper::DivFloor64 => div_floor64 as extern "C" fn(f64, f64) -> f64 as usize,
            Helper::Remainder32 => remainder32 as extern "C" fn(f32, f32) -> f32 as usize,
            Helper::Remainder64 => remainder64 as extern "C" fn(f64, f64) -> f64 as usize,
            Helper::IntPow => ipow as extern "C" fn(i64, i64) -> i64 as usize,
        }
    }

    /// (argument count, type).
    fn signature(self) -> (usize, types::Type) {
        match self {
            Helper::Exp
            | Helper::Log
            | Helper::Log2
            | Helper::Sin
            | Helper::Cos
            | Helper::Tanh
            | Helper::Erf => (1, types::F64),
            Helper::Pow | Helper::DivFloor64 | Helper::Remainder64 => (2, types::F64),
            Helper::DivFloor32 | Helper::Remainder32 => (2, types::F32),
            Helper::IntPow => (2, types::I64),
        }
    }
}

/// The signatures a function has imported, by helper shape.
#[derive(Default)]
pub struct Calls {
    sigs: Vec<((usize, types::Type), SigRef)>,
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
                for _ in 0..shape.0 {
                    sig.params.push(AbiParam::new(shape.1));
                }
                sig.returns.push(AbiParam::new(shape.1));
                let r = b.import_signature(sig);
                self.sigs.push((shape, r));
                r
            }
        };
        let callee = b.ins().iconst(types::I64, helper.address() as i64);
        let call = b.ins().call_indirect(sig, callee, args);
        b.inst_results(call)[0]
    }
}

/// e^x for f32-class values, inline: computed in f64 to well beyond f32's
/// precision, then rounded once, so it agrees with the interpreter's
/// correctly rounded `exp` except where the exact value lies within 2^-40
/// of a rounding boundary.
pub fn exp_f32(e: &mut Emit, x: Val) -> Val {
    let c = Class::F64;
    // Beyond these, e^x is inf or 0 in f32; clamping keeps 2^n finite.
    let hi = e.fconst(Class::F32, 89.0);
    let lo = e.fconst(Class::F32, -104.0);
    let xc = e.zip(x, hi, |b, v, h| b.ins().fmin(v, h));
    let xc = e.zip(xc, lo, |b, v, l| b.ins().fmax(v, l));
    let xd = e.promote(xc);
    let log2e = e.fconst(c, std::f64::consts::LOG2_E);
    let t = e.zip(xd, log2e, |b, v, k| b.ins().fmul(v, k));
    let n = e.map(t, |b, v| b.ins().nearest(v));
    // r = x - n·ln2 in two steps (Cody-Waite): |r| <= ln2/2.
    let ln2_hi = e.fconst(c, f64::from_bits(0x3FE6_2E42_FEE0_0000));
    let ln2_lo = e.fconst(c, 1.908_214_929_270_587_7e-10);
    let nh = e.zip(n, ln2_hi, |b, v, k| b.ins().fmul(v, k));
    let r = e.zip(xd, nh, |b, v, u| b.ins().fsub(v, u));
    let nl = e.zip(n, ln2_lo, |b, v, k| b.ins().fmul(v, k));
    let r = e.zip(r, nl, |b, v, u| b.ins().fsub(v, u));
    // Taylor series to r^11/11!: error below 2^-46 on |r| <= ln2/2.
    let mut p = e.fconst(c, 1.0 / 39_916_800.0);
    let mut factorial = 39_916_800.0f64;
    for k in (0..11).rev() {
        factorial /= (k + 1) as f64;
        let coeff = e.fconst(c, 1.0 / factorial);
        p = e.zip(p, r, |b, v, u| b.ins().fmul(v, u));
        p = e.zip(p, coeff, |b, v, u| b.ins().fadd(v, u));
    }
    // 2^n from the bits of n + 1.5·2^52 (n sits in the low bits).
    let magic = e.fconst(c, 6_755_399_441_055_744.0);
    let shifted = e.zip(n, magic, |b, v, m| b.ins().fadd(v, m));
    let bits = e.bits(shifted, Class::I64);
    let rebias = e.iconst(Class::I64, 1023 - 0x4338_0000_0000_0000);
    let biased = e.zip(bits, rebias, |b, v, k| b.ins().iadd(v, k));
    let exponent = e.map(biased, |b, v| b.ins().ishl_imm_u(v, 52));
    let pow2 = e.bits(exponent, Class::F64);
    let wide = e.zip(p, pow2, |b, v, u| b.ins().fmul(v, u));
    let scaled = e.demote(wide);
    let nan = e.zip(x, x, |b, v, u| b.ins().fcmp(FloatCC::Unordered, v, u));
    e.select(nan, x, scaled, Class::F32)
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
