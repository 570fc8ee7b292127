//! Bytes read as a safetensors file and as a `.npy` file: tensors or a
//! clear error, never a panic or a read out of bounds.
#![no_main]

use std::path::Path;

use kiln::runtime::io;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let _ = io::safetensors_from_bytes(Path::new("fuzz.safetensors"), bytes);
    let _ = io::npy_from_bytes(Path::new("fuzz.npy"), bytes);
});
