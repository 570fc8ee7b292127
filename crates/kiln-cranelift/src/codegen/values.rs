//! How Kiln values live in Cranelift registers, in scalar and 4-lane
//! vector code, and how they are loaded, stored and converted.
//!
//! Every dtype has a register class: integers up to 32 bits (and bool, as
//! 0/1) in `i32` lanes, sign- or zero-extended as their dtype is signed;
//! 64-bit integers in `i64` lanes; f16, bf16 and f32 in `f32` lanes (f16
//! and bf16 values are exact there, and arithmetic on them is f32
//! arithmetic rounded back, as PyTorch computes them); f64 in `f64` lanes.
//! Vector code handles four elements at a time: one 128-bit register for
//! 32-bit classes, two for 64-bit ones. x64 Cranelift has no f16
//! conversions, so f16 is encoded and decoded with integer operations.

use std::collections::HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{
    Block, ConstantData, Endianness, Function, InstBuilder, MemFlagsData, Type, Value, types,
};
use cranelift_frontend::FunctionBuilder;
use kiln_ir::DType;

/// Elements per vector iteration.
pub const LANES: i64 = 4;

/// Scalar code (one element) or vector code (four).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    Scalar,
    Vector,
}

/// A register class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    I32,
    I64,
    F32,
    F64,
}

impl Class {
    pub fn of(d: DType) -> Class {
        match d {
            DType::I64 | DType::U64 => Class::I64,
            DType::F16 | DType::BF16 | DType::F32 => Class::F32,
            DType::F64 => Class::F64,
            _ => Class::I32,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Class::F32 | Class::F64)
    }

    pub fn is_wide(self) -> bool {
        matches!(self, Class::I64 | Class::F64)
    }

    /// The Cranelift type of one part.
    pub fn ty(self, w: Width) -> Type {
        match (self, w) {
            (Class::I32, Width::Scalar) => types::I32,
            (Class::I64, Width::Scalar) => types::I64,
            (Class::F32, Width::Scalar) => types::F32,
            (Class::F64, Width::Scalar) => types::F64,
            (Class::I32, Width::Vector) => types::I32X4,
            (Class::I64, Width::Vector) => types::I64X2,
            (Class::F32, Width::Vector) => types::F32X4,
            (Class::F64, Width::Vector) => types::F64X2,
        }
    }

    /// The integer class of the same width (for masks and bit tricks).
    pub fn int(self) -> Class {
        if self.is_wide() {
            Class::I64
        } else {
            Class::I32
        }
    }
}

/// The register parts of one value: one, or two for 64-bit classes in
/// vector code (lanes 0-1 and 2-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Val {
    pub parts: [Value; 2],
    pub n: usize,
}

impl Val {
    pub fn one(v: Value) -> Val {
        Val {
            parts: [v, v],
            n: 1,
        }
    }

    pub fn two(a: Value, b: Value) -> Val {
        Val {
            parts: [a, b],
            n: 2,
        }
    }

    pub fn part(&self, i: usize) -> Value {
        self.parts[i]
    }

    pub fn iter(&self) -> impl Iterator<Item = Value> + '_ {
        self.parts[..self.n].iter().copied()
    }
}

/// The class of a dtype's lanes as stored (f16 and bf16 as integer bits).
fn stored_class(d: DType) -> Class {
    match d {
        DType::F16 | DType::BF16 => Class::I32,
        other => Class::of(other),
    }
}

/// How an access moves along the vectorized loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stride {
    /// The same element for every lane.
    Zero,
    /// Consecutive elements.
    One,
    /// Elements this many bytes apart.
    Bytes(i64),
}

/// Constants of a function, defined once in its entry block: emitted where
/// they are used, they would be rebuilt at every iteration of a loop.
pub struct Consts {
    entry: Block,
    values: HashMap<(Type, u64), Value>,
}

impl Consts {
    pub fn new(entry: Block) -> Consts {
        Consts {
            entry,
            values: HashMap::new(),
        }
    }

