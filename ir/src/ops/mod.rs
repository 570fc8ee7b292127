//! Ops: every op of the IR, declared once in the op table ([`table`]).
//!
//! From each row follow the [`Op`] variant with its typed attributes, the
//! `.kir` name (and aliases), attribute parsing and printing, the operand
//! slots (tensors, scalars, `none`, lists), the number of results, and the
//! rules every stage asks through [`Op::def`]: inference, layout, the
//! expansion of a composite into primitives, the ATen kernel's dtypes,
//! traits and cost. The primitive families ([`UnaryOp`], [`BinaryOp`],
//! [`ReduceOp`], [`ArgReduceOp`]) are what backends compute, each in one
//! exhaustive `match`.
//!
//! | module | owns |
//! |---|---|
//! | [`table`] | the table itself |
//! | [`def`] | what a row says: slots, results, traits, cost, rules |
//! | [`prims`] | what a primitive's definition says |
//! | [`attrs`] | attribute values, their parsing and printing |
//! | [`expand`] | the expansions of composite ops |
//! | [`padding`] | the reflection and replication pads: modes, checks, shapes |
//! | [`catalogue`] | the table as a markdown list (`kiln ops`, the README) |
//! | `define` | the macros rows are written with |

use std::fmt;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;

pub mod attrs;
pub mod catalogue;
pub mod def;
mod define;
pub mod derived;
pub mod expand;
pub mod mha;
pub mod padding;
pub mod prims;
pub mod table;

pub use attrs::{
    AttrType, AttrValue, Attrs, ConvPadding, GeluApproximate, LossReduction, RoundingMode,
    SearchSide,
};
pub use def::{Alias, Cost, OpDef, Results, Rules, Slot, SlotKind, Traits};
pub use prims::{Fold, scan_accumulator};
pub use table::{ArgReduceOp, BinaryOp, Op, ReduceOp, UnaryOp};

/// How `pow` with a scalar exponent computes ([`Op::pow_scalar_form`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowForm {
    /// `x ** 1`: `x`.
    Identity,
    /// `x ** 0`: one.
    One,
    /// `x * x`.
    Square,
    /// `(x * x) * x`.
    Cube,
    /// `sqrt(x)`.
    Sqrt,
    /// `rsqrt(x)`.
    Rsqrt,
    /// `1 / x`.
    Reciprocal,
    /// `1 / (x * x)`.
    ReciprocalSquare,
    /// `pow(x, e)`.
    General,
}

/// Chooses among the members of a family written with the same name by
/// its selector attribute (`div {rounding_mode = "floor"}`), which is
/// consumed; the member without a selector is the default.
fn select_member<K: Copy>(
    name: &str,
    attrs: &mut Attrs,
    members: &[K],
    selector: impl Fn(K) -> Option<(&'static str, AttrValue)>,
) -> Result<K> {
    let selected: Vec<(K, &'static str, AttrValue)> = members
        .iter()
        .filter_map(|&k| selector(k).map(|(a, v)| (k, a, v)))
        .collect();
    let default = members.iter().copied().find(|&k| selector(k).is_none());
    let Some(&(_, attr, _)) = selected.first() else {
        return default.ok_or_else(|| unknown_op(name));
    };
    match attrs.take(attr) {
        None => default.ok_or_else(|| {
            Error::new(
                ErrorKind::Attribute,
                format!("{name}: missing attribute '{attr}'"),
            )
        }),
        Some(AttrValue::Str(s)) => {
            if let Some((k, ..)) = selected
                .iter()
                .find(|(_, _, v)| *v == AttrValue::Str(s.clone()))
            {
                return Ok(*k);
            }
            // PyTorch's wording: "one of None, 'trunc', or 'floor'".
            let mut choices: Vec<String> = Vec::new();
            if default.is_some() {
                choices.push("None".into());
            }
            choices.extend(selected.iter().map(|(_, _, v)| match v {
                AttrValue::Str(t) => format!("'{t}'"),
                other => other.to_string(),
            }));
            let listed = match choices.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("{}, or {last}", rest.join(", "))
                }
                _ => choices.join(""),
            };
            Err(Error::new(
                ErrorKind::Attribute,
                format!("{name} expected {attr} to be one of {listed} but found '{s}'"),
            ))
        }
        Some(other) => Err(Error::new(
            ErrorKind::Attribute,
            format!("{name}: attribute '{attr}' must be a string, got {other}"),
        )),
    }
}

fn unknown_op(name: &str) -> Error {
    Error::new(ErrorKind::UnknownOp, format!("unknown op '{name}'"))
}

impl Op {
    /// Whether `name` is an op's `.kir` name (or an alias).
    pub fn is_name(name: &str) -> bool {
        static NAMES: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
            std::sync::OnceLock::new();
        NAMES
            .get_or_init(|| Op::names().into_iter().collect())
            .contains(name)
    }

