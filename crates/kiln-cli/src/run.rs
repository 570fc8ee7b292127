//! `kiln run`: compile `@main`, run it on tensors from files, write or print
//! the results.

use std::path::Path;

use kiln::{Compiler, Result};

use crate::{Common, Files, backend, io, load};

pub fn run(
    path: &Path,
    files: &Files,
    out: Option<&Path>,
    out_npy: Option<&Path>,
    backend_name: &str,
    common: &Common,
) -> Result<()> {
    let module = load(path, common)?;
    let compiled = Compiler::new(backend(backend_name)?).compile(&module)?;
    let inputs = io::load_inputs(compiled.module().entry()?, files)?;
    // Bound, the program holds a weight that only feeds products in the
    // packed form they read, in place of the weight (one copy of each).
    let results = compiled
        .bind(inputs.into_iter().map(Some).collect())?
        .run(&[])?;
    if out.is_none() && out_npy.is_none() {
        print!("{}", io::summarize(&results));
    }
    io::write_outputs(&results, out, out_npy)
}