    /// The constant of type `ty` with these bits (a splat for vectors of a
    /// scalar constant `scalar`).
    fn get(&mut self, func: &mut Function, ty: Type, bits: u64) -> Value {
        if let Some(&v) = self.values.get(&(ty, bits)) {
            return v;
        }
        let v = if ty.is_vector() {
            let lane = ty.lane_type();
            let scalar = self.get(func, lane, bits);
            let mut cur = FuncCursor::new(func).at_last_inst(self.entry);
            cur.ins().splat(ty, scalar)
        } else {
            let mut cur = FuncCursor::new(func).at_last_inst(self.entry);
            match ty {
                types::F32 => cur.ins().f32const(Ieee32::with_bits(bits as u32)),
                types::F64 => cur.ins().f64const(Ieee64::with_bits(bits)),
                _ => cur.ins().iconst(ty, bits as i64),
            }
        };
        self.values.insert((ty, bits), v);
        v
    }
}

/// Cranelift instructions over Kiln values, at one width.
pub struct Emit<'a, 'b> {
    pub b: &'a mut FunctionBuilder<'b>,
    pub w: Width,
    pub consts: &'a mut Consts,
}

pub fn flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

fn little() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

impl Emit<'_, '_> {
    pub fn parts(&self, c: Class) -> usize {
        if self.w == Width::Vector && c.is_wide() {
            2
        } else {
            1
        }
    }

    /// Applies `f` to each part.
    pub fn map(&mut self, x: Val, mut f: impl FnMut(&mut FunctionBuilder, Value) -> Value) -> Val {
        let mut out = x;
        for i in 0..x.n {
            out.parts[i] = f(self.b, x.parts[i]);
        }
        out
    }

    /// Applies `f` to each pair of parts.
    pub fn zip(
        &mut self,
        x: Val,
        y: Val,
        mut f: impl FnMut(&mut FunctionBuilder, Value, Value) -> Value,
    ) -> Val {
        let mut out = x;
        for i in 0..x.n {
            out.parts[i] = f(self.b, x.parts[i], y.parts[i]);
        }
        out
    }

    /// Applies `f` to each triple of parts.
    pub fn zip3(
        &mut self,
        x: Val,
        y: Val,
        z: Val,
        mut f: impl FnMut(&mut FunctionBuilder, Value, Value, Value) -> Value,
    ) -> Val {
        let mut out = x;
        for i in 0..x.n {
            out.parts[i] = f(self.b, x.parts[i], y.parts[i], z.parts[i]);
        }
        out
    }

    /// A constant of class `c` (from the entry block's pool).
    fn pooled(&mut self, c: Class, bits: u64) -> Val {
        let ty = c.ty(self.w);
        let v = self.consts.get(self.b.func, ty, bits);
        if self.parts(c) == 2 {
            Val::two(v, v)
        } else {
            Val::one(v)
        }
    }

    pub fn iconst(&mut self, c: Class, v: i64) -> Val {
        let bits = if c == Class::I32 { v as i32 as i64 } else { v };
        self.pooled(c, bits as u64)
    }

    pub fn fconst(&mut self, c: Class, v: f64) -> Val {
        let bits = match c {
            Class::F32 => (v as f32).to_bits() as u64,
            _ => v.to_bits(),
        };
        self.pooled(c, bits)
    }

    /// A scalar of class `c` in every lane.
    pub fn splat(&mut self, c: Class, s: Value) -> Val {
        match self.w {
            Width::Scalar => Val::one(s),
            Width::Vector => {
                let v = self.b.ins().splat(c.ty(Width::Vector), s);
                if c.is_wide() {
                    Val::two(v, v)
                } else {
                    Val::one(v)
                }
            }
        }
    }

    /// Reinterprets the bits of each part as class `to` (same width).
    pub fn bits(&mut self, x: Val, to: Class) -> Val {
        let ty = to.ty(self.w);
        let flags = if self.w == Width::Vector {
            little()
        } else {
            MemFlagsData::new()
        };
        self.map(x, |b, v| {
            if b.func.dfg.value_type(v) == ty {
                v
            } else {
                b.ins().bitcast(ty, flags, v)
            }
        })
    }

