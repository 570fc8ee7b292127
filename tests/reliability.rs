//! Sizes and resources at the edges: views whose element counts overflow
//! 32-bit indexing, allocations the machine cannot hold, and the programs
//! of `tests/regressions/` (shrunk failures of random testing and fuzzing).

use kiln::runtime::Tensor;
use kiln::{BackendKind, Compiler, DefaultDType, ErrorKind};
use kiln_tests::differential::differ;

fn parse(text: &str) -> kiln::Module {
    kiln::parse_module("t.kir", text, DefaultDType::F32).expect("the program parses")
}

/// 65536 × 32769 = 2^31 + 2^16 elements, described by strides over one
/// stored element: never allocated, indexed in 64 bits.
#[test]
fn views_beyond_32_bit_indexing_are_handled() {
    let module = parse(
        "func @main(%x: tensor<1xf32>) -> (tensor<65536x32769xf32>, tensor<f32>) {
  %e = expand %x {shape = [65536, 32769]}
  %s = sum %e {dims = [0, 1]}
  return %e, %s
}",
    );
    let x = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    let results = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .and_then(|c| c.run(&[x]))
        .unwrap();
    assert_eq!(results[0].shape(), &[65536, 32769]);
    assert_eq!(
        results[0].strides(),
        &[0, 0],
        "the result is a view, not a copy"
    );
    // 2^31 + 2^16 is exact in f32.
    assert_eq!(results[1].to_vec::<f32>().unwrap(), vec![2_147_549_184.0]);
}

#[test]
fn allocations_beyond_the_machine_are_refused() {
    // 2^37 f32 elements: 512 GiB.
    let module = parse(
        "func @main() -> tensor<524288x262144xf32> {
  %f = full {shape = [524288, 262144], value = 1.0}
  return %f
}",
    );
    for backend in [BackendKind::Interp, BackendKind::Cranelift] {
        let err = Compiler::new(backend)
            .compile(&module)
            .and_then(|c| c.run(&[]))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Resource, "{backend}: {err}");
        assert!(
            err.message()
                .contains("refusing to allocate 549755813888 bytes"),
            "{err}"
        );
    }
}

#[test]
fn regressions_match_the_interpreter() {
    let dir = kiln_tests::tests_dir().join("regressions");
    let mut failures = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/regressions exists") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "kir") {
            continue;
        }
        count += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let default = if text.contains("// default dtype f64") {
            DefaultDType::F64
        } else {
            DefaultDType::F32
        };
        let module = match kiln::parse_module(&path.display().to_string(), &text, default) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if let Err(e) = differ(&module, BackendKind::Cranelift) {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    assert!(count > 0, "no programs in {}", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
