//! Constant folding for the optimizer, with the reference interpreter's own
//! arithmetic: the op runs on the interpreter over one-element tensors of
//! the operands' dtypes and ranks (rank decides how an operand takes part
//! in type promotion; a splat's every element is the same).

use kiln_ir::graph::{FuncBuilder, Operand};
use kiln_ir::infer::InferCtx;
use kiln_ir::{DefaultDType, Module, Op, Scalar, TensorType};
use kiln_passes::optimize::{ConstantFolder, FoldArg};

use crate::convert::{Elem, convert};
use crate::tensor::Tensor;

/// Folds with the interpreter.
pub struct InterpreterFold {
    /// The default dtype of the module being optimized: the one-op
    /// functions the folder runs are typed under it, as the module is.
    pub default_dtype: DefaultDType,
}

impl ConstantFolder for InterpreterFold {
    fn fold(&self, op: &Op, args: &[FoldArg], result: &TensorType) -> Option<Scalar> {
        let ctx = InferCtx {
            default_dtype: self.default_dtype,
        };
        let mut b = FuncBuilder::new("fold", ctx);
        let mut operands = Vec::with_capacity(args.len());
        let mut inputs = Vec::new();
        for a in args {
            match *a {
                FoldArg::Literal(s) => operands.push(Operand::Scalar(s)),
                FoldArg::Splat(s, dtype, rank) => {
                    let shape = vec![1; rank];
                    let p = b.param(None, TensorType::new(shape.clone(), dtype)).ok()?;
                    operands.push(Operand::Value(p));
                    let v = convert(Elem::from_scalar(s), dtype);
                    inputs.push(Tensor::from_values([v], &shape, dtype).ok()?);
                }
            }
        }
        let r = b.push(op.clone(), operands, None).ok()?;
        if b.ty(r).dtype != result.dtype {
            return None;
        }
        let func = b.finish(vec![r], None).ok()?;
        let module = Module::single(func, self.default_dtype);
        let out = crate::interp::run(&module, &inputs).ok()?;
        out.first()?.values().first().map(|v| v.to_scalar())
    }
}