    /// The `.kir` name: the row's, a family member's, or an alias that
    /// stands for the attributes (`zeros`).
    pub fn name(&self) -> &'static str {
        self.alias().map_or_else(|| self.base_name(), |a| a.name)
    }

    /// The alias this op is printed with, if its attributes are one's.
    fn alias(&self) -> Option<&'static Alias> {
        let aliases = self.def().rules.aliases;
        if aliases.is_empty() {
            return None;
        }
        let attrs = self.field_attrs();
        aliases.iter().find(|a| {
            attrs
                .iter()
                .any(|(n, v)| *n == a.attr && *v == AttrValue::Scalar(Scalar::Float(a.value)))
        })
    }

    /// The attributes to print, in order: defaults left out (unless a
    /// field is shown anyway), and the attribute an alias stands for.
    pub fn attrs(&self) -> Vec<(&'static str, AttrValue)> {
        let mut attrs = self.field_attrs();
        if let Some(alias) = self.alias() {
            attrs.retain(|(n, _)| *n != alias.attr);
        }
        attrs
    }

    /// Builds an op from its `.kir` name (or an alias) and attributes;
    /// every attribute must be used.
    pub fn parse(name: &str, mut attrs: Attrs) -> Result<Op> {
        // ATen's `round.decimals` overload is `round` with a `decimals`
        // attribute (the unary family's `round` has none).
        if name == "round" && attrs.names().any(|n| n == "decimals") {
            let decimals = attrs.require::<i64>(name, "decimals")?;
            attrs.finish(name)?;
            return Ok(Op::RoundDecimals { decimals });
        }
        let (name, op) = match Op::parse_named(name, &mut attrs)? {
            Some(op) => (name, op),
            None => {
                let (target, alias) = Op::alias_target(name).ok_or_else(|| unknown_op(name))?;
                attrs.imply(
                    name,
                    alias.attr,
                    AttrValue::Scalar(Scalar::Float(alias.value)),
                )?;
                let op = Op::parse_named(target, &mut attrs)?.ok_or_else(|| unknown_op(name))?;
                (target, op)
            }
        };
        attrs.finish(name)?;
        Ok(op)
    }

    /// Whether the op has all of these properties (a family member's
    /// result being bool counts as [`Traits::PREDICATE`]).
    pub fn is(&self, traits: Traits) -> bool {
        let own = match self {
            Op::Unary { op } => {
                let def = op.def();
                let predicate = if def.result == prims::ResultDType::Bool {
                    Traits::PREDICATE
                } else {
                    Traits::NONE
                };
                predicate.with(def.traits)
            }
            Op::Binary { op } => {
                let def = op.def();
                let predicate = if def.is_predicate() {
                    Traits::PREDICATE
                } else {
                    Traits::NONE
                };
                predicate.with(def.traits)
            }
            _ => Traits::NONE,
        };
        self.def().rules.traits.with(own).contains(traits)
    }

    /// The cost class (a family member's own).
    pub fn cost(&self) -> Cost {
        match self {
            Op::Unary { op } => op.def().cost,
            Op::Binary { op } => op.def().cost,
            _ => self.def().rules.cost,
        }
    }

    /// Ops that return a view of their first operand.
    pub fn is_view(&self) -> bool {
        self.is(Traits::VIEW)
    }

    /// Elementwise ops (one output element from the same-index input
    /// elements).
    pub fn is_pointwise(&self) -> bool {
        self.is(Traits::POINTWISE)
    }

    /// Ops defined by an expansion into other ops.
    pub fn is_composite(&self) -> bool {
        self.is(Traits::COMPOSITE)
    }

    /// Ops that make a tensor from nothing.
    pub fn is_creation(&self) -> bool {
        self.is(Traits::CREATION)
    }

    /// The dtype a scalar literal operand takes when this op computes in
    /// `compute`: PyTorch's mul and div kernels keep the scalar at opmath
    /// precision for f16/bf16 ("original_scalar_value"); every other kernel
    /// converts it to the computation dtype.
    pub fn scalar_dtype(&self, compute: DType) -> DType {
        let opmath_scalar = matches!(self, Op::Binary { op } if op.def().opmath_scalar);
        if opmath_scalar && compute.is_reduced_float() {
            compute.opmath()
        } else {
            compute
        }
    }

    /// How `pow(tensor, exponent)` computes for a scalar exponent: PyTorch
    /// special-cases common exponents before falling back to `pow`, and
    /// every implementation must do the same to give the same bits.
    pub fn pow_scalar_form(exponent: Scalar, base_is_float: bool) -> PowForm {
        let e = match exponent {
            Scalar::Complex(re, im) if im == 0.0 => re,
            Scalar::Complex(..) => return PowForm::General,
            Scalar::Float(f) => f,
            Scalar::Int(i) => i as f64,
            Scalar::UInt(u) => u as f64,
            Scalar::Bool(b) => b as u8 as f64,
        };
        match (e, base_is_float) {
            (1.0, _) => PowForm::Identity,
            (0.0, _) => PowForm::One,
            (2.0, true) => PowForm::Square,
            (3.0, true) => PowForm::Cube,
            (0.5, true) => PowForm::Sqrt,
            (-0.5, true) => PowForm::Rsqrt,
            (-1.0, true) => PowForm::Reciprocal,
            (-2.0, true) => PowForm::ReciprocalSquare,
            _ => PowForm::General,
        }
    }
}

impl BinaryOp {
    /// Commutative in value (`a op b == b op a`), for rewrites and CSE.
    pub fn is_commutative(self) -> bool {
        self.def().traits.contains(Traits::COMMUTATIVE)
    }

    /// `== != < <= > >=`.
    pub fn is_comparison(self) -> bool {
        self.def().class == prims::BinaryClass::Comparison
    }

    /// `logical_and`, `logical_or`, `logical_xor`: operands of any dtype,
    /// only their truthiness counts.
    pub fn is_logical(self) -> bool {
        self.def().class == prims::BinaryClass::Logical
    }

    /// Whether the result is bool.
    pub fn is_predicate(self) -> bool {
        self.def().is_predicate()
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        let attrs = self.attrs();
        if !attrs.is_empty() {
            f.write_str(" {")?;
            for (i, (n, v)) in attrs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{n} = {v}")?;
            }
            f.write_str("}")?;
        }
        Ok(())
    }
}
