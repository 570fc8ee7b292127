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
use crate::ops::{Op, SlotKind};
use crate::promotion::DefaultDType;
use crate::scalar::Scalar;
use crate::types::{TensorType, TypeLayout};

/// A value of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl ValueId {
    /// The value's index in its function's value arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An instruction operand: a value, a scalar literal, or `none` (an
/// absent optional tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operand {
    /// A value of the function.
    Value(ValueId),
    /// A scalar literal.
    Scalar(Scalar),
    /// `none`.
    None,
}

impl Operand {
    /// The value, if the operand is one.
    pub fn value(&self) -> Option<ValueId> {
        match self {
            Operand::Value(v) => Some(*v),
            Operand::Scalar(_) | Operand::None => None,
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

/// One instruction: `%r0, %r1 = op operands {attrs, out_dtype} : types`.
///
/// Its operands fill its op's slots in order
/// ([`OpDef::operands`](crate::ops::OpDef::operands)): a list slot's
/// elements are as many as the other slots leave, and an absent optional
/// tensor is [`Operand::None`] (the builder fills trailing ones in).
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// The op and its attributes.
    pub op: Op,
    /// The operands.
    pub operands: Vec<Operand>,
    /// `out_dtype = D`: the result is cast to D (out= and in-place ops).
    pub out_dtype: Option<DType>,
    /// The values the instruction defines, one per result.
    pub results: Vec<ValueId>,
    /// Where the instruction was written, for error messages.
    pub location: Option<Location>,
}

impl Inst {
    /// The operands that are values, in order.
    pub fn value_operands(&self) -> impl Iterator<Item = ValueId> + '_ {
        self.operands.iter().filter_map(Operand::value)
    }

    /// The result of a single-result instruction (the first of several).
    pub fn result(&self) -> ValueId {
        self.results[0]
    }
}

/// How a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// Parameter number `n`.
    Param(usize),
    /// Result `index` of instruction `inst`.
    Inst {
        /// The instruction's position in its function.
        inst: usize,
        /// Which of its results.
        index: usize,
    },
}

/// A value's name, type and definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueData {
    /// The name (without `%`).
    pub name: String,
    /// The type.
    pub ty: TensorType,
    /// What defines it.
    pub def: ValueDef,
}

/// A function: parameters, instructions, returned values.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// The name (without `@`).
    pub name: String,
    /// Every value, indexed by [`ValueId`].
    pub values: Vec<ValueData>,
    /// The parameters, in order.
    pub params: Vec<ValueId>,
    /// The instructions, in order.
    pub insts: Vec<Inst>,
    /// The returned values.
    pub returns: Vec<ValueId>,
    /// The declared result types (`-> T` or `-> (T1, T2)`).
    pub result_types: Vec<TensorType>,
    /// Where the function was written.
    pub location: Option<Location>,
}

impl Func {
    /// A value's data.
    pub fn value(&self, v: ValueId) -> &ValueData {
        &self.values[v.index()]
    }

    /// A value's type.
    pub fn ty(&self, v: ValueId) -> &TensorType {
        &self.value(v).ty
    }

    /// A value's name.
    pub fn name_of(&self, v: ValueId) -> &str {
        &self.value(v).name
    }

    /// Sets a value's layout.
    pub fn set_layout(&mut self, v: ValueId, layout: TypeLayout) {
        self.values[v.index()].ty.layout = layout;
    }

    /// The instruction defining `v`, if `v` is not a parameter.
    pub fn def_inst(&self, v: ValueId) -> Option<&Inst> {
        match self.value(v).def {
            ValueDef::Inst { inst, .. } => self.insts.get(inst),
            ValueDef::Param(_) => None,
        }
    }

    /// The types of an instruction's results.
    pub fn result_types_of(&self, inst: &Inst) -> Vec<TensorType> {
        inst.results.iter().map(|r| self.ty(*r).clone()).collect()
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
                Operand::None => Arg::None,
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

/// Where a module is in Kiln's pipeline: what the passes that ran have
/// made true of every function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Stage {
    /// Typed and verified (parsed or traced): layouts only where written.
    #[default]
    Typed,
    /// Every value has its layout (the layout pass ran); passes that
    /// rebuild a function lay it out again.
    LaidOut,
}

/// A module: one or more functions, the default dtype they are typed
/// under, and the pipeline stage they are at.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// The functions.
    pub funcs: Vec<Func>,
    /// What `torch.set_default_dtype` set when it was typed.
    pub default_dtype: DefaultDType,
    /// The pipeline stage.
    pub stage: Stage,
}

impl Module {
    /// An empty module.
    pub fn new(default_dtype: DefaultDType) -> Module {
        Module {
            funcs: Vec::new(),
            default_dtype,
            stage: Stage::Typed,
        }
    }

