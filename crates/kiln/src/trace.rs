//! Tracing: running a Rust closure over lazy [`Tensor`]s to build a graph.
//!
//! While a closure runs under [`trace`], every tensor op appends a typed
//! instruction to the function being built. An op that fails (a shape
//! mismatch, an unsupported dtype) does not panic: it poisons its result, and
//! [`trace`] returns the first error with the op that caused it.

use std::cell::RefCell;

use kiln_ir::graph::FuncBuilder;
use kiln_ir::infer::InferCtx;
use kiln_ir::ops::{AttrValue, Attrs};
use kiln_ir::{
    DType, Device, Error, ErrorKind, MemoryFormat, Module, Op, Operand, Result, TensorType,
    TypeLayout, ValueId,
};

use crate::defaults::{default_device, default_dtype};
use crate::tensor::Tensor;

/// The description of a traced function's input: shape, dtype, device and
/// layout (a memory format or explicit strides).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    shape: Vec<i64>,
    dtype: DType,
    device: Option<Device>,
    layout: SpecLayout,
    name: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum SpecLayout {
    Format(MemoryFormat),
    Strides(Vec<i64>),
}

impl TensorSpec {
    /// A contiguous input on the default device.
    pub fn new(shape: impl Into<Vec<i64>>, dtype: DType) -> TensorSpec {
        TensorSpec {
            shape: shape.into(),
            dtype,
            device: None,
            layout: SpecLayout::Format(MemoryFormat::Contiguous),
            name: None,
        }
    }

    /// Puts the input on `device` (otherwise: the default device in effect
    /// when the spec is traced).
    pub fn device(mut self, device: Device) -> TensorSpec {
        self.device = Some(device);
        self
    }

    /// Lays the input out in a memory format (contiguous unless set),
    /// replacing strides given before.
    pub fn memory_format(mut self, format: MemoryFormat) -> TensorSpec {
        self.layout = SpecLayout::Format(format);
        self
    }

    /// Lays the input out with explicit strides, in elements (one per dim),
    /// replacing a memory format given before.
    pub fn strides(mut self, strides: impl Into<Vec<i64>>) -> TensorSpec {
        self.layout = SpecLayout::Strides(strides.into());
        self
    }

    /// The parameter's name in the IR (`%name`); `arg0`, `arg1`, ... otherwise.
    pub fn name(mut self, name: impl Into<String>) -> TensorSpec {
        self.name = Some(name.into());
        self
    }

    /// The IR type this spec stands for.
    pub fn tensor_type(&self) -> Result<TensorType> {
        let strides = match &self.layout {
            SpecLayout::Format(f) => f.strides(&self.shape)?,
            SpecLayout::Strides(s) => {
                if s.len() != self.shape.len() {
                    return Err(Error::new(
                        ErrorKind::Layout,
                        format!(
                            "{} strides given for a tensor of rank {}",
                            s.len(),
                            self.shape.len()
                        ),
                    ));
                }
                s.clone()
            }
        };
        let device = self.device.unwrap_or_else(default_device).for_tensor();
        Ok(TensorType::new(self.shape.clone(), self.dtype)
            .on(device)
            .with_layout(TypeLayout::Strided(strides)))
    }
}

pub(crate) struct TraceState {
    pub(crate) builder: FuncBuilder,
    pub(crate) error: Option<Error>,
    pub(crate) id: u64,
}

