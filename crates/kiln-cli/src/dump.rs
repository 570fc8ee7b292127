//! `kiln dump`: the module after any pass, and the backend's own code.

use std::path::Path;
use std::time::Duration;

use kiln::runtime::ListingLanguage;
use kiln::{Compiler, Error, ErrorKind, Result};

use crate::highlight::Source;
use crate::{Color, Common, backend, load, render};

/// What `kiln dump` prints besides the module.
pub struct DumpOptions {
    pub timings: bool,
    /// The optimizer's explanations of each change.
    pub explain: bool,
}

pub fn dump(
    path: &Path,
    after: &[String],
    options: &DumpOptions,
    backend_name: &str,
    color: Color,
    common: &Common,
) -> Result<()> {
    let module = load(path, common)?;
    // Every module it prints is verified.
    let compiler = Compiler::new(backend(backend_name)?)
        .explain(options.explain)
        .verify_each_pass(true);
    let pipeline = compiler.pipeline_for(module.default_dtype);
    let passes = pipeline.names();
    let stages = compiler.backend().stages();
    let all = after.iter().any(|a| a == "all");
    for name in after {
        if name != "all" && !passes.contains(&name.as_str()) && !stages.contains(&name.as_str()) {
            let mut known: Vec<&str> = passes.clone();
            known.extend(stages);
            known.push("all");
            return Err(Error::new(
                ErrorKind::Attribute,
                format!(
                    "--after {name}: no such pass for the {} backend (expected one of: {})",
                    compiler.backend(),
                    known.join(", ")
                ),
            ));
        }
    }
    let wanted = |name: &str| {
        all || after.iter().any(|a| a == name) || (after.is_empty() && Some(&name) == passes.last())
    };
    let mut module = module;
    let mut times: Vec<(&str, Duration)> = Vec::new();
    let mut out = String::new();
    pipeline.run_observed(&mut module, |event| {
        times.push((event.name, event.elapsed));
        if wanted(event.name) {
            out.push_str(&format!("// after {}\n", event.name));
            for note in &event.notes {
                for line in note.lines() {
                    out.push_str(&format!("// {line}\n"));
                }
            }
            out.push_str(&render(&event.module.to_string(), color, Source::Kir));
        }
    })?;
    if stages.iter().any(|s| wanted(s)) {
        let start = std::time::Instant::now();
        let compiled = compiler.compile_lowered(module)?;
        times.push(("backend", start.elapsed()));
        let listings = compiled.listings()?;
        for stage in stages.iter().filter(|s| wanted(s)) {
            out.push_str(&format!("// after {stage}\n"));
            for listing in listings.iter().filter(|l| l.stage == *stage) {
                out.push_str(&format!("// {}\n", listing.title));
                let source = match listing.language {
                    ListingLanguage::CudaC => Some(Source::C),
                    ListingLanguage::Kir => Some(Source::Kir),
                    ListingLanguage::Plan
                    | ListingLanguage::Clif
                    | ListingLanguage::Machine
                    | ListingLanguage::Ptx => None,
                };
                out.push_str(&match source {
                    Some(source) => render(&listing.text, color, source),
                    None => listing.text.clone(),
                });
                if !listing.text.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    if options.timings {
        out.push_str("// timings\n");
        for (name, elapsed) in &times {
            out.push_str(&format!(
                "//   {name:<10} {:>9.3} ms\n",
                elapsed.as_secs_f64() * 1e3
            ));
        }
    }
    print!("{out}");
    Ok(())
}
