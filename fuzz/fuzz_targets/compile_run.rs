//! `.kir` bytes parsed, compiled and run on the reference interpreter and
//! on the Cranelift backend with deterministic inputs: results or errors,
//! never a panic; where both run, they agree on each result's type.
#![no_main]

use kiln::runtime::random::tensor_for;
use kiln::{BackendKind, Compiler, DefaultDType};
use libfuzzer_sys::fuzz_target;

/// Programs larger than this (elements per value) are not run: the fuzzer
/// looks for wrong code, not for slow code.
const MAX_ELEMENTS: i64 = 1 << 12;

fuzz_target!(|bytes: &[u8]| {
    let Ok(module) = kiln::parse_bytes("fuzz.kir", bytes, DefaultDType::F32) else {
        return;
    };
    let Ok(func) = module.entry() else { return };
    if func.values.iter().any(|v| v.ty.numel() > MAX_ELEMENTS || !v.ty.device.is_cpu()) {
        return;
    }
    let Ok(inputs) = func
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| tensor_for(func.ty(*p), i as u64))
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    let run = |backend| Compiler::new(backend).compile(&module).and_then(|c| c.run(&inputs));
    let (reference, jit) = (run(BackendKind::Interp), run(BackendKind::Cranelift));
    if let (Ok(r), Ok(j)) = (&reference, &jit) {
        for (a, b) in r.iter().zip(j) {
            assert_eq!(a.tensor_type(), b.tensor_type(), "the backends disagree on a result's type");
        }
    }
});
