//! The `.kir` printer. Every instruction is printed with its result type, so
//! `print(parse(text))` is a fixed point and `parse(print(graph))` rebuilds
//! the same graph.

use std::fmt::{self, Write};

use crate::graph::{Func, Inst, Module, Operand};
use crate::ops::AttrValue;
use crate::types::TensorType;

/// Writes a module as `.kir`.
pub fn write_module(f: &mut dyn Write, module: &Module) -> fmt::Result {
    for (i, func) in module.funcs.iter().enumerate() {
        if i > 0 {
            f.write_str("\n")?;
        }
        write_func(f, func)?;
    }
    Ok(())
}

fn write_result_types(f: &mut dyn Write, types: &[TensorType]) -> fmt::Result {
    match types {
        [one] => write!(f, "{one}"),
        many => {
            f.write_str("(")?;
            for (i, t) in many.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            f.write_str(")")
        }
    }
}

/// Writes a function as `.kir`.
pub fn write_func(f: &mut dyn Write, func: &Func) -> fmt::Result {
    write!(f, "func @{}(", func.name)?;
    for (i, p) in func.params.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "%{}: {}", func.name_of(*p), func.ty(*p))?;
    }
    f.write_str(") -> ")?;
    write_result_types(f, &func.result_types)?;
    f.write_str(" {\n")?;
    for inst in &func.insts {
        f.write_str("  ")?;
        write_inst(f, func, inst)?;
        f.write_str("\n")?;
    }
    f.write_str("  return")?;
    for (i, v) in func.returns.iter().enumerate() {
        f.write_str(if i == 0 { " " } else { ", " })?;
        write!(f, "%{}", func.name_of(*v))?;
    }
    f.write_str("\n}\n")
}

/// The attributes an instruction prints: the op's, then `out_dtype`.
fn inst_attrs(inst: &Inst) -> Vec<(&'static str, AttrValue)> {
    let mut attrs = inst.op.attrs();
    if let Some(d) = inst.out_dtype {
        attrs.push(("out_dtype", AttrValue::DType(d)));
    }
    attrs
}

fn write_operand(f: &mut dyn Write, func: &Func, o: &Operand) -> fmt::Result {
    match o {
        Operand::Value(v) => write!(f, "%{}", func.name_of(*v)),
        Operand::Scalar(s) => write!(f, "{s}"),
        Operand::None => f.write_str("none"),
    }
}

/// Writes an instruction: its results, op, operands (a list slot in
/// brackets, trailing `none`s left out), attributes and result types.
pub fn write_inst(f: &mut dyn Write, func: &Func, inst: &Inst) -> fmt::Result {
    for (i, r) in inst.results.iter().enumerate() {
        f.write_str(if i == 0 { "%" } else { ", %" })?;
        f.write_str(func.name_of(*r))?;
    }
    write!(f, " = {}", inst.op.name())?;
    let def = inst.op.def();
    let count = inst.operands.len();
    let mut shown = count;
    while shown > 0 && inst.operands[shown - 1] == Operand::None {
        let trailing_optional = def
            .slot_of(shown - 1, count)
            .is_some_and(|s| s.kind == crate::ops::SlotKind::Optional);
        if !trailing_optional {
            break;
        }
        shown -= 1;
    }
    let is_list = |i: usize| def.slot_of(i, count).is_some_and(|s| s.kind.is_list());
    let mut i = 0;
    let mut separator = " ";
    while i < shown {
        f.write_str(separator)?;
        separator = ", ";
        if !is_list(i) {
            write_operand(f, func, &inst.operands[i])?;
            i += 1;
            continue;
        }
        f.write_str("[")?;
        let start = i;
        while i < shown && is_list(i) {
            if i > start {
                f.write_str(", ")?;
            }
            write_operand(f, func, &inst.operands[i])?;
            i += 1;
        }
        f.write_str("]")?;
    }
    let attrs = inst_attrs(inst);
    if !attrs.is_empty() {
        f.write_str(" {")?;
        for (i, (name, value)) in attrs.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name} = {value}")?;
        }
        f.write_str("}")?;
    }
    f.write_str(" : ")?;
    let types: Vec<TensorType> = func.result_types_of(inst);
    write_result_types(f, &types)
}

/// A module as `.kir` text.
pub fn module_to_string(module: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, module).expect("writing to a String cannot fail");
    s
}
