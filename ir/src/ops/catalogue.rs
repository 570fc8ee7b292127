//! The op table as documentation: one markdown table, made from the table
//! itself ([`Op::catalogue`] and the family members' definitions), which
//! `kiln ops` prints and the README includes (a test keeps the two equal).

use crate::dtype::DType;
use crate::support::DTypeSet;

use super::def::{CatalogueEntry, KernelRule, Results, SlotKind, Traits};
use super::{ArgReduceOp, BinaryOp, Op, ReduceOp, UnaryOp};

/// Every op of the table, one row per `.kir` name (a family's members each
/// have theirs), in table order.
pub fn markdown() -> String {
    let mut out = String::from(
        "| op | operands | attributes (default) | kind | CPU dtypes |\n|---|---|---|---|---|\n",
    );
    for entry in Op::catalogue() {
        let operands = operands(&entry);
        let attrs = attributes(&entry);
        let kind = kind(&entry);
        let row = |name: String, dtypes: String| {
            format!("| `{name}` | {operands} | {attrs} | {kind} | {dtypes} |\n")
        };
        match entry.variant {
            "Unary" => {
                for op in UnaryOp::ALL {
                    out += &row(op.name().into(), describe(op.def().kernel.dtypes));
                }
            }
            "Binary" => {
                for op in BinaryOp::ALL {
                    let kernel = op.def().kernel.resolve(DType::F32, false);
                    // Members sharing a name are told apart by their
                    // selector (`div {rounding_mode = "floor"}`).
                    let name = match op.selector() {
                        Some((attr, value)) => format!("{} {{{attr} = {value}}}", op.name()),
                        None => op.name().to_string(),
                    };
                    out += &row(name, describe(kernel.dtypes));
                }
            }
            "Reduce" => {
                for op in ReduceOp::ALL {
                    out += &row(op.name().into(), describe(op.def().kernel.dtypes));
                }
            }
            "ArgReduce" => {
                for op in ArgReduceOp::ALL {
                    out += &row(op.name().into(), describe(op.def().kernel.dtypes));
                }
            }
            _ => {
                let mut names: Vec<String> = entry.names.iter().map(|n| n.to_string()).collect();
                names.extend(entry.rules.aliases.iter().map(|a| a.name.to_string()));
                let dtypes = match entry.rules.kernel {
                    KernelRule::Fixed(k) => describe(k.dtypes),
                    KernelRule::None => "any".to_string(),
                    KernelRule::Custom(_) => "by rule".to_string(),
                };
                out += &row(names.join("`, `"), dtypes);
            }
        }
    }
    out
}

fn operands(entry: &CatalogueEntry) -> String {
    let parts: Vec<String> = entry
        .operands
        .iter()
        .map(|s| match s.kind {
            SlotKind::Tensor => s.name.to_string(),
            SlotKind::Any => format!("{} (or a literal)", s.name),
            SlotKind::Optional => format!("{}?", s.name),
            SlotKind::List => format!("[{}]", s.name),
            SlotKind::OptionalList => format!("[{}]?", s.name),
        })
        .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

fn attributes(entry: &CatalogueEntry) -> String {
    let parts: Vec<String> = entry
        .attrs
        .iter()
        .map(|a| match a.default {
            Some(d) => format!("{} = {}", a.name, literal(d)),
            None => format!("{} (required)", a.name),
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        parts.join(", ")
    }
}

/// A default as `.kir` writes it: `Scalar::Int(1)` is `1`, `F64(1e-5)` is
/// `1e-5`, `MemoryFormat::Preserve` is `preserve`.
fn literal(rust: &str) -> String {
    let mut s = rust.replace(' ', "");
    for wrapper in [
        "Scalar::Int(",
        "Scalar::Float(",
        "F64(",
        "ConvPadding::Sizes(",
    ] {
        if let Some(inner) = s.strip_prefix(wrapper) {
            s = inner.strip_suffix(')').unwrap_or(inner).to_string();
        }
    }
    // Lists: `vec![1]` is `[1]`, `Vec::new()` is `[]`.
    if s == "Vec::new()" {
        return "[]".to_string();
    }
    if let Some(items) = s.strip_prefix("vec!") {
        return items.replace(',', ", ");
    }
    if let Some((_, variant)) = s.rsplit_once("::") {
        s = variant.to_lowercase();
    }
    s.replace("None", "none")
}

fn kind(entry: &CatalogueEntry) -> String {
    let traits = entry.rules.traits;
    let mut parts = Vec::new();
    for (t, name) in [
        (Traits::POINTWISE, "pointwise"),
        (Traits::REDUCTION, "reduction"),
        (Traits::VIEW, "view"),
        (Traits::COPY, "copy"),
        (Traits::CREATION, "creation"),
    ] {
        if traits.contains(t) {
            parts.push(name);
        }
    }
    if entry.rules.expand.is_some() {
        parts.push("composite");
    }
    match entry.rules.results {
        Results::Fixed(1) => {}
        Results::Fixed(_) | Results::Variable => parts.push("several results"),
    }
    parts.join(", ")
}

/// A set of dtypes in words: the named groups it contains whole, then the
/// single dtypes left.
pub fn describe(set: DTypeSet) -> String {
    if set == DTypeSet::ALL {
        return "all".to_string();
    }
    let groups = [
        (DTypeSet::FLOATS, "floats"),
        (DTypeSet::COMPLEX, "complex"),
        (DTypeSet::INTS, "ints"),
        (DTypeSet::BARE_UINTS, "u16/u32/u64"),
        (DTypeSet::BOOL, "bool"),
        (DTypeSet::FLOAT8, "float8"),
        (DTypeSet::FLOAT8_SIGNED, "float8 (signed)"),
    ];
    let mut left = set;
    let mut parts: Vec<String> = Vec::new();
    for (group, name) in groups {
        if group != DTypeSet::EMPTY
            && left.union(group) == left
            && group.iter().all(|d| left.contains(d))
        {
            parts.push(name.to_string());
            left = left.without(group);
        }
    }
    parts.extend(left.iter().map(|d| d.short_name().to_string()));
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_row() {
        let table = markdown();
        for name in Op::names() {
            assert!(table.contains(&format!("`{name}`")), "{name} is not listed");
        }
    }

    #[test]
    fn defaults_read_as_kir() {
        assert_eq!(literal("Scalar::Int(20)"), "20");
        assert_eq!(literal("ConvPadding::Sizes(vec![0])"), "[0]");
        assert_eq!(literal("Vec::new()"), "[]");
        assert_eq!(literal("F64(1e-5)"), "1e-5");
        assert_eq!(literal("MemoryFormat::Preserve"), "preserve");
        assert_eq!(literal("None"), "none");
        assert_eq!(
            describe(DTypeSet::FLOATS.union(DTypeSet::BOOL)),
            "floats, bool"
        );
    }
}
