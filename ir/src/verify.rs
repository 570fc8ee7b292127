//! The verifier: checks that a module is well formed. It runs after parsing,
//! after tracing, and after every pass (in release builds' compiles, after
//! the last pass; `kiln dump` and the test suites verify after each).
//!
//! Invariants, each checked here:
//!
//! 1. **Unique names**: function names are unique in a module; value names
//!    are unique in a function.
//! 2. **SSA**: every value is defined exactly once, by one parameter or one
//!    instruction, and its recorded definition points back at its definer.
//! 3. **Defined before use**: every operand of an instruction, and every
//!    returned value, is a parameter or the result of an earlier instruction.
//! 4. **Types equal inference**: each instruction's operands fill its op's
//!    slots (tensors, literals, `none`, lists), and its results, as many
//!    as inference gives, have the shape, dtype and device inference gives
//!    for its operands and attributes. This covers PyTorch's promotion, casting (`out_dtype`),
//!    broadcasting, the device rule (one device per op except zero-dim CPU
//!    tensors), attribute ranges (dims in bounds, valid shapes) and the
//!    dtypes each kernel accepts.
//! 5. **Layouts are consistent**: parameters have a layout; a strided layout
//!    has one non-negative stride per dim.
//! 6. **Returns match the signature**: as many returned values as declared
//!    result types, each with the declared shape, dtype and device, and the
//!    declared strides when the declaration states them.
//! 7. **Shapes are valid**: no negative dimension in any type.

use std::collections::HashSet;

use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Func, Module, ValueDef, ValueId};
use crate::infer::InferCtx;
use crate::types::{TensorType, TypeLayout};

fn fail(func: &Func, message: impl Into<String>) -> Error {
    let err = Error::new(
        ErrorKind::Verifier,
        format!("@{}: {}", func.name, message.into()),
    );
    match &func.location {
        Some(l) => err.at(l.clone()),
        None => err,
    }
}

/// Verifies every function of a module.
pub fn verify_module(module: &Module) -> Result<()> {
    let mut names = HashSet::new();
    for func in &module.funcs {
        if !names.insert(func.name.as_str()) {
            return Err(fail(func, "function defined twice"));
        }
        verify_func(func, &module.ctx())?;
    }
    Ok(())
}

fn check_type(func: &Func, what: &str, ty: &TensorType) -> Result<()> {
    if let Some(d) = ty.shape.iter().find(|d| **d < 0) {
        return Err(fail(func, format!("{what} has negative dimension {d}")));
    }
    if let TypeLayout::Strided(strides) = &ty.layout {
        if strides.len() != ty.rank() {
            return Err(fail(
                func,
                format!(
                    "{what} has {} strides for rank {}",
                    strides.len(),
                    ty.rank()
                ),
            ));
        }
        if strides.iter().any(|s| *s < 0) {
            return Err(fail(func, format!("{what} has a negative stride")));
        }
    }
    Ok(())
}

/// Verifies one function (invariants 1–7 of the module documentation).
pub fn verify_func(func: &Func, ctx: &InferCtx) -> Result<()> {
    let mut names = HashSet::new();
    for (i, v) in func.values.iter().enumerate() {
        if !names.insert(v.name.as_str()) {
            return Err(fail(func, format!("%{} is defined twice", v.name)));
        }
        check_type(func, &format!("%{}", v.name), &v.ty)?;
        let back = match v.def {
            ValueDef::Param(p) => func.params.get(p).copied(),
            ValueDef::Inst { inst, index } => func
                .insts
                .get(inst)
                .and_then(|i| i.results.get(index).copied()),
        };
        if back != Some(ValueId(i as u32)) {
            return Err(fail(
                func,
                format!("%{} does not match its definition", v.name),
            ));
        }
    }
    for &p in &func.params {
        if func.ty(p).layout == TypeLayout::Unspecified {
            return Err(fail(
                func,
                format!("parameter %{} has no layout", func.name_of(p)),
            ));
        }
    }
    let mut defined: HashSet<ValueId> = func.params.iter().copied().collect();
    for (k, inst) in func.insts.iter().enumerate() {
        for v in inst.value_operands() {
            if !defined.contains(&v) {
                let name = func.values.get(v.index()).map_or("?", |d| d.name.as_str());
                return Err(fail(func, format!("%{name} is used before it is defined")));
            }
        }
        for (index, r) in inst.results.iter().enumerate() {
            let defines = func
                .values
                .get(r.index())
                .is_some_and(|v| v.def == ValueDef::Inst { inst: k, index });
            if !defines {
                return Err(fail(
                    func,
                    format!("instruction {k} does not define its result {index}"),
                ));
            }
        }
        let inferred = func.infer_inst(inst, ctx)?;
        if inferred.results.len() != inst.results.len() {
            return Err(fail(
                func,
                format!(
                    "{} has {} results, but inference gives {}",
                    inst.op.name(),
                    inst.results.len(),
                    inferred.results.len()
                ),
            ));
        }
        for (r, expected) in inst.results.iter().zip(&inferred.results) {
            let actual = func.ty(*r);
            if !expected.same_value_type(actual) {
                return Err(fail(
                    func,
                    format!(
                        "%{} = {} has type {actual}, but inference gives {expected}",
                        func.name_of(*r),
                        inst.op.name(),
                    ),
                ));
            }
            defined.insert(*r);
        }
    }
    if func.returns.len() != func.result_types.len() {
        return Err(fail(
            func,
            format!(
                "returns {} values but declares {} results",
                func.returns.len(),
                func.result_types.len()
            ),
        ));
    }
    for (v, declared) in func.returns.iter().zip(&func.result_types) {
        if !defined.contains(v) {
            return Err(fail(func, "returns a value that is not defined"));
        }
        let actual = func.ty(*v);
        let layout_ok = match (&declared.layout, &actual.layout) {
            (TypeLayout::Unspecified, _) | (_, TypeLayout::Unspecified) => true,
            (d, a) => d == a,
        };
        if !actual.same_value_type(declared) || !layout_ok {
            return Err(fail(
                func,
                format!(
                    "returns %{}: {actual}, but the signature says {declared}",
                    func.name_of(*v)
                ),
            ));
        }
    }
    Ok(())
}
