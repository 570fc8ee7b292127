//! The `.kir` parser: text to a typed, verified [`Module`].
//!
//! A hand-written lexer and recursive-descent parser following IR.md §1.
//! Every error carries `file:line:col` and says what was expected; no input
//! makes it panic. Each instruction is typed as it is read (the builder runs
//! inference), so a type error points at the instruction that causes it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Location, Result};
use crate::graph::{FuncBuilder, Module, NewInst, Operand, ValueId};
use crate::infer::InferCtx;
use crate::layout::MemoryFormat;
use crate::ops::{AttrValue, Attrs, Op};
use crate::promotion::DefaultDType;
use crate::scalar::Scalar;
use crate::types::{TensorType, TypeLayout};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Value(String),
    Func(String),
    Int(i128),
    Float(f64),
    Str(String),
    Punct(&'static str),
    Eof,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Value(s) => format!("'%{s}'"),
            Tok::Func(s) => format!("'@{s}'"),
            Tok::Int(i) => format!("'{i}'"),
            Tok::Float(x) => format!("'{x}'"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    col: u32,
    file: Arc<str>,
}

impl<'a> Lexer<'a> {
    fn loc(&self) -> Location {
        Location {
            file: self.file.clone(),
            line: self.line,
            col: self.col,
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_char2(&self) -> Option<char> {
        let mut it = self.src[self.pos..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn skip_trivia(&mut self) {
        loop {
            match self.peek_char() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') if self.peek_char2() == Some('/') => {
                    while let Some(c) = self.peek_char() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        while self.peek_char().is_some_and(&f) {
            self.bump();
        }
        &self.src[start..self.pos]
    }

    fn error(&self, loc: Location, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Syntax, message).at(loc)
    }

    fn next(&mut self) -> Result<(Tok, Location)> {
        self.skip_trivia();
        let loc = self.loc();
        let Some(c) = self.peek_char() else {
            return Ok((Tok::Eof, loc));
        };
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        let tok = match c {
            '%' | '@' => {
                self.bump();
                let name = self.take_while(is_name);
                if name.is_empty() {
                    return Err(self.error(loc, format!("expected a name after '{c}'")));
                }
                if c == '%' {
                    Tok::Value(name.to_string())
                } else {
                    Tok::Func(name.to_string())
                }
            }
            '"' => {
                self.bump();
                let mut s = String::new();
                loop {
                    match self.bump() {
                        Some('"') => break,
                        Some('\n') | None => return Err(self.error(loc, "unterminated string")),
                        Some(c) => s.push(c),
                    }
                }
                Tok::Str(s)
            }
            '-' if self.peek_char2() == Some('>') => {
                self.bump();
                self.bump();
                Tok::Punct("->")
            }
            '-' if self.peek_char2().is_some_and(|c| c.is_ascii_digit()) => {
                self.number(loc.clone())?
            }
            '-' if self.src[self.pos..].starts_with("-inf") => {
                self.bump();
                let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
                if word != "inf" {
                    return Err(self.error(loc, format!("unexpected '-{word}'")));
                }
                Tok::Float(f64::NEG_INFINITY)
            }
            c if c.is_ascii_digit() => self.number(loc.clone())?,
            c if c.is_ascii_alphabetic() || c == '_' => Tok::Ident(
                self.take_while(|c| c.is_ascii_alphanumeric() || c == '_')
                    .to_string(),
            ),
            _ => {
                let punct = ["(", ")", "{", "}", "[", "]", "<", ">", ",", ":", "="]
                    .into_iter()
                    .find(|p| p.starts_with(c));
                match punct {
                    Some(p) => {
                        self.bump();
                        Tok::Punct(p)
                    }
                    None => return Err(self.error(loc, format!("unexpected character {c:?}"))),
                }
            }
        };
        Ok((tok, loc))
    }

    fn number(&mut self, loc: Location) -> Result<Tok> {
        let start = self.pos;
        if self.peek_char() == Some('-') {
            self.bump();
        }
        self.take_while(|c| c.is_ascii_digit());
        let mut is_float = false;
        if self.peek_char() == Some('.') {
            is_float = true;
            self.bump();
            self.take_while(|c| c.is_ascii_digit());
        }
        if matches!(self.peek_char(), Some('e' | 'E')) {
            let sign_or_digit = self.peek_char2();
            if sign_or_digit.is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+') {
                is_float = true;
                self.bump();
                if matches!(self.peek_char(), Some('-' | '+')) {
                    self.bump();
                }
                if self.take_while(|c| c.is_ascii_digit()).is_empty() {
                    return Err(self.error(loc, "expected digits in the exponent"));
                }
            }
        }
        let text = &self.src[start..self.pos];
        if is_float {
            text.parse()
                .map(Tok::Float)
                .map_err(|_| self.error(loc, format!("malformed float '{text}'")))
        } else {
            text.parse::<i128>()
                .map(Tok::Int)
                .map_err(|_| Error::new(ErrorKind::Attribute, "int too big to convert").at(loc))
        }
    }

    /// Reads the `4x8xf32` part of a tensor type as one word.
    fn raw_word(&mut self) -> (&'a str, Location) {
        self.skip_trivia();
        let loc = self.loc();
        (
            self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'),
            loc,
        )
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    peeked: Option<(Tok, Location)>,
    ctx: InferCtx,
}

/// Parses `.kir` text; `file` names it in error messages.
pub fn parse_module(file: &str, text: &str, default_dtype: DefaultDType) -> Result<Module> {
    let mut p = Parser {
        lex: Lexer {
            src: text,
            pos: 0,
            line: 1,
            col: 1,
            file: Arc::from(file),
        },
        peeked: None,
        ctx: InferCtx { default_dtype },
    };
    let mut module = Module::new(default_dtype);
    loop {
        match p.peek()?.0 {
            Tok::Eof => break,
            _ => {
                let func = p.func()?;
                if module.funcs.iter().any(|f| f.name == func.name) {
                    let loc = func
                        .location
                        .clone()
                        .expect("parsed functions have a location");
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!("@{} is defined twice", func.name),
                    )
                    .at(loc));
                }
                module.funcs.push(func);
            }
        }
    }
    if module.funcs.is_empty() {
        return Err(Error::new(ErrorKind::Syntax, "expected at least one 'func'").at(p.lex.loc()));
    }
    Ok(module)
}

/// Parses `.kir` bytes, reporting invalid UTF-8 with its position.
pub fn parse_bytes(file: &str, bytes: &[u8], default_dtype: DefaultDType) -> Result<Module> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_module(file, text, default_dtype),
        Err(e) => {
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("prefix is valid");
            let line = valid.matches('\n').count() as u32 + 1;
            let col = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
            Err(
                Error::new(ErrorKind::Syntax, "the file is not valid UTF-8 text").at(Location {
                    file: Arc::from(file),
                    line,
                    col,
                }),
            )
        }
    }
}

impl<'a> Parser<'a> {
    fn peek(&mut self) -> Result<&(Tok, Location)> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex.next()?);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    fn next(&mut self) -> Result<(Tok, Location)> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lex.next(),
        }
    }

    fn unexpected(&self, expected: &str, found: &Tok, loc: &Location) -> Error {
        Error::new(
            ErrorKind::Syntax,
            format!("expected {expected}, found {}", found.describe()),
        )
        .at(loc.clone())
    }

    fn expect_punct(&mut self, p: &'static str) -> Result<Location> {
        let (tok, loc) = self.next()?;
        if tok == Tok::Punct(p) {
            Ok(loc)
        } else {
            Err(self.unexpected(&format!("'{p}'"), &tok, &loc))
        }
    }

    fn eat_punct(&mut self, p: &'static str) -> Result<bool> {
        if self.peek()?.0 == Tok::Punct(p) {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn func(&mut self) -> Result<crate::graph::Func> {
        let (tok, loc) = self.next()?;
        if tok != Tok::Ident("func".into()) {
            return Err(self.unexpected("'func'", &tok, &loc));
        }
        let (tok, name_loc) = self.next()?;
        let Tok::Func(name) = tok else {
            return Err(self.unexpected("a function name such as '@main'", &tok, &name_loc));
        };
        let mut b = FuncBuilder::new(name, self.ctx);
        b.set_location(loc.clone());
        let mut scope: HashMap<String, ValueId> = HashMap::new();
        self.expect_punct("(")?;
        if !self.eat_punct(")")? {
            loop {
                let (tok, ploc) = self.next()?;
                let Tok::Value(pname) = tok else {
                    return Err(self.unexpected("a parameter such as '%x'", &tok, &ploc));
                };
                self.expect_punct(":")?;
                let ty = self.tensor_type(true)?;
                if scope.contains_key(&pname) {
                    return Err(
                        Error::new(ErrorKind::Value, format!("%{pname} is defined twice")).at(ploc),
                    );
                }
                let id = b.param(Some(&pname), ty).map_err(|e| e.at(ploc.clone()))?;
                scope.insert(pname, id);
                if self.eat_punct(")")? {
                    break;
                }
                self.expect_punct(",")?;
            }
        }
        self.expect_punct("->")?;
        let declared = self.result_types()?;
        self.expect_punct("{")?;
        loop {
            let (tok, loc) = self.next()?;
            match tok {
                Tok::Value(result) => self.instruction(&mut b, &mut scope, result, loc)?,
                Tok::Ident(kw) if kw == "return" => {
                    let mut returns = Vec::new();
                    if matches!(self.peek()?.0, Tok::Value(_)) {
                        loop {
                            let (tok, vloc) = self.next()?;
                            let Tok::Value(v) = tok else {
                                return Err(self.unexpected("a value to return", &tok, &vloc));
                            };
                            returns.push(lookup(&scope, &v, &vloc)?);
                            if !self.eat_punct(",")? {
                                break;
                            }
                        }
                    }
                    self.expect_punct("}")?;
                    return b.finish(returns, Some(declared)).map_err(|e| e.at(loc));
                }
                other => {
                    return Err(self.unexpected(
                        "an instruction '%name = op ...' or 'return'",
                        &other,
                        &loc,
                    ));
                }
            }
        }
    }

    fn instruction(
        &mut self,
        b: &mut FuncBuilder,
        scope: &mut HashMap<String, ValueId>,
        first: String,
        first_loc: Location,
    ) -> Result<()> {
        let mut results = vec![(first, first_loc)];
        while self.eat_punct(",")? {
            let (tok, loc) = self.next()?;
            let Tok::Value(name) = tok else {
                return Err(self.unexpected("a result such as '%y'", &tok, &loc));
            };
            results.push((name, loc));
        }
        self.expect_punct("=")?;
        let (tok, op_loc) = self.next()?;
        let Tok::Ident(op_name) = tok else {
            return Err(self.unexpected("an op name", &tok, &op_loc));
        };
        if !crate::ops::Op::is_name(&op_name) {
            return Err(
                Error::new(ErrorKind::UnknownOp, format!("unknown op '{op_name}'")).at(op_loc),
            );
        }
        let mut groups: Vec<Group> = Vec::new();
        let starts_operand = |t: &Tok| {
            matches!(
                t,
                Tok::Value(_) | Tok::Int(_) | Tok::Float(_) | Tok::Punct("[")
            ) || matches!(t, Tok::Ident(s) if matches!(s.as_str(), "true" | "false" | "inf" | "nan" | "complex" | "none"))
        };
        if starts_operand(&self.peek()?.0) {
            loop {
                let (_, loc) = self.peek()?.clone();
                if self.eat_punct("[")? {
                    let mut list = Vec::new();
                    loop {
                        list.push(self.operand(scope)?);
                        if self.eat_punct("]")? {
                            break;
                        }
                        self.expect_punct(",")?;
                    }
                    groups.push(Group::List(list, loc));
                } else {
                    groups.push(Group::One(self.operand(scope)?));
                }
                if !self.eat_punct(",")? {
                    break;
                }
            }
        }
        let mut attr_entries = Vec::new();
        let mut tensor_attrs = Vec::new();
        let mut out_dtype = None;
        if self.eat_punct("{")? && !self.eat_punct("}")? {
            loop {
                let (tok, aloc) = self.next()?;
                let Tok::Ident(name) = tok else {
                    return Err(self.unexpected("an attribute name", &tok, &aloc));
                };
                self.expect_punct("=")?;
                let value = self.attr_value()?;
                let given_twice = attr_entries
                    .iter()
                    .chain(&tensor_attrs)
                    .any(|(n, _): &(String, AttrValue)| *n == name);
                if name == "out_dtype" {
                    match value {
                        AttrValue::DType(d) => out_dtype = Some(d),
                        other => {
                            return Err(Error::new(
                                ErrorKind::Attribute,
                                format!(
                                    "{op_name}: attribute 'out_dtype' must be a dtype, got {other}"
                                ),
                            )
                            .at(aloc));
                        }
                    }
                } else if given_twice {
                    return Err(Error::new(
                        ErrorKind::Attribute,
                        format!("{op_name}: attribute '{name}' given twice"),
                    )
                    .at(aloc));
                } else if matches!(value, AttrValue::Value(_)) {
                    tensor_attrs.push((name, value));
                } else {
                    attr_entries.push((name, value));
                }
                if self.eat_punct("}")? {
                    break;
                }
                self.expect_punct(",")?;
            }
        }
        let written = if self.eat_punct(":")? {
            self.result_types()?
        } else {
            Vec::new()
        };
        let op = Op::parse(&op_name, Attrs::new(attr_entries)).map_err(|e| e.at(op_loc.clone()))?;
        let mut operands = flatten_groups(&op, groups).map_err(|e| e.at(op_loc.clone()))?;
        for (name, value) in tensor_attrs {
            let AttrValue::Value(v) = value else {
                continue;
            };
            // The older `{min = %lo}` spelling of an optional tensor operand.
            let slot = op
                .def()
                .operands
                .iter()
                .position(|s| s.name == name && s.kind == crate::ops::SlotKind::Optional)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::Attribute,
                        format!(
                            "{op_name}: attribute '{name}' must be a number or boolean, got %{v}"
                        ),
                    )
                    .at(op_loc.clone())
                })?;
            while operands.len() <= slot {
                operands.push(Operand::None);
            }
            if operands[slot] != Operand::None {
                return Err(Error::new(
                    ErrorKind::Attribute,
                    format!("{op_name}: '{name}' is given twice"),
                )
                .at(op_loc));
            }
            operands[slot] = Operand::Value(lookup(scope, &v, &op_loc)?);
        }
        for (name, loc) in &results {
            if scope.contains_key(name) {
                return Err(
                    Error::new(ErrorKind::Value, format!("%{name} is defined twice"))
                        .at(loc.clone()),
                );
            }
        }
        let names: Vec<String> = results.iter().map(|(n, _)| n.clone()).collect();
        let ids = b.push_full(
            NewInst::new(op, operands)
                .out_dtype(out_dtype)
                .names(names.clone())
                .location(Some(op_loc.clone()))
                .written(written),
        )?;
        for (name, id) in names.into_iter().zip(ids) {
            scope.insert(name, id);
        }
        Ok(())
    }

    /// Result types: one type, or `(T1, T2, ...)`.
    fn result_types(&mut self) -> Result<Vec<TensorType>> {
        if !self.eat_punct("(")? {
            return Ok(vec![self.tensor_type(false)?]);
        }
        let mut types = Vec::new();
        if !self.eat_punct(")")? {
            loop {
                types.push(self.tensor_type(false)?);
                if self.eat_punct(")")? {
                    break;
                }
                self.expect_punct(",")?;
            }
        }
        Ok(types)
    }

    fn operand(&mut self, scope: &HashMap<String, ValueId>) -> Result<Operand> {
        let (tok, loc) = self.next()?;
        match tok {
            Tok::Value(v) => Ok(Operand::Value(lookup(scope, &v, &loc)?)),
            Tok::Ident(s) if s == "none" => Ok(Operand::None),
            other => self.scalar_from(other, loc).map(Operand::Scalar),
        }
    }

    fn scalar_from(&mut self, tok: Tok, loc: Location) -> Result<Scalar> {
        match tok {
            Tok::Int(i) => Scalar::from_i128(i).map_err(|e| e.at(loc)),
            Tok::Float(x) => Ok(Scalar::Float(x)),
            Tok::Ident(s) => match s.as_str() {
                "true" => Ok(Scalar::Bool(true)),
                "false" => Ok(Scalar::Bool(false)),
                "inf" => Ok(Scalar::Float(f64::INFINITY)),
                "nan" => Ok(Scalar::Float(f64::NAN)),
                "complex" => {
                    self.expect_punct("(")?;
                    let re = self.real()?;
                    self.expect_punct(",")?;
                    let im = self.real()?;
                    self.expect_punct(")")?;
                    Ok(Scalar::Complex(re, im))
                }
                _ => Err(self.unexpected("a value or a literal", &Tok::Ident(s), &loc)),
            },
            other => Err(self.unexpected("a value or a literal", &other, &loc)),
        }
    }

    fn real(&mut self) -> Result<f64> {
        let (tok, loc) = self.next()?;
        match tok {
            Tok::Int(i) => Ok(i as f64),
            Tok::Float(x) => Ok(x),
            Tok::Ident(s) if s == "inf" => Ok(f64::INFINITY),
            Tok::Ident(s) if s == "nan" => Ok(f64::NAN),
            other => Err(self.unexpected("a real number", &other, &loc)),
        }
    }

    fn attr_value(&mut self) -> Result<AttrValue> {
        let (tok, loc) = self.next()?;
        match tok {
            Tok::Str(s) => Ok(AttrValue::Str(s)),
            Tok::Value(v) => Ok(AttrValue::Value(v)),
            Tok::Punct("[") => {
                let mut list = Vec::new();
                if !self.eat_punct("]")? {
                    loop {
                        let (tok, iloc) = self.next()?;
                        match tok {
                            Tok::Int(i) => list.push(i64::try_from(i).map_err(|_| {
                                Error::new(
                                    ErrorKind::Attribute,
                                    format!("{i} does not fit in 64 bits"),
                                )
                                .at(iloc.clone())
                            })?),
                            other => return Err(self.unexpected("an integer", &other, &iloc)),
                        }
                        if self.eat_punct("]")? {
                            break;
                        }
                        self.expect_punct(",")?;
                    }
                }
                Ok(AttrValue::List(list))
            }
            Tok::Ident(s) => {
                if let Some(d) = DType::from_name(&s) {
                    return Ok(AttrValue::DType(d));
                }
                if let Ok(mf) = s.parse::<MemoryFormat>() {
                    return Ok(AttrValue::MemoryFormat(mf));
                }
                if matches!(s.as_str(), "true" | "false" | "inf" | "nan" | "complex") {
                    return self.scalar_from(Tok::Ident(s), loc).map(AttrValue::Scalar);
                }
                self.device_after(s, loc).map(AttrValue::Device)
            }
            other => self.scalar_from(other, loc).map(AttrValue::Scalar),
        }
    }

    /// A device whose type name was just read (`cuda` or `cuda:1`). The
    /// index is read as written, so `cuda:01` is refused as PyTorch does.
    fn device_after(&mut self, name: String, loc: Location) -> Result<Device> {
        let mut text = name;
        if self.peeked.is_none() && self.lex.peek_char() == Some(':') {
            self.lex.bump();
            text.push(':');
            text.push_str(self.lex.raw_word().0);
        }
        text.parse::<Device>().map_err(|e| e.at(loc))
    }

    /// `tensor<DIMS x DTYPE [, DEVICE] [, LAYOUT]>`. A parameter's type with no
    /// layout is contiguous; other types without one claim nothing.
    fn tensor_type(&mut self, is_param: bool) -> Result<TensorType> {
        let (tok, loc) = self.next()?;
        if tok != Tok::Ident("tensor".into()) {
            return Err(self.unexpected("a type 'tensor<...>'", &tok, &loc));
        }
        self.expect_punct("<")?;
        let (word, wloc) = self.lex.raw_word();
        let (shape, dtype_name) =
            split_dims(word).map_err(|m| Error::new(ErrorKind::Syntax, m).at(wloc.clone()))?;
        let dtype = DType::from_name(dtype_name).ok_or_else(|| {
            Error::new(
                ErrorKind::Syntax,
                format!("expected a dtype such as f32, i64 or bool in the tensor type, found '{dtype_name}'"),
            )
            .at(wloc.clone())
        })?;
        let mut ty = TensorType::new(shape, dtype);
        while self.eat_punct(",")? {
            let (tok, iloc) = self.next()?;
            let Tok::Ident(word) = tok else {
                return Err(self.unexpected("a device or a layout", &tok, &iloc));
            };
            match word.as_str() {
                "strides" => {
                    self.expect_punct("=")?;
                    match self.attr_value()? {
                        AttrValue::List(l) => ty.layout = TypeLayout::Strided(l),
                        other => {
                            return Err(Error::new(
                                ErrorKind::Syntax,
                                format!("expected a list of strides, found {other}"),
                            )
                            .at(iloc));
                        }
                    }
                }
                "sparse_coo" => ty.layout = TypeLayout::SparseCoo,
                "contiguous" | "channels_last" | "channels_last_3d" => {
                    let mf: MemoryFormat = word.parse()?;
                    let strides = mf.strides(&ty.shape).map_err(|e| e.at(iloc.clone()))?;
                    ty.layout = TypeLayout::Strided(strides);
                }
                _ => ty.device = self.device_after(word, iloc)?.for_tensor(),
            }
        }
        self.expect_punct(">")?;
        if is_param && ty.layout == TypeLayout::Unspecified {
            ty = ty.contiguous();
        }
        if let TypeLayout::Strided(s) = &ty.layout {
            if s.len() != ty.rank() {
                return Err(Error::new(
                    ErrorKind::Layout,
                    format!(
                        "{} strides given for a tensor of rank {}",
                        s.len(),
                        ty.rank()
                    ),
                )
                .at(loc));
            }
        }
        Ok(ty)
    }
}

