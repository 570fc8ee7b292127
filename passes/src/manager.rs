//! The pass manager: an ordered list of named passes, the verifier after
//! each, and a hook to observe the module after any pass (for
//! `kiln dump --after NAME`) with the time each pass took.

use std::time::{Duration, Instant};

use kiln_ir::verify::verify_module;
use kiln_ir::{Error, ErrorKind, Module, Result};

/// A transformation of a module. A pass keeps the module typed; the manager
/// verifies it afterwards.
pub trait Pass {
    /// The name `kiln dump --after NAME` uses.
    fn name(&self) -> &'static str;

    fn run(&self, module: &mut Module) -> Result<()>;

    /// What the last run has to say (the optimizer's report and
    /// explanations), shown by `kiln dump`.
    fn take_notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// What the manager reports after each pass.
pub struct PassEvent<'a> {
    pub name: &'static str,
    pub module: &'a Module,
    pub elapsed: Duration,
    pub notes: Vec<String>,
}

/// An ordered pipeline of passes.
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
    verify: bool,
}

impl PassManager {
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
        PassManager::new()
            .with(crate::promote::PromotePass)
            .with(crate::layout::LayoutPass)
            .with(crate::decompose::DecomposePass)
            .with(crate::optimize::OptimizePass::new(optimize))
            .with(crate::cse::CsePass)
            .with(crate::dce::DcePass)
    }

    pub fn with(mut self, pass: impl Pass + 'static) -> PassManager {
        self.passes.push(Box::new(pass));
        self
    }

    /// Whether to run the verifier after each pass (on by default).
    pub fn verify_each(mut self, verify: bool) -> PassManager {
        self.verify = verify;
        self
    }

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
        for pass in &self.passes {
            let start = Instant::now();
            pass.run(module)
                .map_err(|e| e.context(format!("in pass {}", pass.name())))?;
            if self.verify {
                verify_module(module)
                    .map_err(|e| e.context(format!("after pass {}", pass.name())))?;
            }
            observe(PassEvent {
                name: pass.name(),
                module,
                elapsed: start.elapsed(),
                notes: pass.take_notes(),
            });
        }
        Ok(())
    }

    pub fn run(&self, module: &mut Module) -> Result<()> {
        self.run_observed(module, |_| {})
    }
}

impl Default for PassManager {
    fn default() -> Self {
        PassManager::new()
    }
}
