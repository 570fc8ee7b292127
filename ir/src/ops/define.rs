//! The macros the op table is written with, in the spirit of egg's
//! `define_language!`: each op is declared once, and its enum variant,
//! `.kir` name lookup, attribute parsing and printing, and table row
//! follow from that declaration.
//!
//! [`define_ops!`] declares [`Op`](super::Op). A row is
//!
//! ```text
//! /// doc
//! Variant "name" { field: Type = default, ... } (slot: Kind, ...) => rules;
//! ```
//!
//! - `"name"` is the `.kir` name. A *family* row has no name: its first
//!   field is marked `#[kind]`, and the members of that field's enum (a
//!   [`define_kind!`] table) name the op (`Unary { #[kind] op: UnaryOp }`
//!   is `neg`, `exp`, ...).
//! - Fields are the attributes, by their ATen schema names, in print
//!   order. A field with a default may be left out when written and is
//!   not printed when it holds the default, unless it is marked `#[shown]`;
//!   a field without a default is required.
//! - Slots are the tensor operands in schema order ([`SlotKind`](super::SlotKind)).
//! - `rules` is a const [`Rules`](super::Rules) value: inference, layout,
//!   expansion, dtype check, traits, cost.
//!
//! [`define_kind!`] declares the enum of a family's members (the
//! primitive pointwise ops, the reductions) with a const definition per
//! member; backends match on these enums exhaustively.

