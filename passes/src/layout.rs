//! The layout pass: gives every value explicit strides by PyTorch's rules,
//! keeps views as views, and checks the layouts a program claims.
//!
//! The rules themselves live in `kiln_ir::layout` and `kiln_ir::view`, and
//! the op table says which rule each op follows
//! ([`kiln_ir::layout::result_layouts`]); this pass applies them to every
//! instruction in order, with the storage offsets views accumulate.

use kiln_ir::graph::{Func, Stage};
use kiln_ir::infer::InferCtx;
use kiln_ir::layout::{LayoutArg, instruction_layouts};
use kiln_ir::view::Geometry;
use kiln_ir::{Error, ErrorKind, Operand, Result, TypeLayout};

use crate::manager::{Pass, PassCx};

/// Gives every value of every function explicit strides.
pub struct LayoutPass;

impl Pass for LayoutPass {
    fn name(&self) -> &'static str {
        "layout"
    }

    fn produces(&self) -> Option<Stage> {
        Some(Stage::LaidOut)
    }

    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()> {
        lay_out(func, &cx.ctx)
    }
}

/// Gives every value of `func` its strides, checking the layouts the
/// program claims.
pub fn lay_out(func: &mut Func, ctx: &InferCtx) -> Result<()> {
    // Geometries (with storage offsets) of every value: parameters start
    // at offset 0 in their own storage.
    let mut geometries: Vec<Option<Geometry>> = vec![None; func.values.len()];
    for &p in &func.params {
        let ty = func.ty(p);
        if let TypeLayout::Strided(s) = &ty.layout {
            geometries[p.index()] = Some(Geometry::new(ty.shape.clone(), s.clone(), 0));
        }
    }
    for k in 0..func.insts.len() {
        let inst = &func.insts[k];
        let result_types = func.result_types_of(inst);
        let located = |e: Error| match &inst.location {
            Some(l) => e.at(l.clone()),
            None => e,
        };
        let inferred = func.infer_inst(inst, ctx)?;
        let mut args = Vec::with_capacity(inst.operands.len());
        for o in &inst.operands {
            match o {
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
                Operand::None => args.push(LayoutArg::None),
            }
        }
        let layouts = instruction_layouts(&inst.op, &args, &inferred.operand_dtypes, &result_types)
            .map_err(located)?;
        let mut laid = Vec::with_capacity(layouts.len());
        for ((layout, ty), &r) in layouts.into_iter().zip(&result_types).zip(&inst.results) {
            let strides = layout.strides().to_vec();
            if let TypeLayout::Strided(claimed) = &ty.layout {
                if *claimed != strides {
                    let actual = ty.clone().with_layout(TypeLayout::Strided(strides));
                    return Err(located(Error::new(
                        ErrorKind::Layout,
                        format!(
                            "the program claims %{}: {}, but PyTorch's layout rules give {actual}",
                            func.name_of(r),
                            ty
                        ),
                    )));
                }
            }
            let geometry = match layout {
                kiln_ir::layout::ResultLayout::View(g) => g,
                kiln_ir::layout::ResultLayout::Fresh(s) => Geometry::new(ty.shape.clone(), s, 0),
            };
            laid.push((r, geometry));
        }
        for (r, geometry) in laid {
            func.set_layout(r, TypeLayout::Strided(geometry.strides.clone()));
            geometries[r.index()] = Some(geometry);
        }
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
    Ok(())
}
