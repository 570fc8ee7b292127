//! The `.kir` printer. Every instruction is printed with its result type, so
//! `print(parse(text))` is a fixed point and `parse(print(graph))` rebuilds
//! the same graph.

use std::fmt::{self, Write};

use crate::graph::{Func, Inst, Module, Operand};
use crate::op::{AttrValue, Bound, Op};
use crate::types::TensorType;

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

/// The attributes an instruction prints: the op's, the names of tensor
/// clamp bounds, then `out_dtype`.
fn inst_attrs(func: &Func, inst: &Inst) -> (usize, Vec<(&'static str, AttrValue)>) {
    let mut attrs = inst.op.attrs();
    let mut positional = inst.operands.len();
    if let Op::Clamp { min, max } = &inst.op {
        // Bounds print in order, each a scalar or the name of a tensor operand.
        attrs.clear();
        positional = 1;
        let mut tensor_bounds = inst.operands[1..].iter();
        for (name, bound) in [("min", min), ("max", max)] {
            match bound {
                Bound::Scalar(s) => attrs.push((name, AttrValue::Scalar(*s))),
                Bound::Tensor => {
                    if let Some(Operand::Value(v)) = tensor_bounds.next() {
                        attrs.push((name, AttrValue::Value(func.name_of(*v).to_string())));
                    }
                }
                Bound::None => {}
            }
        }
    }
    if let Some(d) = inst.out_dtype {
        attrs.push(("out_dtype", AttrValue::DType(d)));
    }
    (positional, attrs)
}

pub fn write_inst(f: &mut dyn Write, func: &Func, inst: &Inst) -> fmt::Result {
    write!(f, "%{} = {}", func.name_of(inst.result), inst.op.name())?;
    let (positional, attrs) = inst_attrs(func, inst);
    for (i, o) in inst.operands[..positional].iter().enumerate() {
        f.write_str(if i == 0 { " " } else { ", " })?;
        match o {
            Operand::Value(v) => write!(f, "%{}", func.name_of(*v))?,
            Operand::Scalar(s) => write!(f, "{s}")?,
        }
    }
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
    write!(f, " : {}", func.ty(inst.result))
}

/// A module as `.kir` text.
pub fn module_to_string(module: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, module).expect("writing to a String cannot fail");
    s
}