/// Declares the op enum and its table. See the module documentation.
macro_rules! define_ops {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $($name:literal)?
        $({ $( $(#[$fmeta:ident])? $field:ident : $fty:ty $(= $fdefault:expr)? ),* $(,)? })?
        ( $( $slot:ident : $skind:ident ),* $(,)? )
        => $rules:expr;
    )*) => {
        /// Every Kiln op, with its attributes. Operands are not part of the
        /// op; see [`crate::graph::Inst`]. Each variant is a row of the op
        /// table: [`Op::def`] gives its operand slots and rules.
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $(
                $(#[doc = $doc])*
                $variant $({ $(
                    #[doc = $crate::ops::define::__field_doc!(
                        $variant, $(#[$fmeta])? $field : $fty $(= $fdefault)?
                    )]
                    $field: $fty
                ),* })?,
            )*
        }

        impl Op {
            /// The op table's row for this op.
            pub fn def(&self) -> &'static OpDef {
                match self {
                    $( Op::$variant $({ $( $field: _ ),* })? => {
                        static DEF: OpDef = OpDef {
                            variant: stringify!($variant),
                            operands: &[ $( Slot { name: stringify!($slot), kind: SlotKind::$skind } ),* ],
                            attrs: &[ $( $( stringify!($field) ),* )? ],
                            rules: $rules,
                        };
                        &DEF
                    } )*
                }
            }

            /// The row's `.kir` name (a family member's name), before
            /// aliases.
            #[allow(unused_variables)]
            pub(super) fn base_name(&self) -> &'static str {
                match self {
                    $( Op::$variant $({ $( $field ),* })? => {
                        $crate::ops::define::__op_name!(
                            [$($name)?] $( $( $(#[$fmeta])? $field ),* )?
                        )
                    } )*
                }
            }

            /// The op an alias names, and the alias.
            pub(super) fn alias_target(name: &str) -> Option<(&'static str, Alias)> {
                $(
                    let rules: Rules = $rules;
                    if let Some(a) = rules.aliases.iter().find(|a| a.name == name) {
                        return Some(($crate::ops::define::__lit_or_empty!($($name)?), *a));
                    }
                )*
                None
            }

            /// The op table as documentation, one entry per row in table
            /// order: what `kiln ops` prints and the README's op list is.
            pub fn catalogue() -> Vec<$crate::ops::def::CatalogueEntry> {
                vec![$(
                    $crate::ops::def::CatalogueEntry {
                        variant: stringify!($variant),
                        names: $crate::ops::define::__op_names!(
                            [$($name)?] $( $( $(#[$fmeta])? $field : $fty ),* )?
                        ).collect(),
                        doc: concat!($($doc, "\n"),*),
                        operands: vec![ $( Slot { name: stringify!($slot), kind: SlotKind::$skind } ),* ],
                        attrs: {
                            let attrs: Vec<Option<$crate::ops::def::CatalogueAttr>> = vec![ $( $(
                                $crate::ops::define::__attr_entry!(
                                    $(#[$fmeta])? $field : $fty $(= $fdefault)?
                                )
                            ),* )? ];
                            attrs.into_iter().flatten().collect()
                        },
                        rules: $rules,
                    }
                ),*]
            }

            /// Every `.kir` name, aliases and family members included.
            pub fn names() -> Vec<&'static str> {
                let mut names = Vec::new();
                $(
                    names.extend($crate::ops::define::__op_names!(
                        [$($name)?] $( $( $(#[$fmeta])? $field : $fty ),* )?
                    ));
                    let rules: Rules = $rules;
                    names.extend(rules.aliases.iter().map(|a| a.name));
                )*
                names
            }

            /// The fields to print, in order; defaults are left out unless
            /// the field is `#[shown]`.
            #[allow(unused_variables, unused_mut)]
            pub(super) fn field_attrs(&self) -> Vec<(&'static str, AttrValue)> {
                let mut out: Vec<(&'static str, AttrValue)> = Vec::new();
                match self {
                    $( Op::$variant $({ $( $field ),* })? => {
                        $( $(
                            $crate::ops::define::__attr_print!(
                                out, $(#[$fmeta])? $field : $fty $(= $fdefault)?
                            );
                        )* )?
                    } )*
                }
                out
            }

            /// Builds an op from its `.kir` name and attributes; every
            /// attribute must be consumed. `None` when no op has the name.
            #[allow(unused_variables, unused_mut)]
            pub(super) fn parse_named(name: &str, attrs: &mut Attrs) -> Result<Option<Op>> {
                $(
                    if $crate::ops::define::__op_matches!(
                        name, attrs, [$($name)?] $( $( $(#[$fmeta])? $field : $fty ),* )?
                    ) {
                        let op_name = name;
                        $( $(
                            let $field: $fty = $crate::ops::define::__attr_parse!(
                                attrs, op_name, $(#[$fmeta])? $field : $fty $(= $fdefault)?
                            );
                        )* )?
                        return Ok(Some(Op::$variant $({ $( $field ),* })?));
                    }
                )*
                Ok(None)
            }
        }
    };
}

/// The name expression of a row: its literal, or its kind field's name.
#[doc(hidden)]
macro_rules! __op_name {
    ([$name:literal] $($rest:tt)*) => {
        $name
    };
    ([] #[kind] $field:ident $(, $($rest:tt)*)?) => {
        $field.name()
    };
    ([] $(#[$m:ident])? $field:ident $(, $($rest:tt)*)?) => {
        $crate::ops::define::__op_name!([] $($($rest)*)?)
    };
}

/// A row's name literal, or `""` for a family.
#[doc(hidden)]
macro_rules! __lit_or_empty {
    () => {
        ""
    };
    ($name:literal) => {
        $name
    };
}

/// The names a row is written with: its literal, or its kind's members.
#[doc(hidden)]
macro_rules! __op_names {
    ([$name:literal] $($rest:tt)*) => {
        [$name].into_iter()
    };
    ([] #[kind] $field:ident : $fty:ty $(, $($rest:tt)*)?) => {
        <$fty>::ALL.iter().map(|k| k.name())
    };
    ([] $(#[$m:ident])? $field:ident : $fty:ty $(, $($rest:tt)*)?) => {
        $crate::ops::define::__op_names!([] $($($rest)*)?)
    };
}

/// Whether a row is the op `name` (for a family: a member is, the
/// selector attribute, if any, consumed).
#[doc(hidden)]
macro_rules! __op_matches {
    ($name:ident, $attrs:ident, [$lit:literal] $($rest:tt)*) => {
        $name == $lit
    };
    ($name:ident, $attrs:ident, [] #[kind] $field:ident : $fty:ty $(, $($rest:tt)*)?) => {
        <$fty>::ALL.iter().any(|k| k.name() == $name)
    };
    ($name:ident, $attrs:ident, [] $(#[$m:ident])? $field:ident : $fty:ty $(, $($rest:tt)*)?) => {
        $crate::ops::define::__op_matches!($name, $attrs, [] $($($rest)*)?)
    };
}

/// One attribute of a catalogue entry: its name, type and default as
/// written in the table (`None` for a family's `#[kind]` field).
#[doc(hidden)]
macro_rules! __attr_entry {
    (#[kind] $field:ident : $fty:ty) => {
        None::<$crate::ops::def::CatalogueAttr>
    };
    ($(#[$m:ident])? $field:ident : $fty:ty = $default:expr) => {
        Some($crate::ops::def::CatalogueAttr {
            name: stringify!($field),
            ty: stringify!($fty),
            default: Some(stringify!($default)),
        })
    };
    ($(#[$m:ident])? $field:ident : $fty:ty) => {
        Some($crate::ops::def::CatalogueAttr {
            name: stringify!($field),
            ty: stringify!($fty),
            default: None,
        })
    };
}

/// The documentation of one field of an op variant: for a family's
/// `#[kind]` field, which member the op is; for an attribute, its default
/// or that it is required (what it means is the variant's documentation).
#[doc(hidden)]
macro_rules! __field_doc {
    ($variant:ident, #[kind] $field:ident : $fty:ty) => {
        concat!(
            "Which [`",
            stringify!($fty),
            "`] this op is; the member's name is ",
            "the op's `.kir` name."
        )
    };
    ($variant:ident, $(#[$m:ident])? $field:ident : $fty:ty = $default:expr) => {
        concat!(
            "The `",
            stringify!($field),
            "` attribute of [`Op::",
            stringify!($variant),
            "`]; `",
            stringify!($default),
            "` when not written."
        )
    };
    ($variant:ident, $(#[$m:ident])? $field:ident : $fty:ty) => {
        concat!(
            "The `",
            stringify!($field),
            "` attribute of [`Op::",
            stringify!($variant),
            "`] (required)."
        )
    };
}

/// Reads one field from the attributes.
#[doc(hidden)]
macro_rules! __attr_parse {
    ($attrs:ident, $op:ident, #[kind] $field:ident : $fty:ty) => {
        <$fty>::from_name($op, $attrs)?
    };
    ($attrs:ident, $op:ident, $(#[shown])? $field:ident : $fty:ty = $default:expr) => {
        $attrs
            .parse::<$fty>($op, stringify!($field))?
            .unwrap_or_else(|| $default)
    };
    ($attrs:ident, $op:ident, $field:ident : $fty:ty) => {
        $attrs.require::<$fty>($op, stringify!($field))?
    };
}

/// Writes one field into the printed attributes.
#[doc(hidden)]
macro_rules! __attr_print {
    ($out:ident, #[kind] $field:ident : $fty:ty) => {
        if let Some((name, value)) = $field.selector() {
            $out.push((name, value));
        }
    };
    ($out:ident, #[shown] $field:ident : $fty:ty = $default:expr) => {
        if let Some(v) = AttrType::to_attr($field) {
            $out.push((stringify!($field), v));
        }
    };
    ($out:ident, $field:ident : $fty:ty = $default:expr) => {
        if *$field != $default {
            if let Some(v) = AttrType::to_attr($field) {
                $out.push((stringify!($field), v));
            }
        }
    };
    ($out:ident, $field:ident : $fty:ty) => {
        if let Some(v) = AttrType::to_attr($field) {
            $out.push((stringify!($field), v));
        }
    };
}

/// Declares the enum of a family's members: each member's `.kir` name (the
/// lower-case identifier in parentheses, with the value of a selector
/// attribute where several members share a name) and its const
/// definition. The table writes the rows of the primitive pointwise
/// families inside exported callback macros (`unary_ops!`, `binary_ops!`)
/// that invoke this one, so that other crates generate code from the same
/// rows (the tracing API's methods).
macro_rules! define_kind {
    (
        $(#[doc = $edoc:literal])*
        $kind:ident : $def:ident {
            $(
                $(#[doc = $doc:literal])*
                $variant:ident ( $name:ident $([$sel:ident = $selv:literal])? ) => $value:expr
            ),* $(,)?
        }
    ) => {
        $(#[doc = $edoc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $kind {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl $kind {
            /// Every member, in table order.
            pub const ALL: &'static [$kind] = &[$($kind::$variant),*];

            /// The member's `.kir` name.
            pub fn name(self) -> &'static str {
                match self {
                    $( $kind::$variant => stringify!($name), )*
                }
            }

            /// The member's definition.
            pub fn def(self) -> &'static $def {
                match self {
                    $( $kind::$variant => {
                        static DEF: $def = $value;
                        &DEF
                    } )*
                }
            }

            /// The selector attribute this member prints, where several
            /// members share its name (div's `rounding_mode`).
            pub fn selector(self) -> Option<(&'static str, AttrValue)> {
                match self {
                    $( $kind::$variant => $crate::ops::define::__selector!($([$sel = $selv])?), )*
                }
            }

            /// The member written `name` with these attributes (the
            /// selector, when several members share the name, consumed).
            pub fn from_name(name: &str, attrs: &mut Attrs) -> Result<$kind> {
                let members: Vec<$kind> =
                    $kind::ALL.iter().copied().filter(|k| k.name() == name).collect();
                select_member(name, attrs, &members, |k| k.selector())
            }
        }
    };
}

#[doc(hidden)]
macro_rules! __selector {
    () => {
        None
    };
    ([$sel:ident = $selv:literal]) => {
        Some((stringify!($sel), AttrValue::Str($selv.to_string())))
    };
}

pub(crate) use {
    __attr_entry, __attr_parse, __attr_print, __field_doc, __lit_or_empty, __op_matches, __op_name,
    __op_names, __selector, define_kind, define_ops,
};