    /// Lane-wise `cond ? a : b` where `cond` is a comparison result of the
    /// same class width as `a` and `b` (a mask, or a flag in scalar code).
    pub fn select(&mut self, cond: Val, a: Val, b: Val, c: Class) -> Val {
        match self.w {
            Width::Scalar => Val::one(self.b.ins().select(cond.part(0), a.part(0), b.part(0))),
            Width::Vector => {
                let mask = self.bits(cond, c);
                let mut out = a;
                for i in 0..a.n {
                    out.parts[i] = self
                        .b
                        .ins()
                        .bitselect(mask.parts[i], a.parts[i], b.parts[i]);
                }
                out
            }
        }
    }

    /// A comparison result as a bool value (0/1 in the i32 class).
    pub fn mask_to_bool(&mut self, cond: Val) -> Val {
        match self.w {
            Width::Scalar => Val::one(self.b.ins().uextend(types::I32, cond.part(0))),
            Width::Vector => {
                let m = if cond.n == 2 {
                    let lo = self.bits(Val::one(cond.part(0)), Class::I64).part(0);
                    let hi = self.bits(Val::one(cond.part(1)), Class::I64).part(0);
                    self.narrow_pair(lo, hi)
                } else {
                    self.bits(cond, Class::I32).part(0)
                };
                let one = self.iconst(Class::I32, 1).part(0);
                Val::one(self.b.ins().band(m, one))
            }
        }
    }

    /// A bool value (0/1) as a comparison result for class `c`.
    pub fn bool_to_mask(&mut self, x: Val, c: Class) -> Val {
        match self.w {
            Width::Scalar => Val::one(self.b.ins().icmp_imm_s(
                cranelift_codegen::ir::condcodes::IntCC::NotEqual,
                x.part(0),
                0,
            )),
            Width::Vector => {
                let zero = self.iconst(Class::I32, 0).part(0);
                let m = self.b.ins().icmp(
                    cranelift_codegen::ir::condcodes::IntCC::NotEqual,
                    x.part(0),
                    zero,
                );
                if c.is_wide() {
                    let lo = self.b.ins().swiden_low(m);
                    let hi = self.b.ins().swiden_high(m);
                    Val::two(lo, hi)
                } else {
                    Val::one(m)
                }
            }
        }
    }

    /// Lanes 0 and 2 (as i32) of two i64x2 registers, in one i32x4.
    pub fn narrow_pair(&mut self, lo: Value, hi: Value) -> Value {
        let s = self.pick_32(lo, hi, [0, 2, 4, 6]);
        self.b.ins().bitcast(types::I32X4, little(), s)
    }

    /// An i32-class value widened to the i64 class (sign- or zero-extended).
    pub fn widen_int(&mut self, x: Val, signed: bool) -> Val {
        match self.w {
            Width::Scalar => Val::one(if signed {
                self.b.ins().sextend(types::I64, x.part(0))
            } else {
                self.b.ins().uextend(types::I64, x.part(0))
            }),
            Width::Vector => {
                let v = x.part(0);
                if signed {
                    Val::two(self.b.ins().swiden_low(v), self.b.ins().swiden_high(v))
                } else {
                    Val::two(self.b.ins().uwiden_low(v), self.b.ins().uwiden_high(v))
                }
            }
        }
    }

    /// An i64-class value truncated to the i32 class (low 32 bits).
    pub fn truncate_int(&mut self, x: Val) -> Val {
        match self.w {
            Width::Scalar => Val::one(self.b.ins().ireduce(types::I32, x.part(0))),
            Width::Vector => Val::one(self.narrow_pair(x.part(0), x.part(1))),
        }
    }

    /// f32 lanes widened to f64.
    pub fn promote(&mut self, x: Val) -> Val {
        match self.w {
            Width::Scalar => Val::one(self.b.ins().fpromote(types::F64, x.part(0))),
            Width::Vector => {
                let v = x.part(0);
                let lo = self.b.ins().fvpromote_low(v);
                // Move lanes 2-3 down, then promote them.
                let high = self.pick_32(v, v, [2, 3, 0, 1]);
                let hi = self.b.ins().fvpromote_low(high);
                Val::two(lo, hi)
            }
        }
    }