thread_local! {
    static CURRENT: RefCell<Option<TraceState>> = const { RefCell::new(None) };
    static NEXT_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// Runs `f` on the trace in progress, if any.
pub(crate) fn with_trace<R>(f: impl FnOnce(Option<&mut TraceState>) -> R) -> R {
    CURRENT.with(|c| f(c.borrow_mut().as_mut()))
}

/// Appends a single-result instruction to the current trace and returns
/// its result. Errors poison the result and are kept for [`trace`] to
/// return.
pub(crate) fn record(op: Op, operands: Vec<Input>, out_dtype: Option<DType>) -> Tensor {
    let name = op.name();
    let mut results = record_all(op, operands, out_dtype, Some(1));
    match results.pop() {
        Some(t) if results.is_empty() => t,
        _ => {
            poison(Error::new(
                ErrorKind::Arity,
                format!("{name} does not have exactly one result"),
            ));
            Tensor::poisoned(current_id())
        }
    }
}

fn current_id() -> u64 {
    with_trace(|state| state.map_or(0, |s| s.id))
}

/// Keeps `error` as the trace's first error.
fn poison(error: Error) {
    with_trace(|state| {
        if let Some(state) = state {
            if state.error.is_none() {
                state.error = Some(error);
            }
        }
    })
}

/// Appends an instruction and returns its results (`expected` of them,
/// poisoned, when it fails and the count is known).
pub(crate) fn record_all(
    op: Op,
    operands: Vec<Input>,
    out_dtype: Option<DType>,
    expected: Option<usize>,
) -> Vec<Tensor> {
    with_trace(|state| {
        let Some(state) = state else {
            return vec![Tensor::poisoned(0); expected.unwrap_or(1)];
        };
        let id = state.id;
        let poisoned = || vec![Tensor::poisoned(id); expected.unwrap_or(1)];
        let mut values = Vec::with_capacity(operands.len());
        for o in operands {
            match o {
                Input::Tensor(t) if t.trace != id => {
                    if state.error.is_none() {
                        state.error = Some(Error::new(
                            ErrorKind::Value,
                            format!("{}: operand comes from another trace", op.name()),
                        ));
                    }
                    return poisoned();
                }
                Input::Tensor(t) => match t.value {
                    Some(v) => values.push(Operand::Value(v)),
                    None => return poisoned(),
                },
                Input::Scalar(s) => values.push(Operand::Scalar(s)),
                Input::None => values.push(Operand::None),
            }
        }
        if state.error.is_some() {
            return poisoned();
        }
        let name = op.name();
        match state.builder.push_multi(op, values, out_dtype) {
            Ok(vs) => vs
                .into_iter()
                .map(|v| Tensor {
                    trace: id,
                    value: Some(v),
                })
                .collect(),
            Err(e) => {
                state.error = Some(e.context(name));
                poisoned()
            }
        }
    })
}

/// Records any op of the op table on operands in its slot order (a list
/// slot's tensors in place, `Input::None` for an absent optional tensor):
/// the typed way to use an op that has no method. Returns its results.
///
/// ```
/// use kiln::{apply, trace, DType, Input, Op, TensorSpec};
/// let traced = trace(&[TensorSpec::new([2, 3], DType::F32)], |xs| {
///     apply(Op::Silu, &[Input::from(&xs[0])]).remove(0)
/// })?;
/// assert!(traced.to_string().contains("silu"));
/// # Ok::<(), kiln::Error>(())
/// ```
pub fn apply(op: Op, operands: &[Input]) -> Vec<Tensor> {
    record_all(op, operands.to_vec(), None, None)
}

/// Records an op given by its `.kir` name and attributes, parsed as `.kir`
/// parses them (`apply_named("gelu", &[x], &[("approximate", "tanh".into())])`).
pub fn apply_named(name: &str, operands: &[Input], attrs: &[(&str, AttrValue)]) -> Vec<Tensor> {
    let entries = attrs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    match Op::parse(name, Attrs::new(entries)) {
        Ok(op) => apply(op, operands),
        Err(e) => {
            poison(e);
            vec![Tensor::poisoned(current_id())]
        }
    }
}

/// The type of a traced value, if the tensor is live in the current trace.
pub(crate) fn type_of(t: &Tensor) -> Option<TensorType> {
    with_trace(|state| {
        let state = state?;
        (state.id == t.trace).then(|| t.value.map(|v| state.builder.ty(v).clone()))?
    })
}

/// An operand of a traced op: a tensor, a scalar literal, or `None` for an
/// absent optional tensor.
#[derive(Clone, Debug)]
pub enum Input {
    /// A traced tensor.
    Tensor(Tensor),
    /// A scalar literal (its category takes part in promotion).
    Scalar(kiln_ir::Scalar),
    /// An absent optional tensor (`none`).
    None,
}

/// What tensor methods accept as their other operand (a tensor or a
/// scalar); the older name of [`Input`].
pub type TensorOrScalar = Input;

impl From<&Tensor> for Input {
    fn from(t: &Tensor) -> Self {
        Input::Tensor(t.clone())
    }
}

impl From<Tensor> for Input {
    fn from(t: Tensor) -> Self {
        Input::Tensor(t)
    }
}

impl From<Option<&Tensor>> for Input {
    fn from(t: Option<&Tensor>) -> Self {
        t.map_or(Input::None, Input::from)
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl From<$t> for Input {
            fn from(v: $t) -> Self {
                Input::Scalar(kiln_ir::Scalar::from(v))
            }
        }
    )*};
}
scalar_operand!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl From<kiln_ir::Scalar> for Input {
    fn from(s: kiln_ir::Scalar) -> Self {
        Input::Scalar(s)
    }
}

