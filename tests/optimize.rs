//! The optimizer against the reference interpreter: optimization never
//! changes a result, bit for bit (NaN payloads aside), nor its type or
//! strides; constant folding is the interpreter's arithmetic; the
//! lossless-cast rule it relies on agrees with the runtime's conversions.

use std::sync::Arc;

use kiln::{DType, DefaultDType, Module};
use kiln_passes::PassManager;
use kiln_passes::dce::DcePass;
use kiln_passes::optimize::{OptimizeConfig, OptimizePass};
use kiln_runtime::convert::{Elem, convert};
use kiln_runtime::fold::InterpreterFold;
use kiln_runtime::{Tensor, interp};
use kiln_tests::inputs_for;
use kiln_tests::programs::{DTypes, recipe_strategy};
use proptest::prelude::*;

/// The optimizer as the compiler runs it: constant folding included.
fn optimizer(default_dtype: DefaultDType) -> OptimizePass {
    OptimizePass::new(OptimizeConfig {
        fold: Some(Arc::new(InterpreterFold { default_dtype })),
        ..OptimizeConfig::default()
    })
}

/// The module after the passes before the optimizer, and after it.
fn before_and_after(module: &Module) -> Result<(Module, Module), String> {
    let mut before = module.clone();
    // Dead code goes too (an unused division by zero must not decide).
    PassManager::standard()
        .until("decompose")
        .map(|p| p.with(DcePass))
        .and_then(|p| p.run(&mut before))
        .map_err(|e| format!("before: {e}\n{module}"))?;
    let mut after = before.clone();
    PassManager::new()
        .with(optimizer(module.default_dtype))
        .run(&mut after)
        .map_err(|e| format!("optimize: {e}"))?;
    Ok((before, after))
}

/// Same bits, except that any NaN equals any NaN.
fn same_bits(a: Elem, b: Elem) -> bool {
    let float = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
    match (a, b) {
        (Elem::F(x), Elem::F(y)) => float(x, y),
        (Elem::C(xr, xi), Elem::C(yr, yi)) => float(xr, yr) && float(xi, yi),
        (a, b) => a == b,
    }
}

fn identical(got: &Tensor, expected: &Tensor) -> Result<(), String> {
    if got.tensor_type() != expected.tensor_type() {
        return Err(format!(
            "{} vs {}",
            got.tensor_type(),
            expected.tensor_type()
        ));
    }
    let (g, e) = (got.values(), expected.values());
    match g.iter().zip(&e).position(|(a, b)| !same_bits(*a, *b)) {
        Some(i) => Err(format!("element {i} is {:?}, expected {:?}", g[i], e[i])),
        None => Ok(()),
    }
}

