//! The graph: modules of functions, each a list of SSA instructions over
//! typed values, and the builder that keeps every instruction typed.
//!
//! A function is one straight-line block (tensor programs have no control
//! flow): parameters, instructions in order, and the returned values. Values
//! live in an arena indexed by [`ValueId`]; each is defined once, by a
//! parameter or by the instruction that produces it. The builder runs type
//! inference on every instruction it adds, so a built graph is always typed.

use std::collections::HashSet;
use std::fmt;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Location, Result};
use crate::infer::{Arg, InferCtx, Inferred, infer};
use crate::op::Op;
use crate::promotion::DefaultDType;
use crate::scalar::Scalar;
use crate::types::{TensorType, TypeLayout};

/// A value of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl ValueId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An instruction operand: a value or a scalar literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    Value(ValueId),
    Scalar(Scalar),
}

impl Operand {
    pub fn value(&self) -> Option<ValueId> {
        match self {
            Operand::Value(v) => Some(*v),
            Operand::Scalar(_) => None,
        }
    }
}

impl From<ValueId> for Operand {
    fn from(v: ValueId) -> Self {
        Operand::Value(v)
    }
}

impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Self {
        Operand::Scalar(s)
    }
}

/// One instruction: `%result = op operands {attrs, out_dtype} : type`.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub operands: Vec<Operand>,
    /// `out_dtype = D`: the result is cast to D (out= and in-place ops).
    pub out_dtype: Option<DType>,
    pub result: ValueId,
    /// Where the instruction was written, for error messages.
    pub location: Option<Location>,
}

impl Inst {
    pub fn value_operands(&self) -> impl Iterator<Item = ValueId> + '_ {
        self.operands.iter().filter_map(Operand::value)
    }
}

/// How a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    Param(usize),
    Inst(usize),
}

/// A value's name, type and definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueData {
    pub name: String,
    pub ty: TensorType,
    pub def: ValueDef,
}

/// A function: parameters, instructions, returned values.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    pub values: Vec<ValueData>,
    pub params: Vec<ValueId>,
    pub insts: Vec<Inst>,
    pub returns: Vec<ValueId>,
    /// The declared result types (`-> T` or `-> (T1, T2)`).
    pub result_types: Vec<TensorType>,
    pub location: Option<Location>,
}

impl Func {
    pub fn value(&self, v: ValueId) -> &ValueData {
        &self.values[v.index()]
    }

    pub fn ty(&self, v: ValueId) -> &TensorType {
        &self.value(v).ty
    }

    pub fn name_of(&self, v: ValueId) -> &str {
        &self.value(v).name
    }

    pub fn set_layout(&mut self, v: ValueId, layout: TypeLayout) {
        self.values[v.index()].ty.layout = layout;
    }

    /// The instruction defining `v`, if `v` is not a parameter.
    pub fn def_inst(&self, v: ValueId) -> Option<&Inst> {
        match self.value(v).def {
            ValueDef::Inst(i) => self.insts.get(i),
            ValueDef::Param(_) => None,
        }
    }

    /// How many times each value is used (operands and returns).
    pub fn use_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.values.len()];
        for inst in &self.insts {
            for v in inst.value_operands() {
                counts[v.index()] += 1;
            }
        }
        for v in &self.returns {
            counts[v.index()] += 1;
        }
        counts
    }

    /// The types of an instruction's operands, as inference takes them.
    pub fn args<'a>(&'a self, inst: &Inst) -> Vec<Arg<'a>> {
        inst.operands
            .iter()
            .map(|o| match o {
                Operand::Value(v) => Arg::Tensor(self.ty(*v)),
                Operand::Scalar(s) => Arg::Scalar(*s),
            })
            .collect()
    }

    /// Re-runs inference for an instruction against the current operand types.
    pub fn infer_inst(&self, inst: &Inst, ctx: &InferCtx) -> Result<Inferred> {
        let located = |e: Error| match &inst.location {
            Some(l) => e.at(l.clone()),
            None => e,
        };
        infer(&inst.op, &self.args(inst), inst.out_dtype, ctx).map_err(located)
    }
}

/// A module: one or more functions, and the default dtype they are typed under.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub funcs: Vec<Func>,
    pub default_dtype: DefaultDType,
}

impl Module {
    pub fn new(default_dtype: DefaultDType) -> Module {
        Module {
            funcs: Vec::new(),
            default_dtype,
        }
    }

    /// A module of one function.
    pub fn single(func: Func, default_dtype: DefaultDType) -> Module {
        Module {
            funcs: vec![func],
            default_dtype,
        }
    }

    /// Forgets where each function and instruction was written (to compare
    /// graphs built from different texts, or traced and parsed).
    pub fn clear_locations(&mut self) {
        for func in &mut self.funcs {
            func.location = None;
            for inst in &mut func.insts {
                inst.location = None;
            }
        }
    }

    pub fn ctx(&self) -> InferCtx {
        InferCtx {
            default_dtype: self.default_dtype,
        }
    }

    /// The function `kiln run` runs: `@main`, or the only function.
    pub fn entry(&self) -> Result<&Func> {
        let index = self.entry_index()?;
        Ok(&self.funcs[index])
    }

    pub fn entry_mut(&mut self) -> Result<&mut Func> {
        let index = self.entry_index()?;
        Ok(&mut self.funcs[index])
    }