    /// f64 lanes rounded to f32.
    pub fn demote(&mut self, x: Val) -> Val {
        match self.w {
            Width::Scalar => Val::one(self.b.ins().fdemote(types::F32, x.part(0))),
            Width::Vector => {
                let lo = self.b.ins().fvdemote(x.part(0));
                let hi = self.b.ins().fvdemote(x.part(1));
                // Lanes 0-1 of each.
                Val::one(self.pick_32(lo, hi, [0, 1, 4, 5]))
            }
        }
    }

    /// Wraps an integer in its class to the range of `d` (two's complement,
    /// as C++ narrowing does).
    pub fn wrap(&mut self, x: Val, d: DType) -> Val {
        let bits = d.bits() as i64;
        if d.is_bool() || Class::of(d).is_wide() || bits >= 32 {
            return x;
        }
        if d.is_signed() {
            let shift = 32 - bits;
            self.map(x, |b, v| {
                let up = b.ins().ishl_imm_u(v, shift);
                b.ins().sshr_imm_u(up, shift)
            })
        } else {
            let mask = self.iconst(Class::I32, (1i64 << bits) - 1);
            self.zip(x, mask, |b, v, m| b.ins().band(v, m))
        }
    }

    // ---- f16 and bf16 ----

    /// f16 bits (zero-extended in i32 lanes) to f32 values. The magic-number
    /// method of the fp16 library: exact for every f16, branch-free.
    pub fn f16_to_f32(&mut self, h: Val) -> Val {
        let w = self.map(h, |b, v| b.ins().ishl_imm_u(v, 16));
        let sign_mask = self.iconst(Class::I32, 0x8000_0000u32 as i64);
        let sign = self.zip(w, sign_mask, |b, v, m| b.ins().band(v, m));
        let two_w = self.zip(w, w, |b, v, u| b.ins().iadd(v, u));
        // Normal numbers (and inf/nan): shift into place, rebias by scaling.
        let exp_offset = self.iconst(Class::I32, 0xE0 << 23);
        let shifted = self.map(two_w, |b, v| b.ins().ushr_imm_u(v, 4));
        let biased = self.zip(shifted, exp_offset, |b, v, o| b.ins().iadd(v, o));
        let as_f = self.bits(biased, Class::F32);
        let scale = self.fconst(Class::F32, f32::from_bits(0x0780_0000) as f64); // 2^-112
        let normal = self.zip(as_f, scale, |b, v, s| b.ins().fmul(v, s));
        // Subnormals: the mantissa over a magic 0.5, minus 0.5.
        let magic = self.iconst(Class::I32, 126 << 23);
        let m = self.map(two_w, |b, v| b.ins().ushr_imm_u(v, 17));
        let m = self.zip(m, magic, |b, v, k| b.ins().bor(v, k));
        let m = self.bits(m, Class::F32);
        let half = self.fconst(Class::F32, 0.5);
        let denormal = self.zip(m, half, |b, v, h| b.ins().fsub(v, h));
        let cutoff = self.iconst(Class::I32, 1 << 27);
        let is_small = self.zip(two_w, cutoff, |b, v, c| {
            b.ins().icmp(
                cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThan,
                v,
                c,
            )
        });
        let normal_bits = self.bits(normal, Class::I32);
        let denormal_bits = self.bits(denormal, Class::I32);
        let chosen = self.select(is_small, denormal_bits, normal_bits, Class::I32);
        let with_sign = self.zip(chosen, sign, |b, v, s| b.ins().bor(v, s));
        self.bits(with_sign, Class::F32)
    }

