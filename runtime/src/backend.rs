//! The backend interface: what compiling and running a program asks of a
//! backend, and the input checks every backend shares.
//!
//! A backend takes a module after the module passes (promote, layout,
//! decompose, cse, dce, optimize) and turns it into an [`Executable`]. The
//! reference [`Interpreter`] is one backend; the Cranelift and CUDA crates
//! provide the others.

use std::time::Duration;

use kiln_ir::graph::Func;
use kiln_ir::{Device, Error, ErrorKind, Module, Result, TypeLayout};

use crate::bind::Packing;
use crate::tensor::Tensor;

/// Something that compiles a module for one kind of device.
pub trait Backend: Send + Sync {
    /// The name `--backend` takes.
    fn name(&self) -> &'static str;

    /// The stages after the module passes whose output `kiln dump --after`
    /// can show (e.g. `fuse` for the kernel plan), in order.
    fn stages(&self) -> &'static [&'static str] {
        &[]
    }

    /// The composite instructions this backend runs whole, as one step of
    /// its own (decomposition leaves them); by default none.
    fn keeps(&self) -> Option<kiln_passes::decompose::Keep> {
        None
    }

    /// Compiles the entry function of a laid-out module.
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>>;
}

/// A compiled program.
pub trait Executable: Send + Sync {
    /// Runs the program on inputs in parameter order (logical values; each
    /// is laid out as its parameter declares). Results come in return order.
    fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>>;

    /// Runs as [`Executable::run`], taking the inputs: a backend may write
    /// a result in the storage of an input no one else shares (a key/value
    /// cache updated by `index_put`, see `kiln_passes::plan::donate`)
    /// instead of a new buffer. By default, `run`.
    fn run_donated(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.run(&inputs)
    }

    /// The backend's own code, for `kiln dump --after all`: made when
    /// asked (programs keep no text), so it can fail as compiling can.
    fn listings(&self) -> Result<Vec<Listing>> {
        Ok(Vec::new())
    }

    /// Bytes of generated code (machine code, PTX) this program keeps
    /// alive: what caching it costs. Code shared with other programs is
    /// counted in each.
    fn code_bytes(&self) -> usize {
        0
    }

    /// For a backend whose memory is not the host's: the times of `runs`
    /// runs with the inputs already in device memory and the results left
    /// there, i.e. without the copies [`Executable::run`] makes. `None`
    /// where `run` itself is that time.
    fn device_times(&self, _inputs: &[Tensor], _runs: usize) -> Option<Result<Vec<Duration>>> {
        None
    }

    /// The median time of each step of the program's plan over `runs`
    /// runs, in plan order, each with its description (a kernel, a matmul,
    /// an interpreted island); `None` for a backend without a plan.
    fn step_times(
        &self,
        _inputs: &[Tensor],
        _runs: usize,
    ) -> Option<Result<Vec<(String, Duration)>>> {
        None
    }

    /// For weights being bound to the program ([`crate::bind::Bound`];
    /// one entry per parameter, `None` for an input given on every run):
    /// packs, for good, each weight that feeds only products this backend
    /// computes from a packed copy, and puts in its entry a stand-in (the
    /// copy's bytes under the weight's type, which only those products
    /// read), dropping the weight's own handle. By default it packs
    /// nothing.
    fn pack_bound(&self, _weights: &mut [Option<Tensor>]) -> Result<Packing> {
        Ok(Packing::default())
    }

    /// Runs as [`Executable::run`] (as [`Executable::run_donated`] with
    /// `donate`), the inputs whose parameters have a copy in `packing`
    /// being the stand-ins [`Executable::pack_bound`] made.
    fn run_bound(
        &self,
        inputs: Vec<Tensor>,
        donate: bool,
        packing: &Packing,
    ) -> Result<Vec<Tensor>> {
        packing.require_none()?;
        match donate {
            true => self.run_donated(inputs),
            false => self.run(&inputs),
        }
    }

    /// [`Executable::step_times`] with the stand-ins of `packing`, as
    /// [`Executable::run_bound`].
    fn step_times_bound(
        &self,
        inputs: &[Tensor],
        runs: usize,
        packing: &Packing,
    ) -> Option<Result<Vec<(String, Duration)>>> {
        match packing.require_none() {
            Ok(()) => self.step_times(inputs, runs),
            Err(e) => Some(Err(e)),
        }
    }
}