    /// A module of one function.
    pub fn single(func: Func, default_dtype: DefaultDType) -> Module {
        Module {
            funcs: vec![func],
            default_dtype,
            stage: Stage::Typed,
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

    /// The inference settings of this module.
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

    /// The entry function, mutably.
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

/// A point in a function's building to roll back to
/// ([`FuncBuilder::checkpoint`]).
#[derive(Clone, Copy, Debug)]
pub struct Checkpoint {
    insts: usize,
    values: usize,
    params: usize,
    next_name: usize,
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
    /// A builder of a function named `name`.
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

    /// The inference settings.
    pub fn ctx(&self) -> &InferCtx {
        &self.ctx
    }

    /// Where the function was written.
    pub fn set_location(&mut self, location: Location) {
        self.func.location = Some(location);
    }

    /// The type of a value built so far.
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

    /// Where the function stands now, to [`FuncBuilder::rollback`] to.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            insts: self.func.insts.len(),
            values: self.func.values.len(),
            params: self.func.params.len(),
            next_name: self.next_name,
        }
    }

    /// Removes the instructions, parameters and values added since `mark`
    /// (which nothing before it can use) and gives their names back, as if
    /// they had never been added: an expansion tries an op whole and takes
    /// it back when a backend will not keep it.
    pub fn rollback(&mut self, mark: Checkpoint) {
        self.func.insts.truncate(mark.insts);
        self.func.params.truncate(mark.params);
        for v in self
            .func
            .values
            .drain(mark.values.min(self.func.values.len())..)
        {
            self.names.remove(&v.name);
        }
        self.next_name = mark.next_name;
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

    /// Adds a single-result instruction, inferring its result type.
    pub fn push(
        &mut self,
        op: Op,
        operands: Vec<Operand>,
        out_dtype: Option<DType>,
    ) -> Result<ValueId> {
        let name = op.name();
        let results = self.push_multi(op, operands, out_dtype)?;
        match results.as_slice() {
            [one] => Ok(*one),
            many => Err(Error::new(
                ErrorKind::Arity,
                format!("{name} has {} results where one is expected", many.len()),
            )),
        }
    }

    /// Adds an instruction with any number of results, inferring them.
    pub fn push_multi(
        &mut self,
        op: Op,
        operands: Vec<Operand>,
        out_dtype: Option<DType>,
    ) -> Result<Vec<ValueId>> {
        self.push_full(NewInst::new(op, operands).out_dtype(out_dtype))
    }

    /// Adds an instruction as described, inferring its results; names and
    /// written result types are checked (a written layout is kept as a
    /// claim for the layout pass).
    pub fn push_full(&mut self, new: NewInst) -> Result<Vec<ValueId>> {
        let NewInst {
            op,
            mut operands,
            out_dtype,
            names,
            location,
            written,
        } = new;
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
        fill_optional_slots(&op, &mut operands);
        let located = |e: Error| match &location {
            Some(l) => e.at(l.clone()),
            None => e,
        };
        let first = ValueId(self.func.values.len() as u32);
        let mut inst = Inst {
            op,
            operands,
            out_dtype,
            results: vec![first],
            location: location.clone(),
        };
        let inferred = self.func.infer_inst(&inst, &self.ctx)?;
        let count = inferred.results.len();
        if !names.is_empty() && names.len() != count {
            return Err(located(Error::new(
                ErrorKind::Arity,
                format!(
                    "{} has {count} result{}, but {} {} named",
                    inst.op.name(),
                    if count == 1 { "" } else { "s" },
                    names.len(),
                    if names.len() == 1 { "is" } else { "are" }
                ),
            )));
        }
        let mut types = inferred.results;
        for (i, ty) in types.iter_mut().enumerate() {
            if let Some(w) = written.get(i) {
                if !w.same_value_type(ty) {
                    return Err(located(Error::new(
                        ErrorKind::TypeMismatch,
                        format!(
                            "{} produces {ty}, but the instruction says {w}",
                            inst.op.name()
                        ),
                    )));
                }
                ty.layout = w.layout.clone();
            }
        }
        let index = self.func.insts.len();
        inst.results.clear();
        for (k, ty) in types.into_iter().enumerate() {
            let name = self.claim_name(names.get(k).map(String::as_str))?;
            let id = ValueId(self.func.values.len() as u32);
            self.func.values.push(ValueData {
                name,
                ty,
                def: ValueDef::Inst {
                    inst: index,
                    index: k,
                },
            });
            inst.results.push(id);
        }
        let results = inst.results.clone();
        self.func.insts.push(inst);
        Ok(results)
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

/// An instruction for [`FuncBuilder::push_full`]: the op and operands,
/// and optionally `out_dtype`, result names, a location, and written
/// result types.
#[derive(Clone, Debug)]
pub struct NewInst {
    op: Op,
    operands: Vec<Operand>,
    out_dtype: Option<DType>,
    names: Vec<String>,
    location: Option<Location>,
    written: Vec<TensorType>,
}

impl NewInst {
    /// `op` over `operands`.
    pub fn new(op: Op, operands: Vec<Operand>) -> NewInst {
        NewInst {
            op,
            operands,
            out_dtype: None,
            names: Vec::new(),
            location: None,
            written: Vec::new(),
        }
    }

    /// With `out_dtype`.
    pub fn out_dtype(mut self, out_dtype: Option<DType>) -> NewInst {
        self.out_dtype = out_dtype;
        self
    }

    /// With these result names (as many as results; none: fresh names).
    pub fn names(mut self, names: Vec<String>) -> NewInst {
        self.names = names;
        self
    }

    /// Written at `location`.
    pub fn location(mut self, location: Option<Location>) -> NewInst {
        self.location = location;
        self
    }

    /// With these written result types.
    pub fn written(mut self, written: Vec<TensorType>) -> NewInst {
        self.written = written;
        self
    }
}

/// Fills the optional slots left off the end of an operand list with
/// `none`, so that every instruction holds one operand per slot.
fn fill_optional_slots(op: &Op, operands: &mut Vec<Operand>) {
    let slots = op.def().operands;
    if slots.iter().any(|s| s.kind.is_list()) {
        return;
    }
    while operands.len() < slots.len() && slots[operands.len()].kind == SlotKind::Optional {
        operands.push(Operand::None);
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