    /// f32 values to f16 bits (in i32 lanes), rounding to nearest even
    /// (fp16's branch-free method; overflow gives inf, NaN a quiet NaN).
    pub fn f32_to_f16(&mut self, x: Val) -> Val {
        let to_inf = self.fconst(Class::F32, f32::from_bits(0x7780_0000) as f64); // 2^112
        let to_zero = self.fconst(Class::F32, f32::from_bits(0x0880_0000) as f64); // 2^-110
        let abs = self.map(x, |b, v| b.ins().fabs(v));
        let base = self.zip(abs, to_inf, |b, v, s| b.ins().fmul(v, s));
        let base = self.zip(base, to_zero, |b, v, s| b.ins().fmul(v, s));
        let w = self.bits(x, Class::I32);
        let shl1 = self.zip(w, w, |b, v, u| b.ins().iadd(v, u));
        let sign_mask = self.iconst(Class::I32, 0x8000_0000u32 as i64);
        let sign = self.zip(w, sign_mask, |b, v, m| b.ins().band(v, m));
        let exp_mask = self.iconst(Class::I32, 0xFF00_0000u32 as i64);
        let bias = self.zip(shl1, exp_mask, |b, v, m| b.ins().band(v, m));
        let min_bias = self.iconst(Class::I32, 0x7100_0000);
        let bias = self.zip(bias, min_bias, |b, v, m| b.ins().umax(v, m));
        let shifted = self.map(bias, |b, v| b.ins().ushr_imm_u(v, 1));
        let add = self.iconst(Class::I32, 0x0780_0000);
        let shifted = self.zip(shifted, add, |b, v, a| b.ins().iadd(v, a));
        let bias_f = self.bits(shifted, Class::F32);
        let sum = self.zip(bias_f, base, |b, v, u| b.ins().fadd(v, u));
        let bits = self.bits(sum, Class::I32);
        let exp_bits = self.map(bits, |b, v| b.ins().ushr_imm_u(v, 13));
        let e_mask = self.iconst(Class::I32, 0x7C00);
        let exp_bits = self.zip(exp_bits, e_mask, |b, v, m| b.ins().band(v, m));
        let m_mask = self.iconst(Class::I32, 0x0FFF);
        let mantissa = self.zip(bits, m_mask, |b, v, m| b.ins().band(v, m));
        let nonsign = self.zip(exp_bits, mantissa, |b, v, m| b.ins().iadd(v, m));
        let nan_limit = self.iconst(Class::I32, 0xFF00_0000u32 as i64);
        let is_nan = self.zip(shl1, nan_limit, |b, v, l| {
            b.ins().icmp(
                cranelift_codegen::ir::condcodes::IntCC::UnsignedGreaterThan,
                v,
                l,
            )
        });
        let quiet = self.iconst(Class::I32, 0x7E00);
        let body = self.select(is_nan, quiet, nonsign, Class::I32);
        let sign16 = self.map(sign, |b, v| b.ins().ushr_imm_u(v, 16));
        self.zip(body, sign16, |b, v, s| b.ins().bor(v, s))
    }

    /// bf16 bits (zero-extended) to f32 values.
    pub fn bf16_to_f32(&mut self, h: Val) -> Val {
        let w = self.map(h, |b, v| b.ins().ishl_imm_u(v, 16));
        self.bits(w, Class::F32)
    }

    /// f32 values to bf16 bits, rounding to nearest even (NaN: 0x7FC0).
    pub fn f32_to_bf16(&mut self, x: Val) -> Val {
        let u = self.bits(x, Class::I32);
        let lsb = self.map(u, |b, v| b.ins().ushr_imm_u(v, 16));
        let one = self.iconst(Class::I32, 1);
        let lsb = self.zip(lsb, one, |b, v, o| b.ins().band(v, o));
        let round = self.iconst(Class::I32, 0x7FFF);
        let r = self.zip(u, round, |b, v, k| b.ins().iadd(v, k));
        let r = self.zip(r, lsb, |b, v, l| b.ins().iadd(v, l));
        let r = self.map(r, |b, v| b.ins().ushr_imm_u(v, 16));
        let is_nan = self.zip(x, x, |b, v, u| {
            b.ins()
                .fcmp(cranelift_codegen::ir::condcodes::FloatCC::Unordered, v, u)
        });
        let nan = self.iconst(Class::I32, 0x7FC0);
        self.select(is_nan, nan, r, Class::I32)
    }

