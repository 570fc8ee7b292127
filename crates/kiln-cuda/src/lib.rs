//! `kiln-cuda`: Kiln's CUDA backend.
//!
//! A module is planned into fused kernels by [`kiln_passes::plan`] (the
//! same plan the CPU backend runs), each kernel becomes a CUDA C function
//! ([`codegen`]), NVRTC compiles the translation unit to PTX ([`nvrtc`],
//! cached by source), and the CUDA driver loads and runs it ([`device`]).
//! Generating and compiling need no GPU (only `libnvrtc`), so `kiln dump
//! --backend cuda` works anywhere NVRTC is; running needs a GPU and its
//! driver, and says so when either is missing.
//!
//! The backend computes on one GPU: the device of the program's CUDA
//! values (`cuda:N`), or `cuda:0` for a program declared on the CPU, which
//! it runs like PyTorch runs a model moved with `.cuda()`. Results come
//! back to the host, labelled with the device the program declares.
//!
//! | module | owns |
//! |---|---|
//! | [`codegen`] | kernel → CUDA C: grid-stride pointwise loops, block reductions, op semantics |
//! | [`steps`] | plan steps that run as one generated kernel each (their launch shapes, arguments) |
//! | [`attention`] | `scaled_dot_product_attention` steps → fused flash-style CUDA C kernels |
//! | [`spatial`] | convolution and pooling steps → direct CUDA C kernels |
//! | [`blas`] | matmul steps as cuBLAS calls (the column-major geometry) |
//! | [`math`] | kiln-math's f32 functions as device functions |
//! | [`nvrtc`] | CUDA C → PTX, the module cache |
//! | [`device`] | the CUDA driver as a launcher: contexts, device memory, launches |

pub mod attention;
pub mod blas;
pub mod codegen;
pub mod device;
pub mod gather;
mod implicit_gemm;
pub mod math;
pub mod nvrtc;
pub mod scan;
pub mod spatial;
pub mod steps;

use std::sync::OnceLock;
use std::time::Duration;

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, Device, Error, ErrorKind, Module, Result};
use kiln_passes::plan::KernelPlan;
use kiln_passes::plan::{self as planner, Target, TargetPolicy};
use kiln_runtime::backend::check_all_runnable;
use kiln_runtime::execute::{CheckedPlan, execute, profile_steps, time_steps};
use kiln_runtime::{Backend, Executable, Listing, ListingLanguage, Tensor};

use kiln_passes::plan::kernel_dtype;

/// The CUDA backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cuda {
    /// The compute capability to generate PTX for (`90` for sm_90); by
    /// default the GPU's, or [`nvrtc::DEFAULT_ARCH`] without one.
    pub arch: Option<u32>,
}

/// What generated CUDA kernels compute: every op but the decomposed
/// composites, on every dtype but complex and the shell dtypes (those run
/// on the reference interpreter inside the plan).
pub struct CudaTarget {
    device: Device,
}

impl Target for CudaTarget {
    fn device(&self) -> Device {
        self.device
    }

    fn compiles(&self, func: &Func, inst: &Inst) -> bool {
        inst.results.iter().all(|r| kernel_dtype(func.ty(*r).dtype))
            && inst
                .value_operands()
                .all(|v| kernel_dtype(func.ty(v).dtype))
    }

    fn has_matmul(&self, dtype: DType) -> bool {
        matches!(
            dtype,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128
        )
    }

    /// Few long rows are split over blocks by the generated code itself
    /// ([`codegen`]), so the plan does not split reductions.
    fn policy(&self) -> TargetPolicy {
        TargetPolicy { split: None }
    }
}

/// The GPU a program computes on: its CUDA values' device, `cuda:0` for a
/// CPU program. More than one GPU is refused.
fn program_gpu(func: &Func) -> Result<Device> {
    check_all_runnable(func)?;
    let mut gpu: Option<Device> = None;
    for (i, value) in func.values.iter().enumerate() {
        let d = value.ty.device;
        if !d.is_cuda() {
            continue;
        }
        match gpu {
            Some(g) if g.index() != d.index() => {
                return Err(Error::new(
                    ErrorKind::Device,
                    format!(
                        "%{} is on {d} but the program computes on {g}: the cuda backend runs one GPU per program",
                        func.name_of(kiln_ir::ValueId(i as u32))
                    ),
                ));
            }
            _ => gpu = Some(d),
        }
    }
    match gpu {
        Some(g) => Ok(g),
        None => Device::cuda(0),
    }
}

