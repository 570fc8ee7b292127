//! What the op table says about each op: its operand slots, results,
//! traits, cost class, and the rules every stage asks (inference, layout,
//! expansion into primitives, the ATen kernel whose dtypes it accepts).
//!
//! A row of the table ([`super::table`]) is an [`OpDef`]; passes and
//! backends ask it through [`Op::def`](super::Op::def) instead of keeping
//! lists of their own.

use crate::error::Result;
use crate::graph::{Operand, ValueId};
use crate::infer::{Arg, InferCtx, Inferred};
use crate::layout::{LayoutArg, ResultLayout};
use crate::types::TensorType;

use super::Op;
use super::expand::Emitter;

/// What an operand slot of an op takes (ATen's argument types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// `Tensor`: a tensor.
    Tensor,
    /// A tensor or a scalar literal (`Tensor` or `Scalar` overloads).
    Any,
    /// `Tensor?`: a tensor or `none`.
    Optional,
    /// `Tensor[]`: a bracketed list of tensors.
    List,
    /// `Tensor?[]`: a bracketed list of tensors and `none`s.
    OptionalList,
}

impl SlotKind {
    /// Whether the slot is a bracketed list.
    pub fn is_list(self) -> bool {
        matches!(self, SlotKind::List | SlotKind::OptionalList)
    }
}

/// One operand slot: its schema name and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The argument's name in the ATen schema.
    pub name: &'static str,
    /// What it takes.
    pub kind: SlotKind,
}

/// How many results an op has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Results {
    /// Always this many.
    Fixed(usize),
    /// As many as the static shapes give (`split`, `unbind`).
    Variable,
}

/// Properties of an op that passes reason with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Traits(u16);

impl Traits {
    /// No property.
    pub const NONE: Traits = Traits(0);
    /// One output element from the same-index elements of its (broadcast)
    /// operands.
    pub const POINTWISE: Traits = Traits(1);
    /// The result is bool.
    pub const PREDICATE: Traits = Traits(1 << 1);
    /// Folds dims of its input.
    pub const REDUCTION: Traits = Traits(1 << 2);
    /// A view of its first operand's storage (by the layout rules: a
    /// `reshape` that cannot be one is a copy).
    pub const VIEW: Traits = Traits(1 << 3);
    /// Defined by its expansion into other ops; no backend computes it.
    pub const COMPOSITE: Traits = Traits(1 << 4);
    /// `op(a, b) == op(b, a)` for every value.
    pub const COMMUTATIVE: Traits = Traits(1 << 5);
    /// Makes a tensor from nothing.
    pub const CREATION: Traits = Traits(1 << 6);
    /// A copy of its operand (possibly laid out or typed differently).
    pub const COPY: Traits = Traits(1 << 7);
    /// Computed by an approximating function (a math library's or Kiln's
    /// own polynomial), not a single IEEE operation: implementations agree
    /// within stated ulps, not bit for bit.
    pub const APPROXIMATE: Traits = Traits(1 << 8);
    /// A step function of its operands somewhere (rounding, comparisons,
    /// selections): an ulp of difference in an operand can change the
    /// result entirely.
    pub const DISCONTINUOUS: Traits = Traits(1 << 9);

    /// Both sets of properties.
    pub const fn with(self, other: Traits) -> Traits {
        Traits(self.0 | other.0)
    }

    /// Whether every property of `other` is in `self`.
    pub const fn contains(self, other: Traits) -> bool {
        self.0 & other.0 == other.0
    }
}

/// What computing an op costs, for fusion (what not to recompute) and the
/// optimizer's cost model (which of two equal programs is cheaper).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cost {
    /// A view: free on data in memory.
    View,
    /// A few instructions per element: recomputed freely where it is used.
    Cheap,
    /// Division, remainder, powers, transcendental functions: worth
    /// computing once rather than at every element of a broadcast.
    Costly,
    /// Reads its input once per result element's row.
    Reduction,
    /// Several passes over each row (softmax, layer_norm).
    Rows,
    /// Writes its result once from nothing.
    Creation,
    /// Copies its operand.
    Copy,
    /// Its own kernel or library call (matmul, cat): a launch plus the
    /// traffic of its operands and result.
    Kernel,
}

impl Cost {
    /// Whether fusion should compute a value of this cost once instead of
    /// at every element of a broadcast or in several kernels.
    pub fn is_expensive(self) -> bool {
        matches!(self, Cost::Costly | Cost::Reduction | Cost::Rows)
    }
}