    /// Rounds f32-class values to the precision of `d` (f16 or bf16), as
    /// storing and reloading would.
    pub fn round_to(&mut self, x: Val, d: DType) -> Val {
        match d {
            DType::F16 => {
                let h = self.f32_to_f16(x);
                self.f16_to_f32(h)
            }
            DType::BF16 => {
                let h = self.f32_to_bf16(x);
                self.bf16_to_f32(h)
            }
            _ => x,
        }
    }

    // ---- memory ----

    fn load_scalar(&mut self, d: DType, addr: Value) -> Value {
        let f = flags();
        let ins = self.b.ins();
        match d {
            DType::Bool | DType::U8 => ins.uload8(types::I32, f, addr, 0),
            DType::I8 => ins.sload8(types::I32, f, addr, 0),
            DType::I16 => ins.sload16(types::I32, f, addr, 0),
            DType::U16 | DType::F16 | DType::BF16 => ins.uload16(types::I32, f, addr, 0),
            other => ins.load(Class::of(other).ty(Width::Scalar), f, addr, 0),
        }
    }

    /// Raw lanes as stored (f16/bf16 as bits) into register form.
    fn from_storage(&mut self, d: DType, raw: Val) -> Val {
        match d {
            DType::F16 => self.f16_to_f32(raw),
            DType::BF16 => self.bf16_to_f32(raw),
            DType::Bool => {
                // Any nonzero byte is true.
                let zero = self.iconst(Class::I32, 0);
                let ne = self.zip(raw, zero, |b, v, z| {
                    b.ins()
                        .icmp(cranelift_codegen::ir::condcodes::IntCC::NotEqual, v, z)
                });
                self.mask_to_bool(ne)
            }
            _ => raw,
        }
    }

    /// Loads the element(s) of dtype `d` at `addr` (the first lane's address).
    pub fn load(&mut self, d: DType, addr: Value, stride: Stride) -> Val {
        // Stored f16/bf16 lanes are bits until decoded.
        let c = stored_class(d);
        if self.w == Width::Scalar {
            let raw = Val::one(self.load_scalar(d, addr));
            return self.from_storage(d, raw);
        }
        let raw = match stride {
            Stride::Zero => {
                let v = self.load_scalar(d, addr);
                self.splat(c, v)
            }
            Stride::One => self.load_contiguous(d, addr),
            Stride::Bytes(step) => {
                let mut lanes = Vec::with_capacity(4);
                for i in 0..LANES {
                    let a = self.b.ins().iadd_imm_s(addr, i * step);
                    lanes.push(self.load_scalar(d, a));
                }
                self.gather(c, &lanes)
            }
        };
        self.from_storage(d, raw)
    }

    /// A vector of class `c` from four scalars.
    /// Lanes `first + lane·step` (lane 0..4) of integer class `c`, from a
    /// scalar `first` of that class: a splat plus a constant vector.
    pub fn ramp(&mut self, c: Class, first: Value, step: i64) -> Val {
        let ty = c.ty(Width::Vector);
        let lane = |i: i64| -> Vec<u8> {
            match c {
                Class::I64 => (i * step).to_le_bytes().to_vec(),
                _ => ((i * step) as i32).to_le_bytes().to_vec(),
            }
        };
        let mut consts = Vec::new();
        let per_part = if c.is_wide() { 2 } else { 4 };
        for p in 0..(LANES as usize / per_part) {
            let bytes: Vec<u8> = (0..per_part as i64)
                .flat_map(|i| lane(p as i64 * per_part as i64 + i))
                .collect();
            let handle = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
            consts.push(self.b.ins().vconst(ty, handle));
        }
        let base = self.b.ins().splat(ty, first);
        if c.is_wide() {
            Val::two(
                self.b.ins().iadd(base, consts[0]),
                self.b.ins().iadd(base, consts[1]),
            )
        } else {
            Val::one(self.b.ins().iadd(base, consts[0]))
        }
    }

