//! Kiln's one error type.
//!
//! Every fallible operation in Kiln — parsing, inference, passes, backends,
//! tensor files — returns [`Error`]. An error has a [`ErrorKind`] that callers
//! can match on, a message written for people, and, where the error comes
//! from text, the [`Location`] it points at. Where PyTorch raises an error for
//! the same situation, the message is PyTorch's text, so users can search for
//! it.

use std::fmt;
use std::sync::Arc;

/// What went wrong, coarsely: the class of an error, stable for matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Malformed `.kir` text: a bad token or an unexpected one.
    Syntax,
    /// An op name that Kiln does not know.
    UnknownOp,
    /// A missing, unknown, or ill-typed attribute, or one out of range.
    Attribute,
    /// Wrong number of operands or results.
    Arity,
    /// A value used before it is defined, or defined twice.
    Value,
    /// Shapes that do not broadcast, views that are impossible, and the like.
    Shape,
    /// A dimension index out of range.
    Dim,
    /// A dtype an op does not accept (PyTorch: "not implemented for 'X'").
    DType,
    /// Type promotion has no answer for these dtypes.
    Promotion,
    /// A result that cannot be cast to the requested output dtype.
    Cast,
    /// A dtype that can only be stored, viewed and concatenated.
    ShellDType,
    /// Bad device strings, device mix-ups, unavailable devices.
    Device,
    /// Memory-format and stride errors.
    Layout,
    /// A written type that differs from the inferred one.
    TypeMismatch,
    /// A broken structural invariant found by the verifier.
    Verifier,
    /// Reading or writing files.
    Io,
    /// A corrupt, truncated or mismatched tensor file.
    TensorFile,
    /// A missing or wrongly typed input tensor.
    Input,
    /// A backend cannot run this program, or it failed while running it.
    Backend,
    /// A request for more memory or work than Kiln allows.
    Resource,
    /// A value error at run time (integer division by zero, ...).
    Runtime,
    /// Something PyTorch itself cannot do consistently; Kiln refuses it.
    Unsupported,
}

/// A place in a source text, 1-based.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The name the text was given when parsed (usually its path).
    pub file: Arc<str>,
    /// The line, counting from 1.
    pub line: u32,
    /// The column, counting from 1 in characters, not bytes.
    pub col: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Kiln's error: a kind, a message, and optionally where in the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    location: Option<Location>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: error: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Error {
    /// An error of this kind with this message and no location.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            location: None,
        }
    }

    /// The class of the error, for callers to match on.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without the location prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where in the source text the error points, if it comes from text.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// Attaches a location unless the error already has a more precise one.
    pub fn at(mut self, location: Location) -> Self {
        if self.location.is_none() {
            self.location = Some(location);
        }
        self
    }

    /// Prefixes the message with context such as the op that failed.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::new(ErrorKind::Io, err.to_string())
    }
}

/// `std::result::Result` with Kiln's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand for building an error of a kind from format arguments.
#[macro_export]
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::Error::new($crate::ErrorKind::$kind, format!($($arg)*))
    };
}

/// Returns early with an error of a kind.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::err!($kind, $($arg)*))
    };
}

/// Returns early with an error unless a condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $kind:ident, $($arg:tt)*) => {
        if !$cond {
            $crate::bail!($kind, $($arg)*);
        }
    };
}