/// Infers an op's result types and operand conversions.
pub type InferFn = fn(&Op, &[Arg<'_>], &InferCtx) -> Result<Inferred>;

/// Lays out each result of an op from its operands' geometries.
pub type LayoutFn = fn(&Op, &[LayoutArg<'_>], &[TensorType]) -> Result<Vec<ResultLayout>>;

/// Expands a composite op into other ops appended to the emitter; `None`
/// when the expansion does not apply to these dtypes (the op stays, and
/// computing it reports an error).
pub type ExpandFn = fn(&mut Emitter<'_>, &Op, &[Operand]) -> Result<Option<Vec<ValueId>>>;

/// Which ATen CPU kernel an op dispatches to, for the dtype check: PyTorch
/// refuses a dtype its kernel is not compiled for.
pub type KernelFn = fn(&Op, &[Arg<'_>], &Inferred) -> Result<Option<crate::support::AtenKernel>>;

/// How each result of an op is laid out (PyTorch's rule for the op).
#[derive(Clone, Copy)]
pub enum LayoutRule {
    /// TensorIterator's rule over the operands (pointwise ops).
    Pointwise,
    /// A fresh, row-major buffer (reductions and ops computed row by row:
    /// PyTorch allocates their results contiguous).
    Contiguous,
    /// Another rule, given by a function.
    Custom(LayoutFn),
}

/// The dtype check of an op.
#[derive(Clone, Copy)]
pub enum KernelRule {
    /// No kernel restricts the dtypes (views, copies, composites whose
    /// parts check for themselves).
    None,
    /// One kernel.
    Fixed(crate::support::AtenKernel),
    /// A kernel chosen from the operands (PyTorch names some kernels by
    /// the case they handle).
    Custom(KernelFn),
}

/// Another name an op is written with, standing for one attribute value
/// (`zeros` is `full` with `value = 0.0`).
#[derive(Clone, Copy, Debug)]
pub struct Alias {
    /// The other name.
    pub name: &'static str,
    /// The attribute it implies.
    pub attr: &'static str,
    /// That attribute's value (a float literal).
    pub value: f64,
}

/// The rules of one op: everything about it beyond its name, operands and
/// attributes.
#[derive(Clone, Copy)]
pub struct Rules {
    /// Its properties.
    pub traits: Traits,
    /// Its cost class.
    pub cost: Cost,
    /// How many results it has.
    pub results: Results,
    /// Its inference.
    pub infer: InferFn,
    /// Its layout rule.
    pub layout: LayoutRule,
    /// Its expansion, for composite ops.
    pub expand: Option<ExpandFn>,
    /// Its dtype check.
    pub kernel: KernelRule,
    /// Other names it is written with.
    pub aliases: &'static [Alias],
}

impl Rules {
    /// An op with one result, inferred and laid out by these rules.
    pub const fn new(infer: InferFn, layout: LayoutRule, cost: Cost) -> Rules {
        Rules {
            traits: Traits::NONE,
            cost,
            results: Results::Fixed(1),
            infer,
            layout,
            expand: None,
            kernel: KernelRule::None,
            aliases: &[],
        }
    }

    /// Adds properties.
    pub const fn traits(mut self, traits: Traits) -> Rules {
        self.traits = self.traits.with(traits);
        self
    }

    /// Sets the number of results.
    pub const fn results(mut self, results: Results) -> Rules {
        self.results = results;
        self
    }

    /// Makes the op composite, defined by this expansion.
    pub const fn expand(mut self, expand: ExpandFn) -> Rules {
        self.expand = Some(expand);
        self.traits = self.traits.with(Traits::COMPOSITE);
        self
    }

    /// Sets the dtype check.
    pub const fn kernel(mut self, kernel: KernelRule) -> Rules {
        self.kernel = kernel;
        self
    }

    /// Sets the other names.
    pub const fn aliases(mut self, aliases: &'static [Alias]) -> Rules {
        self.aliases = aliases;
        self
    }
}

/// One row of the op table.
/// One row of the op table as documentation ([`Op::catalogue`](super::Op::catalogue)).
pub struct CatalogueEntry {
    /// The Rust variant of [`Op`](super::Op).
    pub variant: &'static str,
    /// Its `.kir` names (a family's members; aliases are in the rules).
    pub names: Vec<&'static str>,
    /// The row's documentation.
    pub doc: &'static str,
    /// Its operand slots, in schema order.
    pub operands: Vec<Slot>,
    /// Its attributes, in print order.
    pub attrs: Vec<CatalogueAttr>,
    /// Its rules.
    pub rules: Rules,
}

/// An attribute of a [`CatalogueEntry`], as the table writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogueAttr {
    /// Its ATen schema name.
    pub name: &'static str,
    /// Its Rust type (`i64`, `Option<Vec<i64>>`, `F64`, ...).
    pub ty: &'static str,
    /// Its default as written (`None`: required).
    pub default: Option<&'static str>,
}

/// One row of the op table (see [`Op::catalogue`](super::Op::catalogue)
/// for the table as documentation).
#[derive(Clone, Copy)]
pub struct OpDef {
    /// The Rust variant of [`Op`].
    pub variant: &'static str,
    /// Its operand slots, in schema order.
    pub operands: &'static [Slot],
    /// Its attribute names, in print order.
    pub attrs: &'static [&'static str],
    /// Its rules.
    pub rules: Rules,
}

impl OpDef {
    /// Whether the op has all of these properties.
    pub fn is(&self, traits: Traits) -> bool {
        self.rules.traits.contains(traits)
    }

    /// The slot operand `index` of an instruction with `count` operands
    /// fills: the operands of a list slot are as many as the others leave.
    pub fn slot_of(&self, index: usize, count: usize) -> Option<&'static Slot> {
        let list = self.operands.iter().position(|s| s.kind.is_list());
        match list {
            None => self.operands.get(index),
            Some(l) => {
                let fixed = self.operands.len() - 1;
                let list_len = count.saturating_sub(fixed);
                if index < l {
                    self.operands.get(index)
                } else if index < l + list_len {
                    self.operands.get(l)
                } else {
                    self.operands.get(index + 1 - list_len)
                }
            }
        }
    }
}