/// A compiled CUDA program: PTX, loaded on its GPU at the first run.
struct Program {
    checked: CheckedPlan,
    ordinal: usize,
    ptx: std::sync::Arc<str>,
    /// The architecture the PTX is for.
    arch: u32,
    loaded: OnceLock<std::result::Result<device::Loaded, Error>>,
}

impl Program {
    /// The kernels on the GPU, loaded at the first run.
    fn loaded(&self) -> Result<&device::Loaded> {
        let loaded = self
            .loaded
            .get_or_init(|| device::load(self.ordinal, &self.ptx, &self.checked.plan));
        loaded.as_ref().map_err(Clone::clone)
    }
}

impl Executable for Program {
    fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        execute(self.loaded()?, &self.checked, inputs)
    }

    fn listings(&self) -> Result<Vec<Listing>> {
        let plan = &self.checked.plan;
        Ok(vec![
            Listing::plan(plan),
            Listing {
                stage: "cuda",
                title: format!("CUDA C of @{}", plan.name),
                language: ListingLanguage::CudaC,
                text: Cuda::source(plan),
            },
            Listing {
                stage: "ptx",
                title: format!("PTX of @{} for compute_{}", plan.name, self.arch),
                language: ListingLanguage::Ptx,
                text: self.ptx.to_string(),
            },
        ])
    }

    fn code_bytes(&self) -> usize {
        self.ptx.len()
    }

    fn step_times(
        &self,
        inputs: &[Tensor],
        runs: usize,
    ) -> Option<Result<Vec<(String, Duration)>>> {
        Some(
            self.loaded()
                .and_then(|loaded| profile_steps(loaded, &self.checked, inputs, runs)),
        )
    }

    fn device_times(&self, inputs: &[Tensor], runs: usize) -> Option<Result<Vec<Duration>>> {
        Some(
            self.loaded()
                .and_then(|loaded| time_steps(loaded, &self.checked, inputs, runs))
                .map(|(times, _)| times),
        )
    }
}

impl Cuda {
    /// The kernel plan for a laid-out module.
    pub fn plan(&self, module: &Module) -> Result<KernelPlan> {
        let gpu = program_gpu(module.entry()?)?;
        planner::plan(module, &CudaTarget { device: gpu })
    }

    /// The CUDA C of a plan's kernels (one translation unit): its fused
    /// kernels, then its steps' kernels ([`steps`]).
    pub fn source(plan: &KernelPlan) -> String {
        let kernels: Vec<_> = plan.kernels().collect();
        let mut source = codegen::module_source(&kernels);
        for a in steps::kernels(plan) {
            source.push('\n');
            source += &a.source;
        }
        source
    }

    /// The architecture PTX is generated for.
    fn arch(&self, ordinal: usize) -> u32 {
        self.arch.unwrap_or_else(|| {
            if device::driver_present() {
                device::compute_capability(ordinal).unwrap_or(nvrtc::DEFAULT_ARCH)
            } else {
                nvrtc::DEFAULT_ARCH
            }
        })
    }
}

impl Backend for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn stages(&self) -> &'static [&'static str] {
        &["fuse", "cuda", "ptx"]
    }

    /// Attention in f32 and f64 runs as one generated kernel
    /// ([`attention`]) rather than as its expansion.
    fn keeps(&self) -> Option<kiln_passes::decompose::Keep> {
        Some(attention::fused)
    }

    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>> {
        let plan = self.plan(module)?;
        let ordinal = plan.device.index().unwrap_or(0) as usize;
        let source = Cuda::source(&plan);
        let arch = self.arch(ordinal);
        let ptx = nvrtc::compile(&source, arch)?;
        Ok(Box::new(Program {
            checked: CheckedPlan::new(module.entry()?.clone(), plan, module.default_dtype)?,
            ordinal,
            ptx,
            arch,
            loaded: OnceLock::new(),
        }))
    }
}