    pub fn gather(&mut self, c: Class, lanes: &[Value]) -> Val {
        let ty = c.ty(Width::Vector);
        if c.is_wide() {
            let mut parts = [lanes[0]; 2];
            for (p, part) in parts.iter_mut().enumerate() {
                let v = self.b.ins().splat(ty, lanes[2 * p]);
                *part = self.b.ins().insertlane(v, lanes[2 * p + 1], 1);
            }
            Val::two(parts[0], parts[1])
        } else {
            let mut v = self.b.ins().splat(ty, lanes[0]);
            for (i, &l) in lanes.iter().enumerate().skip(1) {
                v = self.b.ins().insertlane(v, l, i as u8);
            }
            Val::one(v)
        }
    }

    /// Four vectors of dtype `d` whose lane `k` comes from `addrs[k]`: the
    /// contiguous vectors there transposed, so result `r` holds element
    /// `r` of every address (a 4x4 transpose in registers).
    pub fn load_transposed(&mut self, d: DType, addrs: [Value; 4]) -> [Val; 4] {
        let raw = addrs.map(|a| self.load_contiguous(d, a));
        let rows = self.transpose4(stored_class(d), raw);
        rows.map(|r| self.from_storage(d, r))
    }

    /// The 4x4 transpose of four vectors of class `c`: lane `k` of result
    /// `r` is lane `r` of `rows[k]`. Interleaves of 32-bit, then 64-bit
    /// halves (unpcklps/unpckhps, then unpcklpd/unpckhpd on x64); a 64-bit
    /// class's rows are two registers, whose halves interleave once.
    pub fn transpose4(&mut self, c: Class, rows: [Val; 4]) -> [Val; 4] {
        const LOW_32: [u8; 4] = [0, 4, 1, 5];
        const HIGH_32: [u8; 4] = [2, 6, 3, 7];
        const LOW_64: [u8; 4] = [0, 1, 4, 5];
        const HIGH_64: [u8; 4] = [2, 3, 6, 7];
        if c.is_wide() {
            let mut out = rows;
            for (r, o) in out.iter_mut().enumerate() {
                let (part, pick) = (r / 2, if r % 2 == 0 { LOW_64 } else { HIGH_64 });
                let lo = self.pick_32(rows[0].part(part), rows[1].part(part), pick);
                let hi = self.pick_32(rows[2].part(part), rows[3].part(part), pick);
                *o = Val::two(lo, hi);
            }
            return out;
        }
        let [a, b, x, y] = rows.map(|v| v.part(0));
        let (ab_lo, ab_hi) = (self.pick_32(a, b, LOW_32), self.pick_32(a, b, HIGH_32));
        let (xy_lo, xy_hi) = (self.pick_32(x, y, LOW_32), self.pick_32(x, y, HIGH_32));
        [
            self.pick_32(ab_lo, xy_lo, LOW_64),
            self.pick_32(ab_lo, xy_lo, HIGH_64),
            self.pick_32(ab_hi, xy_hi, LOW_64),
            self.pick_32(ab_hi, xy_hi, HIGH_64),
        ]
        .map(Val::one)
    }

