//! Constant subgraphs computed once per compiled program
//! ([`kiln_passes::hoist`]): [`compile_hoisting`] splits them out of a
//! module, evaluates them on the reference interpreter when it compiles,
//! compiles what is left with the backend, and returns an executable that
//! passes the kept tensors after the caller's inputs on every run.
//!
//! The interpreter, not the backend, evaluates them because they run once:
//! compiling their kernels would cost more than interpreting them (a
//! Llama block's rotary tables are seven kernels), and the split keeps them
//! small ([`Limits`]). The interpreter is the reference, so the tensors
//! are the ones every backend is checked against.
//!
//! A kept tensor is shared by every run, so nothing may write it: the
//! executable passes clones of it (shared storage), which buffer donation
//! never takes (`Storage::is_unique`), and kept tensors are never results
//! (the split leaves returned values to the main function).

use std::time::Duration;

use kiln_ir::{Module, Result, Stage};
use kiln_passes::hoist::{Limits, split_constants};

use crate::backend::{Executable, Listing, ListingLanguage, bind_input, check_input_count};
use crate::bind::Packing;
use crate::tensor::Tensor;

/// Compiles `module` with `compile`, its constant subgraphs split out and
/// computed once. Where there are none, or evaluating them fails (an error
/// a run would meet, reported when a run meets it), `compile` gets the
/// module as it is.
pub fn compile_hoisting(
    module: &Module,
    compile: impl Fn(&Module) -> Result<Box<dyn Executable>>,
) -> Result<Box<dyn Executable>> {
    let func = module.entry()?;
    let ctx = module.ctx();
    if module.stage < Stage::LaidOut {
        return compile(module);
    }
    let Some(split) = split_constants(func, &ctx, Limits::default())? else {
        return compile(module);
    };
    let inputs = func.params.len();
    let constants_text = split.constants.to_string();
    let mut main = module.clone();
    *main.entry_mut()? = split.main;
    // The interpreter evaluates the constants while the backend compiles
    // the rest (on another thread: each takes milliseconds).
    let (values, inner) = std::thread::scope(|scope| {
        let values = scope.spawn(|| crate::interp::run_func(&split.constants, &ctx, &[]));
        let inner = compile(&main);
        (values.join(), inner)
    });
    let Ok(Ok(values)) = values else {
        // (The main part's compile is wasted: a rare path.)
        return compile(module);
    };
    let inner = inner?;
    let main = main.entry()?;
    let constants = values
        .iter()
        .enumerate()
        .map(|(k, t)| bind_input(main, inputs + k, t))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(WithConstants {
        inner,
        name: func.name.clone(),
        inputs,
        constants,
        constants_text,
    }))
}

/// A compiled program and the constants it takes after its inputs.
struct WithConstants {
    inner: Box<dyn Executable>,
    /// The function's name and parameter count, for the caller's errors.
    name: String,
    inputs: usize,
    constants: Vec<Tensor>,
    /// The constant function, for `kiln dump`.
    constants_text: String,
}

impl WithConstants {
    /// The caller's inputs followed by the constants.
    fn all(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let mut all = Vec::with_capacity(self.inputs + self.constants.len());
        all.extend_from_slice(self.checked(inputs)?);
        all.extend(self.constants.iter().cloned());
        Ok(all)
    }

    fn checked<'a>(&self, inputs: &'a [Tensor]) -> Result<&'a [Tensor]> {
        check_input_count(&self.name, self.inputs, inputs.len())?;
        Ok(inputs)
    }
}

impl Executable for WithConstants {
    fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.inner.run(&self.all(inputs)?)
    }

    fn run_donated(&self, mut inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.checked(&inputs)?;
        inputs.extend(self.constants.iter().cloned());
        self.inner.run_donated(inputs)
    }

    fn listings(&self) -> Result<Vec<Listing>> {
        let mut listings = vec![Listing {
            stage: "fuse",
            title: format!(
                "constants of @{}, computed once when it compiled (its last {} inputs)",
                self.name,
                self.constants.len()
            ),
            language: ListingLanguage::Kir,
            text: self.constants_text.clone(),
        }];
        listings.extend(self.inner.listings()?);
        Ok(listings)
    }

    /// The code, and the kept tensors: what caching the program costs.
    fn code_bytes(&self) -> usize {
        let kept: usize = self.constants.iter().map(|t| t.storage().len()).sum();
        self.inner.code_bytes() + kept
    }

    fn device_times(&self, inputs: &[Tensor], runs: usize) -> Option<Result<Vec<Duration>>> {
        match self.all(inputs) {
            Ok(all) => self.inner.device_times(&all, runs),
            Err(e) => Some(Err(e)),
        }
    }

    fn step_times(
        &self,
        inputs: &[Tensor],
        runs: usize,
    ) -> Option<Result<Vec<(String, Duration)>>> {
        match self.all(inputs) {
            Ok(all) => self.inner.step_times(&all, runs),
            Err(e) => Some(Err(e)),
        }
    }

    /// The caller's weights are bound by the inner program (the constants
    /// stay as they are: the program shares them).
    fn pack_bound(&self, weights: &mut [Option<Tensor>]) -> Result<Packing> {
        check_input_count(&self.name, self.inputs, weights.len())?;
        let mut all: Vec<Option<Tensor>> = weights.iter_mut().map(Option::take).collect();
        all.resize(self.inputs + self.constants.len(), None);
        let packing = self.inner.pack_bound(&mut all)?;
        for (w, t) in weights.iter_mut().zip(all) {
            *w = t;
        }
        Ok(packing)
    }

    fn run_bound(
        &self,
        mut inputs: Vec<Tensor>,
        donate: bool,
        packing: &Packing,
    ) -> Result<Vec<Tensor>> {
        self.checked(&inputs)?;
        inputs.extend(self.constants.iter().cloned());
        self.inner.run_bound(inputs, donate, packing)
    }

    fn step_times_bound(
        &self,
        inputs: &[Tensor],
        runs: usize,
        packing: &Packing,
    ) -> Option<Result<Vec<(String, Duration)>>> {
        match self.all(inputs) {
            Ok(all) => self.inner.step_times_bound(&all, runs, packing),
            Err(e) => Some(Err(e)),
        }
    }
}