/// What a traced closure returns: one tensor or several.
pub trait IntoOutputs {
    /// The tensors, in return order.
    fn into_outputs(self) -> Vec<Tensor>;
}

impl IntoOutputs for Tensor {
    fn into_outputs(self) -> Vec<Tensor> {
        vec![self]
    }
}

impl IntoOutputs for Vec<Tensor> {
    fn into_outputs(self) -> Vec<Tensor> {
        self
    }
}

impl<const N: usize> IntoOutputs for [Tensor; N] {
    fn into_outputs(self) -> Vec<Tensor> {
        self.into()
    }
}

macro_rules! tuple_outputs {
    ($($name:ident),+) => {
        impl IntoOutputs for ($(tuple_outputs!(@ty $name),)+) {
            #[allow(non_snake_case)]
            fn into_outputs(self) -> Vec<Tensor> {
                let ($($name,)+) = self;
                vec![$($name),+]
            }
        }
    };
    (@ty $name:ident) => { Tensor };
}
tuple_outputs!(A, B);
tuple_outputs!(A, B, C);
tuple_outputs!(A, B, C, D);

/// A traced program: a module with one function, `@main`.
#[derive(Clone, Debug, PartialEq)]
pub struct Traced {
    module: Module,
}

impl Traced {
    /// The traced module (no passes have run on it).
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The traced module, by value.
    pub fn into_module(self) -> Module {
        self.module
    }
}

impl std::fmt::Display for Traced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.module.fmt(f)
    }
}

struct ClearOnDrop;

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// Traces `f` over inputs described by `specs` into a typed graph.
///
/// The closure receives one lazy [`Tensor`] per spec and returns one tensor
/// or several. The default dtype and device in effect when `trace` is called
/// apply to the whole trace.
///
/// ```
/// use kiln::{trace, DType, TensorSpec};
/// let traced = trace(&[TensorSpec::new([4, 8], DType::F32).name("x")], |xs| (&xs[0] * 2.0).relu())?;
/// assert!(traced.to_string().contains("relu"));
/// # Ok::<(), kiln::Error>(())
/// ```
pub fn trace<R: IntoOutputs>(
    specs: &[TensorSpec],
    f: impl FnOnce(&[Tensor]) -> R,
) -> Result<Traced> {
    if with_trace(|s| s.is_some()) {
        return Err(Error::new(ErrorKind::Value, "kiln::trace cannot be nested"));
    }
    let id = NEXT_ID.with(|n| n.replace(n.get() + 1));
    let ctx = InferCtx {
        default_dtype: default_dtype(),
    };
    let mut builder = FuncBuilder::new("main", ctx);
    let mut inputs = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let name = spec.name.clone().unwrap_or_else(|| format!("arg{i}"));
        let value = builder.param(Some(&name), spec.tensor_type()?)?;
        inputs.push(Tensor {
            trace: id,
            value: Some(value),
        });
    }
    CURRENT.with(|c| {
        *c.borrow_mut() = Some(TraceState {
            builder,
            error: None,
            id,
        })
    });
    let _clear = ClearOnDrop;
    let outputs = f(&inputs).into_outputs();
    let state = CURRENT
        .with(|c| c.borrow_mut().take())
        .expect("the trace is still in progress");
    if let Some(err) = state.error {
        return Err(err);
    }
    let mut returns: Vec<ValueId> = Vec::with_capacity(outputs.len());
    for t in outputs {
        match (t.trace == id, t.value) {
            (true, Some(v)) => returns.push(v),
            _ => {
                return Err(Error::new(
                    ErrorKind::Value,
                    "the traced closure returned a tensor from another trace",
                ));
            }
        }
    }
    let func = state.builder.finish(returns, None)?;
    Ok(Traced {
        module: Module::single(func, ctx.default_dtype),
    })
}

impl Traced {
    /// Runs the traced program on the reference interpreter, with no passes:
    /// the answer every compiled version is checked against.
    pub fn interpret(&self, inputs: &[kiln_runtime::Tensor]) -> Result<Vec<kiln_runtime::Tensor>> {
        kiln_runtime::interp::run(&self.module, inputs)
    }

    /// Compiles for a device with the backend that runs it.
    pub fn compile(&self, device: Device) -> Result<crate::Compiled> {
        crate::Compiler::new(crate::BackendKind::for_device(device)?).compile(&self.module)
    }
}