/// Interprets the program before and after optimization. A program the
/// passes before the optimizer refuse (a view the layout rules reject,
/// as PyTorch does) never reaches it: the interpreter must refuse it too,
/// with an error of the same kind.
fn check_unchanged(module: &Module) -> Result<(), String> {
    let inputs = inputs_for(module);
    // Both judge the program without its dead values: the interpreter
    // runs only what the results need (it has no strides, so a dead
    // `view_as_complex` of an expanded tensor, which the layout rules
    // refuse, would pass it).
    let mut live = module.clone();
    PassManager::new()
        .with(DcePass)
        .run(&mut live)
        .map_err(|e| e.to_string())?;
    let refused = PassManager::standard()
        .until("decompose")
        .and_then(|p| p.run(&mut live.clone()))
        .err();
    if let Some(refused) = refused {
        return match interp::run(&live, &inputs) {
            Err(e) if e.kind() == refused.kind() => Ok(()),
            other => Err(format!(
                "the passes before the optimizer refuse the program ({refused}), the interpreter gives {:?}\n{module}",
                other.map(|_| "results")
            )),
        };
    }
    let (before, after) = before_and_after(&live)?;
    let expected = interp::run(&before, &inputs);
    let got = interp::run(&after, &inputs);
    let describe = |e: String| format!("{e}\n// before\n{before}\n// after\n{after}");
    match (got, expected) {
        (Ok(got), Ok(expected)) => {
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                identical(g, e).map_err(|err| describe(format!("result {i}: {err}")))?;
            }
            Ok(())
        }
        (Err(g), Err(e)) if g.kind() == e.kind() => Ok(()),
        (g, e) => Err(describe(format!("optimized {g:?}, original {e:?}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn optimization_never_changes_a_result(recipe in recipe_strategy(DTypes::Computable, 3, 12)) {
        let outcome = check_unchanged(&recipe.build());
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    /// Shell dtypes (float8, packed) cannot be computed, but the optimizer
    /// must still leave a valid program with the same result types.
    #[test]
    fn optimization_keeps_types_for_every_dtype(recipe in recipe_strategy(DTypes::All, 3, 12)) {
        let module = recipe.build();
        // A program the layout rules refuse before the optimizer (PyTorch's
        // errors: view_as_complex of a transpose) never reaches it.
        let refused = PassManager::standard()
            .until("decompose")
            .and_then(|p| p.run(&mut module.clone()))
            .err();
        if refused.is_some_and(|e| e.kind() == kiln::ErrorKind::Layout) {
            return Ok(());
        }
        let (before, after) = before_and_after(&module).map_err(TestCaseError::fail)?;
        let types = |m: &Module| {
            let f = m.entry().unwrap();
            f.returns.iter().map(|r| f.ty(*r).clone()).collect::<Vec<_>>()
        };
        prop_assert_eq!(types(&before), types(&after), "{}", after);
    }
}

fn compiled_body(text: &str) -> String {
    let mut module = kiln::parse_module("t.kir", text, DefaultDType::F32).unwrap();
    kiln::Compiler::new(kiln::BackendKind::Interp)
        .pipeline()
        .run(&mut module)
        .unwrap();
    module.to_string()
}

#[test]
fn constants_fold_with_the_interpreters_arithmetic() {
    // 0.1 in f16 is 0.0999755859375; times 3 in f16 arithmetic (computed
    // in f32, rounded to f16) is 0.2998046875.
    let out = compiled_body(
        "func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
  %a = full {shape = [4], value = 0.1, dtype = f16}
  %b = mul %a, 3
  %c = add %x, %b
  return %c
}
",
    );
    assert!(out.contains("value = 0.2998046875, dtype = f16"), "{out}");
    assert!(!out.contains("mul"), "{out}");
    // Integer division by zero is an error at run time: not folded.
    let out = compiled_body(
        r#"func @main() -> tensor<2xi32> {
  %a = full {shape = [2], value = 7, dtype = i32}
  %b = div %a, 0 {rounding_mode = "trunc"}
  return %b
}
"#,
    );
    assert!(out.contains("rounding_mode = \"trunc\""), "{out}");
}

/// Values of each dtype that witness every way a cast can lose something.
fn samples(dtype: DType) -> Vec<Elem> {
    let floats = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        0.1,
        1.0 / 3.0,
        2049.0,
        257.0,
        16_777_217.0,
        65_504.0,
        3.0e38,
        1.0e-40,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let ints = [
        0i128,
        1,
        -1,
        127,
        -128,
        255,
        257,
        2049,
        32_767,
        65_535,
        16_777_217,
        i32::MIN as i128,
        u32::MAX as i128,
        (1 << 53) + 1,
        i64::MIN as i128,
        i64::MAX as i128,
        u64::MAX as i128,
    ];
    let raw: Vec<Elem> = if dtype.is_complex() {
        floats
            .iter()
            .flat_map(|&re| [Elem::C(re, 0.0), Elem::C(re, 1.0 / 3.0)])
            .collect()
    } else if dtype.is_floating_point() {
        floats.iter().map(|&f| Elem::F(f)).collect()
    } else if dtype == DType::Bool {
        vec![Elem::B(false), Elem::B(true)]
    } else {
        ints.iter().map(|&i| Elem::I(i)).collect()
    };
    raw.into_iter().map(|v| convert(v, dtype)).collect()
}

/// `cast-chain` drops a cast when `DType::cast_through_is_exact` says so:
/// no value may then come out of the chain different. And a cast that
/// `casts_losslessly_to` calls lossy must change some value.
#[test]
fn dropped_casts_change_no_value() {
    let computable: Vec<DType> = DType::ALL.into_iter().filter(|d| !d.is_shell()).collect();
    let mut wrong = Vec::new();
    for &from in &computable {
        for &via in &computable {
            let mut changes_some = false;
            for &to in &computable {
                let changed = samples(from)
                    .into_iter()
                    .find(|&v| !same_bits(convert(convert(v, via), to), convert(v, to)));
                changes_some |= changed.is_some();
                if let (true, Some(v)) = (from.cast_through_is_exact(via, to), changed) {
                    wrong.push(format!(
                        "{from} -> {via} -> {to} claimed exact, changes {v:?}"
                    ));
                }
            }
            if !from.casts_losslessly_to(via) && !changes_some {
                wrong.push(format!("{from} -> {via} claimed lossy, no sample changes"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
