//! Weights bound to a compiled program: [`Bound`].
//!
//! A model's weights are program inputs (the program text holds none, so
//! the program cache keys on the text alone), passed again on every run.
//! The CPU backend packs an f32 weight that feeds a product into the
//! panels its microkernel reads (`crate::packed`) and keeps the copy while
//! the weight's bytes live, so a caller that holds its weights holds every
//! packed one twice: GPT-2 small's 622 MiB of weights took 1,170 MiB.
//!
//! Binding them to the program instead, as ONNX Runtime and OpenVINO hold
//! a model's initializers, lets the backend keep a weight *only* in the
//! form its products read: where every use of a parameter in the plan is
//! the right operand of a product that packs it (in one view), the weight
//! is packed when it is bound and the binding keeps the packed copy
//! instead ([`Executable::pack_bound`]). The caller's handle is dropped
//! then, so a caller that gives its weights up (and keeps no other handle
//! to their storage) holds each weight once, in one form or the other.
//! Weights are packed one at a time, each original going before the next
//! is packed: binding needs one weight's bytes more than the weights.
//!
//! A packed weight's entry holds a *stand-in*: the packed copy's bytes
//! under the weight's type, so that the run's checks and buffers treat it
//! as any input; the executor routes the products that read it to the
//! packed copy ([`crate::execute::Launcher::matmul_bound`]), and the plan
//! has no other reader (that is what binding checked). The products are
//! the ones the same program computes on the same weights passed on every
//! run: the same bits.
//!
//! A weight the caller still holds elsewhere (a `kiln::nn` store, whose
//! compiled models bind handles to its tensors; programs of several
//! lengths bound to one model's weights) is packed through the cache
//! instead: its copy is shared by every program that multiplies by those
//! bytes, within `KILN_PACK_LIMIT`, as when weights are passed on every
//! run; dropping every other handle then leaves the packed copy alone.
//!
//! A run that fails on an index out of range names the bad index by
//! running the interpreter on its inputs (`crate::execute`); with weights
//! bound packed, the stand-ins are what it reads, so an index computed
//! from a packed weight's values (an argmax of logits fed to a gather)
//! would be named from the wrong values, or the error would say only that
//! the device found one. Indices from the caller's inputs are named as
//! before.
//!
//! What binding does not change: a weight read any other way (GPT-2's
//! token embedding, which its output layer multiplies by too; a norm's
//! scale) stays as given, shared with the caller; `KILN_PACK_LIMIT=0`
//! (packing off) packs nothing here either; backends without packed
//! products (the interpreter, CUDA) bind weights as they are.

use std::sync::Arc;
use std::time::Duration;

use kiln_ir::{Error, ErrorKind, Result};

use crate::backend::Executable;
use crate::packed::Packed;
use crate::tensor::Tensor;

/// The packed copies a binding keeps, by parameter.
#[derive(Clone, Default)]
pub struct Packing {
    by_param: Vec<Option<Arc<Packed>>>,
}

impl Packing {
    /// The copies, by parameter (`None`: kept as given).
    pub(crate) fn new(by_param: Vec<Option<Arc<Packed>>>) -> Packing {
        Packing { by_param }
    }

    /// By parameter (past the end: none).
    pub(crate) fn by_param(&self) -> &[Option<Arc<Packed>>] {
        &self.by_param
    }

    /// How many weights are held packed.
    pub fn weights(&self) -> usize {
        self.by_param.iter().flatten().count()
    }

    /// Their packed bytes.
    pub fn bytes(&self) -> usize {
        self.by_param.iter().flatten().map(|p| p.bytes()).sum()
    }

    /// An error where something is packed: for a backend that runs no
    /// packed products.
    pub(crate) fn require_none(&self) -> Result<()> {
        match self.weights() {
            0 => Ok(()),
            _ => Err(no_packed_steps()),
        }
    }
}

/// The error of a backend asked to run a weight bound in packed form that
/// it has no packed products (or embeddings) for.
pub(crate) fn no_packed_steps() -> Error {
    Error::new(
        ErrorKind::Backend,
        "this backend has no products for weights bound in packed form",
    )
}