/// Operands as written: one, or a bracketed list.
enum Group {
    One(Operand),
    List(Vec<Operand>, Location),
}

/// The written operands in slot order: a bracketed list must stand where
/// the op has its list slot; an op whose only slot is a list also takes
/// its operands unbracketed (`cat %a, %b`, the older form).
fn flatten_groups(op: &Op, groups: Vec<Group>) -> Result<Vec<Operand>> {
    let slots = op.def().operands;
    let list_slot = slots.iter().position(|s| s.kind.is_list());
    let lists = groups
        .iter()
        .filter(|g| matches!(g, Group::List(..)))
        .count();
    if list_slot == Some(0) && slots.len() == 1 && lists == 0 {
        return Ok(groups
            .into_iter()
            .filter_map(|g| match g {
                Group::One(o) => Some(o),
                Group::List(..) => None,
            })
            .collect());
    }
    let mut out = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        match g {
            Group::One(o) => out.push(o),
            Group::List(list, loc) => {
                if list_slot != Some(i) || lists > 1 {
                    return Err(Error::new(
                        ErrorKind::Arity,
                        format!(
                            "{}: operand {} is a list, but the op takes none there",
                            op.name(),
                            i + 1
                        ),
                    )
                    .at(loc));
                }
                out.extend(list);
            }
        }
    }
    Ok(out)
}

