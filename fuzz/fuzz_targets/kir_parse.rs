//! `.kir` bytes through the lexer, parser and verifier: an error or a
//! module, never a panic; a module prints to text that parses back to the
//! same text (the printer and parser are inverse).
#![no_main]

use kiln::DefaultDType;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(module) = kiln::parse_bytes("fuzz.kir", bytes, DefaultDType::F32) else {
        return;
    };
    let text = module.to_string();
    let again = kiln::parse_module("printed.kir", &text, DefaultDType::F32)
        .unwrap_or_else(|e| panic!("the printed module does not parse: {e}\n{text}"));
    assert_eq!(again.to_string(), text, "print is not a fixed point");
});