/// The error of a step that would read a weight bound in packed form as
/// if it held the weight's values: binding packs only weights that no
/// such step reads (`CheckedPlan::packed_params`).
pub(crate) fn read_unpacked() -> Error {
    Error::new(
        ErrorKind::Backend,
        "a weight bound in packed form reached a step that does not read it packed",
    )
}

impl std::fmt::Debug for Packing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packing")
            .field("weights", &self.weights())
            .field("bytes", &self.bytes())
            .finish()
    }
}

/// A compiled program with some of its inputs bound for good (a model's
/// weights): it runs on the others.
#[derive(Clone)]
pub struct Bound {
    program: Arc<dyn Executable>,
    /// Per parameter: the bound tensor (a weight as given, or the stand-in
    /// of one held packed), or `None` for an input given on every run.
    bound: Vec<Option<Tensor>>,
    packing: Packing,
}

impl Bound {
    /// Binds `weights` (one entry per parameter, `None` for the inputs
    /// given on every run) to `program`, packing those its backend
    /// computes products from ([`Executable::pack_bound`]). The weights
    /// are taken: a caller that keeps no other handle to a packed weight's
    /// storage holds it packed only. Shapes and dtypes are checked by the
    /// first run, as any input's.
    pub fn new(program: Arc<dyn Executable>, mut weights: Vec<Option<Tensor>>) -> Result<Bound> {
        let packing = program.pack_bound(&mut weights)?;
        Ok(Bound {
            program,
            bound: weights,
            packing,
        })
    }

    /// The parameters given on every run, in order.
    pub fn free_params(&self) -> impl Iterator<Item = usize> + '_ {
        self.bound
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.is_none().then_some(i))
    }

    /// What is held packed.
    pub fn packing(&self) -> &Packing {
        &self.packing
    }

    /// Every parameter's input: `inputs` (those given on every run, in
    /// order) where nothing is bound.
    fn all(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let free = self.free_params().count();
        if inputs.len() != free {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "the program takes {free} input{} besides its {} bound ones, {} were given",
                    if free == 1 { "" } else { "s" },
                    self.bound.len() - free,
                    inputs.len()
                ),
            ));
        }
        let mut given = inputs.into_iter();
        Ok(self
            .bound
            .iter()
            .map(|b| match b {
                Some(t) => t.clone(),
                None => given.next().expect("counted above"),
            })
            .collect())
    }

    /// Runs on the inputs given on every run, in parameter order.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let all = self.all(inputs.to_vec())?;
        self.program.run_bound(all, false, &self.packing)
    }

    /// Runs as [`Bound::run`], taking the inputs
    /// ([`Executable::run_donated`]; bound weights are never written).
    pub fn run_donated(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let all = self.all(inputs)?;
        self.program.run_bound(all, true, &self.packing)
    }

    /// Each step's median time over `runs` runs
    /// ([`Executable::step_times`]).
    pub fn step_times(
        &self,
        inputs: &[Tensor],
        runs: usize,
    ) -> Option<Result<Vec<(String, Duration)>>> {
        match self.all(inputs.to_vec()) {
            Ok(all) => self.program.step_times_bound(&all, runs, &self.packing),
            Err(e) => Some(Err(e)),
        }
    }

    /// The times of `runs` runs on a device with its own memory
    /// ([`Executable::device_times`]); `None` where a run's time is that
    /// time, or weights are held packed (only host memory packs them).
    pub fn device_times(&self, inputs: &[Tensor], runs: usize) -> Option<Result<Vec<Duration>>> {
        if self.packing.weights() > 0 {
            return None;
        }
        match self.all(inputs.to_vec()) {
            Ok(all) => self.program.device_times(&all, runs),
            Err(e) => Some(Err(e)),
        }
    }

    /// The program.
    pub fn program(&self) -> &Arc<dyn Executable> {
        &self.program
    }
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bound")
            .field("params", &self.bound.len())
            .field("free", &self.free_params().count())
            .field("packing", &self.packing)
            .finish_non_exhaustive()
    }
}