    fn entry_index(&self) -> Result<usize> {
        if let Some(i) = self.funcs.iter().position(|f| f.name == "main") {
            return Ok(i);
        }
        match self.funcs.len() {
            1 => Ok(0),
            0 => Err(Error::new(ErrorKind::Value, "the module has no function")),
            _ => Err(Error::new(
                ErrorKind::Value,
                "the module has several functions and none is named @main",
            )),
        }
    }
}

/// Builds a function one typed instruction at a time.
pub struct FuncBuilder {
    func: Func,
    ctx: InferCtx,
    names: HashSet<String>,
    /// Names fresh names must avoid (names a rebuild will give out later).
    reserved: HashSet<String>,
    next_name: usize,
}

impl FuncBuilder {
    pub fn new(name: impl Into<String>, ctx: InferCtx) -> FuncBuilder {
        FuncBuilder {
            func: Func {
                name: name.into(),
                values: Vec::new(),
                params: Vec::new(),
                insts: Vec::new(),
                returns: Vec::new(),
                result_types: Vec::new(),
                location: None,
            },
            ctx,
            names: HashSet::new(),
            reserved: HashSet::new(),
            next_name: 0,
        }
    }

    /// Keeps fresh names clear of `names` (which the caller will use itself).
    pub fn reserve_names<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        self.reserved.extend(names.into_iter().map(str::to_string));
    }

    pub fn ctx(&self) -> &InferCtx {
        &self.ctx
    }

    pub fn set_location(&mut self, location: Location) {
        self.func.location = Some(location);
    }

    pub fn ty(&self, v: ValueId) -> &TensorType {
        self.func.ty(v)
    }

    /// The function built so far (for inspection while building).
    pub fn func(&self) -> &Func {
        &self.func
    }

    fn fresh_name(&mut self) -> String {
        loop {
            let name = self.next_name.to_string();
            self.next_name += 1;
            if !self.names.contains(&name) && !self.reserved.contains(&name) {
                return name;
            }
        }
    }

    fn claim_name(&mut self, name: Option<&str>) -> Result<String> {
        let name = match name {
            Some(n) => n.to_string(),
            None => self.fresh_name(),
        };
        if !self.names.insert(name.clone()) {
            return Err(Error::new(
                ErrorKind::Value,
                format!("%{name} is defined twice"),
            ));
        }
        Ok(name)
    }

    /// Adds a parameter. Its layout is what the type says; a type that says
    /// nothing is contiguous.
    pub fn param(&mut self, name: Option<&str>, mut ty: TensorType) -> Result<ValueId> {
        if ty.layout == TypeLayout::Unspecified {
            ty = ty.contiguous();
        }
        let name = self.claim_name(name)?;
        let id = ValueId(self.func.values.len() as u32);
        self.func.values.push(ValueData {
            name,
            ty,
            def: ValueDef::Param(self.func.params.len()),
        });
        self.func.params.push(id);
        Ok(id)
    }

    /// Adds an instruction, inferring its result type.
    pub fn push(
        &mut self,
        op: Op,
        operands: Vec<Operand>,
        out_dtype: Option<DType>,
    ) -> Result<ValueId> {
        self.push_full(op, operands, out_dtype, None, None, None)
    }

    /// Adds an instruction with an optional name, location, and written
    /// result type (checked against inference; a written layout is kept as
    /// a claim for the layout pass).
    pub fn push_full(
        &mut self,
        op: Op,
        operands: Vec<Operand>,
        out_dtype: Option<DType>,
        name: Option<&str>,
        location: Option<Location>,
        written: Option<TensorType>,
    ) -> Result<ValueId> {
        for o in &operands {
            if let Operand::Value(v) = o {
                if v.index() >= self.func.values.len() {
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!("operand {v:?} is not defined"),
                    ));
                }
            }
        }
        let id = ValueId(self.func.values.len() as u32);
        let inst = Inst {
            op,
            operands,
            out_dtype,
            result: id,
            location,
        };
        let inferred = self.func.infer_inst(&inst, &self.ctx)?;
        let mut ty = inferred.ty;
        if let Some(w) = written {
            if !w.same_value_type(&ty) {
                let err = Error::new(
                    ErrorKind::TypeMismatch,
                    format!(
                        "{} produces {ty}, but the instruction says {w}",
                        inst.op.name()
                    ),
                );
                return Err(match &inst.location {
                    Some(l) => err.at(l.clone()),
                    None => err,
                });
            }
            ty.layout = w.layout;
        }
        let name = self.claim_name(name)?;
        self.func.values.push(ValueData {
            name,
            ty,
            def: ValueDef::Inst(self.func.insts.len()),
        });
        self.func.insts.push(inst);
        Ok(id)
    }

    /// Finishes the function. Without declared types, the returned values'
    /// types are the declaration.
    pub fn finish(
        mut self,
        returns: Vec<ValueId>,
        declared: Option<Vec<TensorType>>,
    ) -> Result<Func> {
        let declared = declared.unwrap_or_else(|| {
            returns
                .iter()
                .map(|v| {
                    self.func
                        .ty(*v)
                        .clone()
                        .with_layout(TypeLayout::Unspecified)
                })
                .collect()
        });
        self.func.returns = returns;
        self.func.result_types = declared;
        crate::verify::verify_func(&self.func, &self.ctx)?;
        Ok(self.func)
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::print::write_module(f, self)
    }
}

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::print::write_func(f, self)
    }
}
