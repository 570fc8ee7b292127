//! NVRTC and ptxas for the CUDA tests: whether they are here (required
//! where CI sets `KILN_REQUIRE_NVRTC`), and compiling a plan's CUDA C to
//! PTX and assembling it for sm_90.

use std::path::PathBuf;
use std::process::Command;

use kiln::Module;
use kiln_cuda::{Cuda, nvrtc};
use kiln_passes::plan::KernelPlan;

/// Whether NVRTC can be used here; panics where CI requires it.
pub fn nvrtc_here() -> bool {
    if nvrtc::nvrtc_present() {
        return true;
    }
    assert!(
        std::env::var_os("KILN_REQUIRE_NVRTC").is_none(),
        "KILN_REQUIRE_NVRTC is set but libnvrtc.so.12 cannot be loaded (LD_LIBRARY_PATH?)"
    );
    eprintln!("skipped: NVRTC (libnvrtc.so.12) not found; see README \"Running on CUDA\"");
    false
}

/// `ptxas`: `KILN_PTXAS`, or the one on PATH.
pub fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KILN_PTXAS") {
        return Some(PathBuf::from(p));
    }
    let found = Command::new("ptxas").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("KILN_REQUIRE_NVRTC").is_none(),
            "KILN_REQUIRE_NVRTC is set but ptxas is not on PATH"
        );
        eprintln!("skipped: ptxas not found (set KILN_PTXAS or put it on PATH)");
    }
    found.then(|| PathBuf::from("ptxas"))
}

/// Assembles PTX for sm_90; `Err` holds ptxas's complaint.
pub fn assemble(ptxas: &PathBuf, ptx: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = dir.path().join("k.ptx");
    std::fs::write(&input, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg("-arch=sm_90")
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("k.cubin"))
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// NVRTC and ptxas on the CUDA C of one laid-out module.
pub fn compiles(module: &Module, ptxas: Option<&PathBuf>) -> Result<(), String> {
    let plan = Cuda::default().plan(module).map_err(|e| e.to_string())?;
    compiles_plan(&plan, ptxas)
}

/// NVRTC and ptxas on the CUDA C of one plan.
pub fn compiles_plan(plan: &KernelPlan, ptxas: Option<&PathBuf>) -> Result<(), String> {
    let source = Cuda::source(plan);
    let ptx = nvrtc::compile(&source, 90).map_err(|e| format!("{e}\n{source}"))?;
    if let Some(ptxas) = ptxas {
        assemble(ptxas, &ptx).map_err(|e| format!("ptxas: {e}\n{source}"))?;
    }
    Ok(())
}
