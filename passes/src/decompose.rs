//! The decomposition pass: lowers composite ops to primitives, computing in
//! the dtypes PyTorch's CPU kernels use.
//!
//! f16 and bf16 inputs are computed in f32 ("opmath") and rounded once at
//! the end, as PyTorch does for softmax, layer_norm, gelu, silu, sigmoid and
//! mean. The reference interpreter runs composite ops through these same
//! expansions, so the pass leaves results bit-identical; a composite whose
//! result layout differs from its expansion's gets an explicit `clone`.

use kiln_ir::graph::{FuncBuilder, Operand, ValueId};
use kiln_ir::{BinaryOp, Bound, DType, Module, Op, ReduceOp, Result, Scalar, UnaryOp};

use crate::manager::Pass;
use crate::rewrite::{Rewriter, is_laid_out, relayout, restore_layouts};

pub struct DecomposePass;

impl Pass for DecomposePass {
    fn name(&self) -> &'static str {
        "decompose"
    }

    fn run(&self, module: &mut Module) -> Result<()> {
        let ctx = module.ctx();
        let laid_out = is_laid_out(module);
        // Each expansion's value, with the strides its composite had.
        let mut wanted: Vec<Vec<(String, Vec<i64>)>> = Vec::new();
        for func in &mut module.funcs {
            let mut rw = Rewriter::new(func, ctx)?;
            let mut func_wanted = Vec::new();
            for inst in &func.insts {
                let operands = rw.operands(inst);
                let Some(mut v) = expand(&mut rw.b, &inst.op, &operands)? else {
                    rw.copy(inst)?;
                    continue;
                };
                if let Some(out) = inst.out_dtype {
                    v = rw.push_temp(inst, Op::Cast { dtype: out }, vec![Operand::Value(v)])?;
                }
                if let Some(strides) = func.ty(inst.result).strides() {
                    func_wanted.push((rw.b.func().name_of(v).to_string(), strides.to_vec()));
                }
                rw.set(inst.result, v);
            }
            *func = rw.finish()?;
            wanted.push(func_wanted);
        }
        relayout(module, laid_out)?;
        if laid_out {
            restore_layouts(module, &wanted)?;
        }
        Ok(())
    }
}

/// A small emitter over the builder.
struct E<'a> {
    b: &'a mut FuncBuilder,
}

impl E<'_> {
    fn op(&mut self, op: Op, operands: Vec<Operand>) -> Result<ValueId> {
        // Composite ops emitted by an expansion are expanded too.
        match expand(self.b, &op, &operands)? {
            Some(v) => Ok(v),
            None => self.b.push(op, operands, None),
        }
    }

    fn unary(&mut self, u: UnaryOp, x: ValueId) -> Result<ValueId> {
        self.op(Op::Unary(u), vec![Operand::Value(x)])
    }

    fn binary(
        &mut self,
        b: BinaryOp,
        x: impl Into<Operand>,
        y: impl Into<Operand>,
    ) -> Result<ValueId> {
        self.op(Op::Binary(b), vec![x.into(), y.into()])
    }

    fn cast(&mut self, x: ValueId, dtype: DType) -> Result<ValueId> {
        if self.b.ty(x).dtype == dtype {
            Ok(x)
        } else {
            self.op(Op::Cast { dtype }, vec![Operand::Value(x)])
        }
    }

    fn reduce(
        &mut self,
        op: ReduceOp,
        x: ValueId,
        dims: Vec<i64>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<ValueId> {
        self.op(
            Op::Reduce {
                op,
                dims: Some(dims),
                keepdim,
                dtype,
            },
            vec![Operand::Value(x)],
        )
    }
}

fn f(v: f64) -> Operand {
    Operand::Scalar(Scalar::Float(v))
}

