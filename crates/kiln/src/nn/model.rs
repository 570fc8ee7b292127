//! A traced model and its weights: [`TracedModel`] (from
//! [`VarStore::trace`](super::VarStore::trace)) and [`CompiledModel`].
//!
//! The traced program's `@main` takes the user's inputs first, then one
//! input per parameter, named as in the checkpoint. These types keep the
//! weights (shared, not copied: host tensors share storage) and append
//! them to the user's inputs on every run, so callers pass only their own
//! inputs, and the program text, which holds no weights, is what the
//! program cache keys on. A compiled model binds them to its program
//! ([`Compiled::bind`]), which on the CPU keeps a weight that only feeds
//! products in their packed form alone.

use std::sync::Arc;

use kiln_ir::{Device, Error, ErrorKind, Module, Result};
use kiln_runtime::Tensor as HostTensor;

use crate::compile::{Compiled, Compiler};
use crate::trace::Traced;
use kiln_runtime::bind::Bound;

/// A traced model: the program and the weights its parameter inputs take.
#[derive(Clone)]
pub struct TracedModel {
    traced: Traced,
    inputs: usize,
    weights: Arc<[HostTensor]>,
}

impl TracedModel {
    pub(crate) fn new(traced: Traced, inputs: usize, weights: Vec<HostTensor>) -> TracedModel {
        TracedModel {
            traced,
            inputs,
            weights: weights.into(),
        }
    }

    /// The traced program (user inputs, then the parameters).
    pub fn traced(&self) -> &Traced {
        &self.traced
    }

    /// The traced module.
    pub fn module(&self) -> &Module {
        self.traced.module()
    }

    /// How many inputs the caller passes (the parameters follow them).
    pub fn num_inputs(&self) -> usize {
        self.inputs
    }

    /// The parameters' names, in input order (after the caller's inputs).
    pub fn param_names(&self) -> Vec<&str> {
        match self.traced.module().entry() {
            Ok(func) => func.params[self.inputs.min(func.params.len())..]
                .iter()
                .map(|p| func.name_of(*p))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The weights, in input order.
    pub fn weights(&self) -> &[HostTensor] {
        &self.weights
    }

    /// Runs on the reference interpreter with no passes (the answer compiled
    /// programs are checked against).
    pub fn interpret(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
        self.traced
            .interpret(&bind(self.inputs, &self.weights, inputs)?)
    }

    /// Compiles for a device with the backend that runs it.
    pub fn compile(&self, device: Device) -> Result<CompiledModel> {
        CompiledModel::new(self.traced.compile(device)?, self.inputs, &self.weights)
    }

    /// Compiles with a given compiler (to choose the backend:
    /// `Compiler::new(BackendKind::Interp)`).
    pub fn compile_with(&self, compiler: &Compiler) -> Result<CompiledModel> {
        CompiledModel::new(
            compiler.compile(self.traced.module())?,
            self.inputs,
            &self.weights,
        )
    }
}

impl std::fmt::Display for TracedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.traced.fmt(f)
    }
}

impl std::fmt::Debug for TracedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracedModel")
            .field("inputs", &self.inputs)
            .field("params", &self.weights.len())
            .finish_non_exhaustive()
    }
}

/// A compiled model with its weights bound ([`Compiled::bind`]), ready to
/// run on the caller's inputs. On the CPU, a weight that only feeds
/// products is held in the packed form they read, in place of the
/// original: once the [`TracedModel`] and the store it came from are
/// dropped, each weight is held once.
#[derive(Clone, Debug)]
pub struct CompiledModel {
    compiled: Compiled,
    bound: Bound,
}

impl CompiledModel {
    fn new(compiled: Compiled, inputs: usize, weights: &[HostTensor]) -> Result<CompiledModel> {
        let mut all: Vec<Option<HostTensor>> = vec![None; inputs];
        all.extend(weights.iter().cloned().map(Some));
        let bound = compiled.bind(all)?;
        Ok(CompiledModel { compiled, bound })
    }

    /// Runs on the caller's inputs (in the order their specs were given to
    /// `VarStore::trace`); results come in return order.
    pub fn run(&self, inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
        self.bound.run(inputs)
    }

    /// Runs as [`CompiledModel::run`], taking the inputs: results that
    /// update an input (a key/value cache) may be written into its storage
    /// ([`Compiled::run_donated`]). The weights are never written.
    pub fn run_donated(&self, inputs: Vec<HostTensor>) -> Result<Vec<HostTensor>> {
        self.bound.run_donated(inputs)
    }

    /// The compiled program (its inputs: the caller's, then the weights).
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// The program with its weights bound.
    pub fn bound(&self) -> &Bound {
        &self.bound
    }
}

/// The caller's inputs followed by the weights.
fn bind(expected: usize, weights: &[HostTensor], inputs: &[HostTensor]) -> Result<Vec<HostTensor>> {
    if inputs.len() != expected {
        return Err(Error::new(
            ErrorKind::Input,
            format!(
                "the model takes {expected} input{} (its weights are bound), got {}",
                if expected == 1 { "" } else { "s" },
                inputs.len()
            ),
        ));
    }
    Ok(inputs.iter().chain(weights).cloned().collect())
}