    /// The 32-bit lanes `lanes` of `a` (0-3) and `b` (4-7), in `a`'s type:
    /// every lane shuffle of this file.
    fn pick_32(&mut self, a: Value, b: Value, lanes: [u8; 4]) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let x = self.b.ins().bitcast(types::I8X16, little(), a);
        let y = self.b.ins().bitcast(types::I8X16, little(), b);
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = lanes[i / 4] * 4 + (i % 4) as u8;
        }
        let imm = self
            .b
            .func
            .dfg
            .immediates
            .push(ConstantData::from(&mask[..]));
        let s = self.b.ins().shuffle(x, y, imm);
        self.b.ins().bitcast(ty, little(), s)
    }

    fn load_contiguous(&mut self, d: DType, addr: Value) -> Val {
        let f = flags();
        match d.itemsize() {
            8 => {
                let ty = Class::of(d).ty(Width::Vector);
                let lo = self.b.ins().load(ty, f, addr, 0);
                let hi = self.b.ins().load(ty, f, addr, 16);
                Val::two(lo, hi)
            }
            4 => Val::one(
                self.b
                    .ins()
                    .load(Class::of(d).ty(Width::Vector), f, addr, 0),
            ),
            2 => {
                let s = self.b.ins().load(types::I64, f, addr, 0);
                let v = self.b.ins().scalar_to_vector(types::I64X2, s);
                let h = self.b.ins().bitcast(types::I16X8, little(), v);
                Val::one(if d == DType::I16 {
                    self.b.ins().swiden_low(h)
                } else {
                    self.b.ins().uwiden_low(h)
                })
            }
            _ => {
                let s = self.b.ins().load(types::I32, f, addr, 0);
                let v = self.b.ins().scalar_to_vector(types::I32X4, s);
                let bytes = self.b.ins().bitcast(types::I8X16, little(), v);
                Val::one(if d == DType::I8 {
                    let h = self.b.ins().swiden_low(bytes);
                    self.b.ins().swiden_low(h)
                } else {
                    let h = self.b.ins().uwiden_low(bytes);
                    self.b.ins().uwiden_low(h)
                })
            }
        }
    }

    /// Register form to stored form (f16/bf16 bits; other dtypes as they are).
    fn to_storage(&mut self, d: DType, x: Val) -> Val {
        match d {
            DType::F16 => self.f32_to_f16(x),
            DType::BF16 => self.f32_to_bf16(x),
            _ => x,
        }
    }

    fn store_scalar(&mut self, d: DType, v: Value, addr: Value) {
        let f = flags();
        let ins = self.b.ins();
        match d.itemsize() {
            1 => ins.istore8(f, v, addr, 0),
            2 => ins.istore16(f, v, addr, 0),
            _ => ins.store(f, v, addr, 0),
        };
    }

    /// Stores value(s) of dtype `d` (already rounded to it) at `addr`.
    pub fn store(&mut self, d: DType, x: Val, addr: Value, stride: Stride) {
        let raw = self.to_storage(d, x);
        if self.w == Width::Scalar {
            self.store_scalar(d, raw.part(0), addr);
            return;
        }
        match stride {
            Stride::One => self.store_contiguous(d, raw, addr),
            Stride::Zero | Stride::Bytes(_) => {
                // A zero stride along the loop only happens for size-1
                // dims, which are dropped; store lane by lane anyway.
                let step = match stride {
                    Stride::Bytes(s) => s,
                    _ => 0,
                };
                for i in 0..LANES {
                    let lane = self.lane(stored_class(d), raw, i);
                    let a = self.b.ins().iadd_imm_s(addr, i * step);
                    self.store_scalar(d, lane, a);
                }
            }
        }
    }

    /// Lane `i` of a vector value, as a scalar.
    pub fn lane(&mut self, c: Class, x: Val, i: i64) -> Value {
        if c.is_wide() {
            self.b
                .ins()
                .extractlane(x.part((i / 2) as usize), (i % 2) as u8)
        } else {
            self.b.ins().extractlane(x.part(0), i as u8)
        }
    }

    fn store_contiguous(&mut self, d: DType, raw: Val, addr: Value) {
        let f = flags();
        match d.itemsize() {
            8 => {
                self.b.ins().store(f, raw.part(0), addr, 0);
                self.b.ins().store(f, raw.part(1), addr, 16);
            }
            4 => {
                self.b.ins().store(f, raw.part(0), addr, 0);
            }
            2 => {
                let v = raw.part(0);
                // The values fit 16 bits: narrowing does not saturate.
                let h = if d == DType::I16 {
                    self.b.ins().snarrow(v, v)
                } else {
                    self.b.ins().unarrow(v, v)
                };
                let q = self.b.ins().bitcast(types::I64X2, little(), h);
                let s = self.b.ins().extractlane(q, 0);
                self.b.ins().store(f, s, addr, 0);
            }
            _ => {
                let v = raw.part(0);
                let bytes = if d == DType::I8 {
                    let h = self.b.ins().snarrow(v, v);
                    self.b.ins().snarrow(h, h)
                } else {
                    let h = self.b.ins().unarrow(v, v);
                    self.b.ins().unarrow(h, h)
                };
                let q = self.b.ins().bitcast(types::I32X4, little(), bytes);
                let s = self.b.ins().extractlane(q, 0);
                self.b.ins().store(f, s, addr, 0);
            }
        }
    }
}