fn lookup(scope: &HashMap<String, ValueId>, name: &str, loc: &Location) -> Result<ValueId> {
    scope.get(name).copied().ok_or_else(|| {
        Error::new(ErrorKind::Value, format!("%{name} is not defined")).at(loc.clone())
    })
}

/// Splits `4x8xf32` into dims and a dtype name (dtype names may contain 'x').
fn split_dims(word: &str) -> std::result::Result<(Vec<i64>, &str), String> {
    let mut dims = Vec::new();
    let mut rest = word;
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || rest.as_bytes().get(digits) != Some(&b'x') {
            break;
        }
        let dim: i64 = rest[..digits]
            .parse()
            .map_err(|_| format!("dimension '{}' is too large", &rest[..digits]))?;
        dims.push(dim);
        rest = &rest[digits + 1..];
    }
    if rest.is_empty() {
        return Err("expected a dtype after the dimensions".to_string());
    }
    Ok((dims, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_dims_from_dtype_names_with_x() {
        assert_eq!(split_dims("4x8xf32").unwrap(), (vec![4, 8], "f32"));
        assert_eq!(split_dims("2xf4e2m1fnx2").unwrap(), (vec![2], "f4e2m1fnx2"));
        assert_eq!(split_dims("i64").unwrap(), (vec![], "i64"));
        assert!(split_dims("4x").is_err());
    }
}