/// Expands a composite op into primitives appended to `b`, returning the
/// value standing for its result; `None` for primitive ops (and composites
/// on dtypes that cannot compute, which stay as they are).
pub fn expand(b: &mut FuncBuilder, op: &Op, operands: &[Operand]) -> Result<Option<ValueId>> {
    let Some(&Operand::Value(x)) = operands.first() else {
        return Ok(None);
    };
    let x_ty = b.ty(x).clone();
    let mut e = E { b };
    let computable = |d: DType| d.is_floating_point() && !d.is_shell() || d.is_complex();
    Ok(Some(match op {
        Op::Softmax { dim, log, dtype } => {
            let d = dtype.unwrap_or(x_ty.dtype);
            if !(d.is_floating_point() && !d.is_shell()) || x_ty.numel() == 0 {
                return Ok(None);
            }
            let xd = e.cast(x, d)?;
            let xf = e.cast(xd, d.opmath())?;
            let m = e.reduce(ReduceOp::Amax, xf, vec![*dim], true, None)?;
            let shifted = e.binary(BinaryOp::Sub, xf, m)?;
            let ex = e.unary(UnaryOp::Exp, shifted)?;
            let s = e.reduce(ReduceOp::Sum, ex, vec![*dim], true, None)?;
            let y = if *log {
                let ls = e.unary(UnaryOp::Log, s)?;
                e.binary(BinaryOp::Sub, shifted, ls)?
            } else {
                e.binary(BinaryOp::Div, ex, s)?
            };
            e.cast(y, d)?
        }
        Op::LayerNorm {
            normalized_shape,
            eps,
            weight,
            bias,
        } => {
            let d = x_ty.dtype;
            if !(d.is_floating_point() && !d.is_shell()) {
                return Ok(None);
            }
            let acc = d.opmath();
            let xf = e.cast(x, acc)?;
            let n = normalized_shape.len() as i64;
            let dims: Vec<i64> = (-n..0).collect();
            let mean = e.reduce(ReduceOp::Mean, xf, dims.clone(), true, None)?;
            let centered = e.binary(BinaryOp::Sub, xf, mean)?;
            let sq = e.binary(BinaryOp::Mul, centered, centered)?;
            let var = e.reduce(ReduceOp::Mean, sq, dims, true, None)?;
            let var_eps = e.binary(BinaryOp::Add, var, f(*eps))?;
            let rstd = e.unary(UnaryOp::Rsqrt, var_eps)?;
            let mut y = e.binary(BinaryOp::Mul, centered, rstd)?;
            let mut params = operands[1..].iter();
            for (present, combine) in [(*weight, BinaryOp::Mul), (*bias, BinaryOp::Add)] {
                if present {
                    if let Some(&Operand::Value(p)) = params.next() {
                        let pf = e.cast(p, acc)?;
                        y = e.binary(combine, y, pf)?;
                    }
                }
            }
            e.cast(y, d)?
        }
        Op::Unary(u @ (UnaryOp::Gelu | UnaryOp::GeluTanh | UnaryOp::Silu | UnaryOp::Sigmoid)) => {
            let d = x_ty.dtype;
            if !computable(d) {
                return Ok(None);
            }
            let xf = e.cast(x, d.opmath())?;
            let y = match u {
                UnaryOp::Gelu => {
                    // 0.5·x·(1 + erf(x/√2)), in PyTorch's order.
                    let half = e.binary(BinaryOp::Mul, xf, f(0.5))?;
                    let scaled = e.binary(BinaryOp::Mul, xf, f(std::f64::consts::FRAC_1_SQRT_2))?;
                    let erf = e.unary(UnaryOp::Erf, scaled)?;
                    let one_plus = e.binary(BinaryOp::Add, erf, f(1.0))?;
                    e.binary(BinaryOp::Mul, half, one_plus)?
                }
                UnaryOp::GeluTanh => {
                    // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
                    let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
                    let x2 = e.binary(BinaryOp::Mul, xf, xf)?;
                    let x3 = e.binary(BinaryOp::Mul, x2, xf)?;
                    let kx3 = e.binary(BinaryOp::Mul, x3, f(0.044715))?;
                    let inner = e.binary(BinaryOp::Add, xf, kx3)?;
                    let scaled = e.binary(BinaryOp::Mul, inner, f(beta))?;
                    let t = e.unary(UnaryOp::Tanh, scaled)?;
                    let one_plus = e.binary(BinaryOp::Add, t, f(1.0))?;
                    let half = e.binary(BinaryOp::Mul, xf, f(0.5))?;
                    e.binary(BinaryOp::Mul, half, one_plus)?
                }
                UnaryOp::Silu => {
                    // x / (1 + exp(-x)).
                    let neg = e.unary(UnaryOp::Neg, xf)?;
                    let ex = e.unary(UnaryOp::Exp, neg)?;
                    let den = e.binary(BinaryOp::Add, ex, f(1.0))?;
                    e.binary(BinaryOp::Div, xf, den)?
                }
                _ => {
                    // 1 / (1 + exp(-x)).
                    let neg = e.unary(UnaryOp::Neg, xf)?;
                    let ex = e.unary(UnaryOp::Exp, neg)?;
                    let den = e.binary(BinaryOp::Add, ex, f(1.0))?;
                    e.unary(UnaryOp::Reciprocal, den)?
                }
            };
            e.cast(y, d)?
        }
        Op::Reduce {
            op: ReduceOp::Mean,
            dims,
            keepdim,
            dtype,
        } => {
            let d = dtype.unwrap_or(x_ty.dtype);
            if !computable(d) {
                return Ok(None);
            }
            // PyTorch's CPU mean: sum (f16/bf16 in f32), divide, round once.
            let acc = d.opmath();
            let xd = e.cast(x, d)?;
            let all: Vec<i64> = (0..x_ty.rank() as i64).collect();
            let dims = match dims {
                Some(ds) if !ds.is_empty() => ds.clone(),
                _ => all,
            };
            let count: i64 = if x_ty.rank() == 0 {
                1
            } else {
                dims.iter()
                    .map(|&dim| x_ty.shape[kiln_ir::view::wrap_dim(dim, x_ty.rank()).unwrap_or(0)])
                    .product()
            };
            let s = e.reduce(ReduceOp::Sum, xd, dims, *keepdim, Some(acc))?;
            let m = e.binary(BinaryOp::Div, s, Operand::Scalar(Scalar::Int(count)))?;
            e.cast(m, d)?
        }
        Op::Clamp { min, max } => {
            let d = x_ty.dtype;
            let mut y = x;
            let mut tensor_bounds = operands[1..].iter();
            for (bound, combine) in [(min, BinaryOp::Maximum), (max, BinaryOp::Minimum)] {
                let other = match bound {
                    Bound::None => continue,
                    // PyTorch converts a scalar bound to the tensor's dtype.
                    Bound::Scalar(s) => e.op(
                        Op::Full {
                            shape: vec![],
                            value: kiln_ir::infer::clamp_bound(*s, d),
                            dtype: Some(d),
                            device: Some(x_ty.device),
                        },
                        vec![],
                    )?,
                    Bound::Tensor => match tensor_bounds.next() {
                        Some(&Operand::Value(v)) => e.cast(v, d)?,
                        _ => return Ok(None),
                    },
                };
                y = e.binary(combine, y, other)?;
            }
            y
        }
        _ => return Ok(None),
    }))
}
