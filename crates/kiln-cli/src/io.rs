//! Program inputs from tensor files, and results to files or the terminal.
//!
//! Files hold values in logical (row-major) order; each input is laid out as
//! its argument's type declares before the program runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kiln::graph::Func;
use kiln::runtime::backend::bind_input;
use kiln::runtime::{Tensor, io};
use kiln::{Error, ErrorKind, Result};

use crate::Files;

/// One input tensor and the file it came from.
struct Source {
    tensor: Tensor,
    origin: String,
}

/// Loads the inputs of `func` by argument name: `--input NAME=PATH.npy`
/// first, then the `--inputs` safetensors file.
pub fn load_inputs(func: &Func, files: &Files) -> Result<Vec<Tensor>> {
    let mut npy: BTreeMap<String, PathBuf> = BTreeMap::new();
    for spec in &files.input {
        let (name, path) = spec.split_once('=').ok_or_else(|| {
            Error::new(
                ErrorKind::Input,
                format!("--input '{spec}' must be NAME=PATH.npy"),
            )
        })?;
        let name = name.trim_start_matches('%');
        if !func.params.iter().any(|&p| func.name_of(p) == name) {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "--input {name}: @{} has no argument %{name} (it takes {})",
                    func.name,
                    argument_list(func)
                ),
            ));
        }
        npy.insert(name.to_string(), PathBuf::from(path));
    }
    let bundle = match &files.inputs {
        Some(path) => Some((path, io::read_safetensors(path)?)),
        None => None,
    };
    let mut inputs = Vec::with_capacity(func.params.len());
    for (index, &p) in func.params.iter().enumerate() {
        let name = func.name_of(p);
        let source = if let Some(path) = npy.get(name) {
            Source {
                tensor: io::read_npy(path)?,
                origin: path.display().to_string(),
            }
        } else {
            match &bundle {
                Some((path, tensors)) => {
                    let tensor = tensors.get(name).cloned().ok_or_else(|| {
                        let has: Vec<&str> = tensors.keys().map(String::as_str).collect();
                        Error::new(
                            ErrorKind::Input,
                            format!(
                                "{}: no tensor named '{name}' for argument %{name} (the file has: {})",
                                path.display(),
                                if has.is_empty() { "nothing".to_string() } else { has.join(", ") }
                            ),
                        )
                    })?;
                    Source {
                        tensor,
                        origin: format!("{}: tensor '{name}'", path.display()),
                    }
                }
                None => {
                    return Err(Error::new(
                        ErrorKind::Input,
                        format!(
                            "@{} takes {}: give them with --inputs FILE.safetensors or --input NAME=FILE.npy",
                            func.name,
                            argument_list(func)
                        ),
                    ));
                }
            }
        };
        inputs.push(bind_input(func, index, &source.tensor).map_err(|e| e.context(source.origin))?);
    }
    Ok(inputs)
}

fn argument_list(func: &Func) -> String {
    let names: Vec<String> = func
        .params
        .iter()
        .map(|&p| format!("%{}", func.name_of(p)))
        .collect();
    if names.is_empty() {
        "no arguments".to_string()
    } else {
        names.join(", ")
    }
}

/// The name of result `i` in output files.
pub fn output_name(i: usize) -> String {
    format!("out{i}")
}

/// Writes results to a safetensors file and/or one `.npy` file each.
pub fn write_outputs(results: &[Tensor], out: Option<&Path>, out_npy: Option<&Path>) -> Result<()> {
    if let Some(path) = out {
        let named: Vec<(String, &Tensor)> = results
            .iter()
            .enumerate()
            .map(|(i, t)| (output_name(i), t))
            .collect();
        io::write_safetensors(path, &named)?;
    }
    if let Some(dir) = out_npy {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("{}: cannot create the directory: {e}", dir.display()),
            )
        })?;
        for (i, t) in results.iter().enumerate() {
            io::write_npy(&dir.join(format!("{}.npy", output_name(i))), t)?;
        }
    }
    Ok(())
}

/// A readable summary of each result: its type and its values as PyTorch
/// prints them.
pub fn summarize(results: &[Tensor]) -> String {
    let mut text = String::new();
    for (i, t) in results.iter().enumerate() {
        text.push_str(&format!("{}: {}\n{t}\n", output_name(i), t.tensor_type()));
    }
    text
}
