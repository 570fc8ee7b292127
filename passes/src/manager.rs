//! The pass manager: an ordered list of named passes run function by
//! function, the module's pipeline stage, re-layout after a rebuild, the
//! verifier after each pass, and a hook to observe the module after any
//! pass (for `kiln dump --after NAME`) with the time each pass took.
//!
//! A pass transforms one function at a time and says what stage it needs
//! and what stage it leaves ([`Pass::requires`], [`Pass::produces`]). The
//! manager keeps the module's [`Stage`]: once functions are laid out, it
//! lays out again every function a later pass rebuilt, so passes never
//! guess whether layouts exist and never re-run the layout pass themselves.

use std::time::{Duration, Instant};

use kiln_ir::graph::{Func, Stage};
use kiln_ir::infer::InferCtx;
use kiln_ir::verify::verify_func;
use kiln_ir::{Error, ErrorKind, Module, Result};

/// What a pass knows of the module it runs in.
#[derive(Clone, Copy, Debug)]
pub struct PassCx {
    /// Inference settings.
    pub ctx: InferCtx,
    /// The stage the module is at.
    pub stage: Stage,
}

impl PassCx {
    /// Whether values have layouts (the layout pass ran).
    pub fn laid_out(&self) -> bool {
        self.stage >= Stage::LaidOut
    }
}

/// A transformation of functions. A pass keeps each function typed; the
/// manager lays it out again (at [`Stage::LaidOut`]) and verifies it.
pub trait Pass {
    /// The name `kiln dump --after NAME` uses.
    fn name(&self) -> &'static str;

    /// The stage the module must be at.
    fn requires(&self) -> Stage {
        Stage::Typed
    }

    /// The stage the module is at afterwards (`None`: unchanged).
    fn produces(&self) -> Option<Stage> {
        None
    }

    /// Transforms one function.
    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()>;

    /// What the last run has to say (the optimizer's report and
    /// explanations), shown by `kiln dump`.
    fn take_notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What the manager reports after each pass.
pub struct PassEvent<'a> {
    /// The pass's name.
    pub name: &'static str,
    /// The module after it.
    pub module: &'a Module,
    /// How long it took (re-layout and verification included).
    pub elapsed: Duration,
    /// What it had to say.
    pub notes: Vec<String>,
}

/// An ordered pipeline of passes.
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
    verify: bool,
}

impl PassManager {
    /// An empty pipeline.
    pub fn new() -> PassManager {
        PassManager {
            passes: Vec::new(),
            verify: true,
        }
    }

    /// Kiln's pipeline up to (not including) fusion: promote, layout,
    /// decompose, optimize (without constant folding), cse, dce.
    pub fn standard() -> PassManager {
        PassManager::standard_with(crate::optimize::OptimizeConfig::default())
    }

    /// The standard pipeline with these optimizer settings.
    pub fn standard_with(optimize: crate::optimize::OptimizeConfig) -> PassManager {
        PassManager::standard_for(optimize, None)
    }

    /// The standard pipeline with these optimizer settings, for a backend
    /// that runs the composites `keep` selects whole (decomposition leaves
    /// them).
    pub fn standard_for(
        optimize: crate::optimize::OptimizeConfig,
        keep: Option<crate::decompose::Keep>,
    ) -> PassManager {
        PassManager::new()
            .with(crate::promote::PromotePass)
            .with(crate::layout::LayoutPass)
            .with(crate::decompose::DecomposePass::keeping(keep))
            .with(crate::optimize::OptimizePass::new(optimize))
            .with(crate::cse::CsePass)
            .with(crate::dce::DcePass)
    }

    /// Appends a pass.
    pub fn with(mut self, pass: impl Pass + 'static) -> PassManager {
        self.passes.push(Box::new(pass));
        self
    }

    /// Whether to run the verifier after each pass (on by default); off,
    /// it runs once, after the last pass.
    pub fn verify_each(mut self, verify: bool) -> PassManager {
        self.verify = verify;
        self
    }

    /// The passes' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Keeps the passes up to and including `last`.
    pub fn until(mut self, last: &str) -> Result<PassManager> {
        let index = self
            .passes
            .iter()
            .position(|p| p.name() == last)
            .ok_or_else(|| Error::new(ErrorKind::Attribute, format!("unknown pass '{last}'")))?;
        self.passes.truncate(index + 1);
        Ok(self)
    }

    /// Runs every pass in order, calling `observe` after each.
    pub fn run_observed(
        &self,
        module: &mut Module,
        mut observe: impl FnMut(PassEvent<'_>),
    ) -> Result<()> {
        for (k, pass) in self.passes.iter().enumerate() {
            let start = Instant::now();
            let verify = self.verify || k + 1 == self.passes.len();
            run_pass(pass.as_ref(), module, verify).map_err(|e| {
                // The program's own errors (a view its strides do not
                // allow, found when laying out) read as the interpreter
                // words them; a broken invariant names the pass.
                if matches!(
                    e.kind(),
                    ErrorKind::Verifier | ErrorKind::Backend | ErrorKind::TypeMismatch
                ) {
                    e.context(format!("in pass {}", pass.name()))
                } else {
                    e
                }
            })?;
            observe(PassEvent {
                name: pass.name(),
                module,
                elapsed: start.elapsed(),
                notes: pass.take_notes(),
            });
        }
        Ok(())
    }

    /// Runs every pass in order.
    pub fn run(&self, module: &mut Module) -> Result<()> {
        self.run_observed(module, |_| {})
    }
}

/// Runs one pass over every function of a module: the stage it needs,
/// re-layout of what it rebuilt, verification, the stage it leaves.
pub fn run_pass(pass: &dyn Pass, module: &mut Module, verify: bool) -> Result<()> {
    if module.stage < pass.requires() {
        return Err(Error::new(
            ErrorKind::Backend,
            format!(
                "pass {} needs a module at stage {:?}, but it is at {:?}",
                pass.name(),
                pass.requires(),
                module.stage
            ),
        ));
    }
    let cx = PassCx {
        ctx: module.ctx(),
        stage: module.stage,
    };
    let stage = pass.produces().unwrap_or(module.stage).max(module.stage);
    for func in &mut module.funcs {
        pass.run_func(func, &cx)?;
        if stage >= Stage::LaidOut && pass.produces() != Some(Stage::LaidOut) {
            crate::layout::lay_out(func, &cx.ctx)?;
        }
        if verify {
            verify_func(func, &cx.ctx)
                .map_err(|e| e.context(format!("after pass {}", pass.name())))?;
        }
    }
    module.stage = stage;
    Ok(())
}

impl Default for PassManager {
    fn default() -> Self {
        PassManager::new()
    }
}
