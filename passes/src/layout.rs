//! The layout pass: gives every value explicit strides by PyTorch's rules,
//! keeps views as views, and checks the layouts a program claims.
//!
//! The rules themselves live in `kiln_ir::layout` and `kiln_ir::view`; this
//! module decides which rule applies to which op ([`result_layout`]), which
//! the interpreter also asks at run time with real storage offsets.

use kiln_ir::layout::{
    IterOperand, cat_memory_format, contiguous_strides, pointwise_output_strides,
    reduction_output_strides,
};
use kiln_ir::view::{Geometry, Reshaped};
use kiln_ir::{
    Error, ErrorKind, MemoryFormat, Module, Op, Operand, Result, TensorType, TypeLayout,
};

use crate::manager::Pass;

/// How an op's result is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultLayout {
    /// A view of the first operand's storage.
    View(Geometry),
    /// A fresh buffer with these strides.
    Fresh(Vec<i64>),
}

impl ResultLayout {
    pub fn strides(&self) -> &[i64] {
        match self {
            ResultLayout::View(g) => &g.strides,
            ResultLayout::Fresh(s) => s,
        }
    }
}

/// One operand as the layout rules see it: a tensor's geometry and type, or
/// a scalar literal (a zero-dim CPU tensor to TensorIterator).
#[derive(Clone, Copy, Debug)]
pub enum LayoutArg<'a> {
    Tensor(&'a Geometry, &'a TensorType),
    Scalar,
}

fn geometry_of<'a>(args: &[LayoutArg<'a>]) -> &'a Geometry {
    match args.first() {
        Some(LayoutArg::Tensor(g, _)) => g,
        _ => unreachable!("ops with a layout rule take a tensor first"),
    }
}

fn from_reshaped(r: Reshaped) -> ResultLayout {
    match r {
        Reshaped::View(g) => ResultLayout::View(g),
        Reshaped::Copy(g) => ResultLayout::Fresh(g.strides),
    }
}