/// The language of a [`Listing`], which decides how it is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListingLanguage {
    /// Kiln's kernel plan.
    Plan,
    /// Kiln IR (`.kir`), e.g. the constant function computed once.
    Kir,
    /// Cranelift IR.
    Clif,
    /// Machine instructions.
    Machine,
    /// CUDA C.
    CudaC,
    /// PTX assembly.
    Ptx,
}

/// A piece of generated code with a title.
#[derive(Clone, Debug)]
pub struct Listing {
    /// The stage (one of [`Backend::stages`]) that produced it.
    pub stage: &'static str,
    /// What the code is, as `kiln dump` heads it (e.g. `kernel plan of
    /// @main`, `CUDA C of @main`).
    pub title: String,
    /// The language of `text`, which decides how it is coloured.
    pub language: ListingLanguage,
    /// The code itself.
    pub text: String,
}

impl Listing {
    /// The `fuse` stage's listing: the kernel plan every backend compiles.
    pub fn plan(plan: &kiln_passes::plan::KernelPlan) -> Listing {
        Listing {
            stage: "fuse",
            title: format!("kernel plan of @{}", plan.name),
            language: ListingLanguage::Plan,
            text: plan.to_string(),
        }
    }
}

/// The reference interpreter as a backend: "compiling" keeps the module.
pub struct Interpreter;

struct Interpreted(Module);

impl Backend for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>> {
        check_all_runnable(module.entry()?)?;
        Ok(Box::new(Interpreted(module.clone())))
    }
}

impl Executable for Interpreted {
    fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        crate::interp::run(&self.0, inputs)
    }
}

/// Checks that a device has data a host backend can compute on (host
/// memory stands in for CUDA memory in the interpreter; meta has no data).
pub fn check_runnable(device: Device) -> Result<()> {
    if device.is_meta() {
        return Err(Error::new(
            ErrorKind::Backend,
            "tensors on the meta device have no data: the program can be checked but not run",
        ));
    }
    if !device.device_type().has_backend() {
        return Err(Error::new(
            ErrorKind::Backend,
            format!("no Kiln backend runs tensors on {device}"),
        ));
    }
    Ok(())
}

/// Checks that every value of a function lives on a device with data.
pub fn check_all_runnable(func: &Func) -> Result<()> {
    for (i, value) in func.values.iter().enumerate() {
        check_runnable(value.ty.device)
            .map_err(|e| e.context(format!("%{}", func.name_of(kiln_ir::ValueId(i as u32)))))?;
    }
    Ok(())
}

/// Checks inputs against a function's parameters (count, shape, dtype) and
/// lays each out as its parameter declares.
pub fn bind_inputs(func: &Func, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    check_input_count(&func.name, func.params.len(), inputs.len())?;
    (0..inputs.len())
        .map(|i| bind_input(func, i, &inputs[i]))
        .collect()
}

/// Checks that `@name`, of `params` parameters, was given as many inputs.
pub fn check_input_count(name: &str, params: usize, given: usize) -> Result<()> {
    if given != params {
        return Err(Error::new(
            ErrorKind::Input,
            format!("@{name} takes {params} inputs, {given} were given"),
        ));
    }
    Ok(())
}

/// Checks input `index` against its parameter (shape, dtype, a device
/// with data) and lays it out as the parameter declares.
pub fn bind_input(func: &Func, index: usize, input: &Tensor) -> Result<Tensor> {
    let p = func.params[index];
    let ty = func.ty(p);
    if input.shape() != ty.shape.as_slice() || input.dtype() != ty.dtype {
        return Err(Error::new(
            ErrorKind::Input,
            format!(
                "input %{} must be {ty}, but a tensor of shape {} and dtype {} was given",
                func.name_of(p),
                kiln_ir::view::format_shape(input.shape()),
                input.dtype()
            ),
        ));
    }
    check_runnable(ty.device)?;
    let input = input.clone().with_device(ty.device);
    match &ty.layout {
        TypeLayout::Strided(s) if s.as_slice() != input.strides() || input.offset() != 0 => {
            input.with_strides(s)
        }
        _ => Ok(input),
    }
}