/// The layout of `op`'s result, of type `result`, over operands `args`.
pub fn result_layout(op: &Op, args: &[LayoutArg<'_>], result: &TensorType) -> Result<ResultLayout> {
    let shape = &result.shape;
    Ok(match op {
        // `cast` is `Tensor.to(dtype)`: a preserve_format copy, which keeps
        // a dense operand's strides exactly (TensorIterator would not for
        // size-1 dims), so an inserted cast never changes its consumer's
        // layout.
        Op::Cast { .. } => {
            ResultLayout::Fresh(geometry_of(args).clone_as(MemoryFormat::Preserve)?.strides)
        }
        Op::Unary(_) | Op::Binary(_) | Op::Where | Op::Clamp { .. } => {
            let scalar = Geometry::contiguous(&[]);
            let operands: Vec<IterOperand> = args
                .iter()
                .map(|a| match a {
                    LayoutArg::Tensor(g, ty) => IterOperand {
                        shape: &g.shape,
                        strides: &g.strides,
                        itemsize: ty.dtype.itemsize(),
                    },
                    // Python numbers are wrapped as 8-byte zero-dim tensors.
                    LayoutArg::Scalar => IterOperand {
                        shape: &scalar.shape,
                        strides: &scalar.strides,
                        itemsize: 8,
                    },
                })
                .collect();
            ResultLayout::Fresh(pointwise_output_strides(shape, &operands))
        }
        Op::Reduce { .. }
        | Op::ArgReduce { .. }
        | Op::Softmax { .. }
        | Op::LayerNorm { .. }
        | Op::Matmul => ResultLayout::Fresh(reduction_output_strides(shape)),
        Op::Full { .. } | Op::Arange { .. } => ResultLayout::Fresh(contiguous_strides(shape)),
        Op::Cat { .. } => {
            let format = cat_memory_format(args.iter().filter_map(|a| match a {
                LayoutArg::Tensor(g, _) => Some((&g.shape[..], &g.strides[..])),
                LayoutArg::Scalar => None,
            }));
            ResultLayout::Fresh(format.strides(shape)?)
        }
        Op::Contiguous { memory_format } => {
            from_reshaped(geometry_of(args).contiguous_in(*memory_format)?)
        }
        Op::Clone {
            strides: Some(strides),
            ..
        } => ResultLayout::Fresh(strides.clone()),
        Op::Clone { memory_format, .. } => {
            ResultLayout::Fresh(geometry_of(args).clone_as(*memory_format)?.strides)
        }
        Op::To {
            dtype,
            device,
            memory_format,
            copy,
        } => {
            let (g, ty) = match args[0] {
                LayoutArg::Tensor(g, ty) => (g, ty),
                LayoutArg::Scalar => unreachable!("to takes a tensor"),
            };
            let changes = dtype.is_some_and(|d| d != ty.dtype)
                || device.is_some_and(|d| d.for_tensor() != ty.device);
            from_reshaped(g.to_layout(*memory_format, changes, *copy)?)
        }
        view => {
            let g = geometry_of(args);
            match view {
                Op::Reshape { shape: s } => from_reshaped(g.reshape(s)?),
                Op::Flatten { start_dim, end_dim } => {
                    from_reshaped(g.flatten(*start_dim, *end_dim)?)
                }
                Op::View { shape: s } => ResultLayout::View(g.view(s)?),
                Op::Permute { dims } => ResultLayout::View(g.permute(dims)?),
                Op::Transpose { dim0, dim1 } => ResultLayout::View(g.transpose(*dim0, *dim1)?),
                Op::T => ResultLayout::View(g.t()?),
                Op::Expand { shape: s } => ResultLayout::View(g.expand(s)?),
                Op::Squeeze { dims } => ResultLayout::View(g.squeeze(dims.as_deref())?),
                Op::Unsqueeze { dim } => ResultLayout::View(g.unsqueeze(*dim)?),
                Op::Slice {
                    dim,
                    start,
                    end,
                    step,
                } => ResultLayout::View(g.slice(*dim, *start, *end, *step)?),
                Op::Select { dim, index } => ResultLayout::View(g.select(*dim, *index)?),
                other => unreachable!("{} has a layout rule above", other.name()),
            }
        }
    })
}

/// On the CPU, TensorIterator converts an operand whose dtype differs from
/// the computation dtype with `.to(dtype)` (a preserve_format copy) before
/// it lays out the result, so the result's layout is computed from the
/// converted operand: what the promotion pass makes explicit. This gives the
/// same layout whether or not promotion has run.
fn promoted_operands(
    func: &kiln_ir::graph::Func,
    inst: &kiln_ir::graph::Inst,
    geometries: &[Option<Geometry>],
    ctx: &kiln_ir::infer::InferCtx,
) -> Result<Vec<Option<(Geometry, TensorType)>>> {
    let mut out = vec![None; inst.operands.len()];
    if !matches!(
        inst.op,
        Op::Unary(_) | Op::Binary(_) | Op::Where | Op::Clamp { .. }
    ) {
        return Ok(out);
    }
    let inferred = func.infer_inst(inst, ctx)?;
    for (i, o) in inst.operands.iter().enumerate() {
        let (Operand::Value(v), Some(d)) = (o, inferred.operand_dtypes.get(i).copied().flatten())
        else {
            continue;
        };
        let ty = func.ty(*v);
        if d == ty.dtype || !ty.device.is_cpu() {
            continue;
        }
        if let Some(g) = &geometries[v.index()] {
            let strides = g.clone_as(MemoryFormat::Preserve)?.strides;
            out[i] = Some((
                Geometry::new(g.shape.clone(), strides, 0),
                ty.clone().with_dtype(d),
            ));
        }
    }
    Ok(out)
}

/// Gives every value of every function explicit strides.
pub struct LayoutPass;

impl Pass for LayoutPass {
    fn name(&self) -> &'static str {
        "layout"
    }

    fn run(&self, module: &mut Module) -> Result<()> {
        let ctx = module.ctx();
        for func in &mut module.funcs {
            // Geometries (with storage offsets) of every value: parameters
            // start at offset 0 in their own storage.
            let mut geometries: Vec<Option<Geometry>> = vec![None; func.values.len()];
            for &p in &func.params {
                let ty = func.ty(p);
                if let TypeLayout::Strided(s) = &ty.layout {
                    geometries[p.index()] = Some(Geometry::new(ty.shape.clone(), s.clone(), 0));
                }
            }
            for k in 0..func.insts.len() {
                let inst = &func.insts[k];
                let result_ty = func.ty(inst.result).clone();
                let promoted = promoted_operands(func, inst, &geometries, &ctx)?;
                let mut args = Vec::with_capacity(inst.operands.len());
                for (i, o) in inst.operands.iter().enumerate() {
                    match o {
                        Operand::Value(_) if promoted[i].is_some() => {
                            let (g, ty) = promoted[i].as_ref().expect("checked");
                            args.push(LayoutArg::Tensor(g, ty));
                        }
                        Operand::Value(v) => match &geometries[v.index()] {
                            Some(g) => args.push(LayoutArg::Tensor(g, func.ty(*v))),
                            None => {
                                return Err(Error::new(
                                    ErrorKind::Layout,
                                    format!(
                                        "%{} has no strided layout (sparse tensors are not supported by {})",
                                        func.name_of(*v),
                                        inst.op.name()
                                    ),
                                ));
                            }
                        },
                        Operand::Scalar(_) => args.push(LayoutArg::Scalar),
                    }
                }
                let located = |e: Error| match &inst.location {
                    Some(l) => e.at(l.clone()),
                    None => e,
                };
                let layout = result_layout(&inst.op, &args, &result_ty).map_err(located)?;
                let strides = layout.strides().to_vec();
                if let TypeLayout::Strided(claimed) = &result_ty.layout {
                    if *claimed != strides {
                        let actual = result_ty.clone().with_layout(TypeLayout::Strided(strides));
                        return Err(located(Error::new(
                            ErrorKind::Layout,
                            format!(
                                "the program claims %{}: {}, but PyTorch's layout rules give {actual}",
                                func.name_of(inst.result),
                                result_ty
                            ),
                        )));
                    }
                }
                let geometry = match layout {
                    ResultLayout::View(g) => g,
                    ResultLayout::Fresh(s) => Geometry::new(result_ty.shape.clone(), s, 0),
                };
                let result = inst.result;
                func.set_layout(result, TypeLayout::Strided(geometry.strides.clone()));
                geometries[result.index()] = Some(geometry);
            }
            // Declared results without a layout claim the returned value's.
            let returned: Vec<TypeLayout> = func
                .returns
                .iter()
                .map(|v| func.ty(*v).layout.clone())
                .collect();
            for (declared, layout) in func.result_types.iter_mut().zip(returned) {
                if declared.layout == TypeLayout::Unspecified {
                    declared.layout = layout;
                }
            }
        }
        Ok(())
    }
}
