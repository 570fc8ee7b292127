//! The IR: every shipped `.kir` program checks and round-trips through the
//! printer and parser; `kiln check` output is snapshotted; every error of
//! the error corpus is exact; traced closures print the same IR as text;
//! random well-typed graphs round-trip.

use std::collections::BTreeSet;
use std::path::PathBuf;

use kiln::{DType, DefaultDType, LossReduction, Module, TensorSpec, parse_module, trace};
use kiln_tests::programs::{DTypes, recipe_strategy};
use kiln_tests::tests_dir;
use proptest::prelude::*;

fn kir_files(folder: &str) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(tests_dir().join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kir"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    files.sort();
    files
}

fn parse(name: &str, text: &str) -> Module {
    parse_module(name, text, DefaultDType::F32).unwrap_or_else(|e| panic!("{e}"))
}

/// `print(parse(text))` is a fixed point, and `parse(print(graph))` rebuilds
/// the same graph.
fn assert_round_trips(name: &str, module: &Module) {
    let printed = module.to_string();
    let mut reparsed = parse(name, &printed);
    assert_eq!(
        reparsed.to_string(),
        printed,
        "{name}: printing is not a fixed point"
    );
    let mut original = module.clone();
    original.clear_locations();
    reparsed.clear_locations();
    assert_eq!(
        original, reparsed,
        "{name}: parse(print(graph)) differs from the graph"
    );
}

#[test]
fn every_program_checks_and_round_trips() {
    let programs = kir_files("programs");
    assert!(programs.len() >= 25);
    for (name, path) in programs {
        let module = parse(&name, &std::fs::read_to_string(path).unwrap());
        assert_round_trips(&name, &module);
    }
}

#[test]
fn every_op_appears_in_a_program() {
    let mut seen = BTreeSet::new();
    for (name, path) in kir_files("programs") {
        let module = parse(&name, &std::fs::read_to_string(path).unwrap());
        for func in &module.funcs {
            seen.extend(func.insts.iter().map(|i| i.op.name()));
        }
    }
    let missing: Vec<&str> = kiln::Op::names()
        .into_iter()
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "ops without a program in tests/programs: {missing:?}"
    );
}

#[test]
fn check_output_snapshots() {
    for (name, path) in kir_files("programs") {
        let module = parse(&name, &std::fs::read_to_string(path).unwrap());
        insta::with_settings!({
            snapshot_path => tests_dir().join("../snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("check__{name}"), module.to_string());
        });
    }
}

/// Each `tests/errors/NAME.kir` ends with `// ERROR: <the exact message>`.
#[test]
fn error_corpus_gives_exact_messages() {
    let files = kir_files("errors");
    assert!(files.len() >= 20);
    for (name, path) in files {
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let expected = text
            .lines()
            .filter_map(|l| l.strip_prefix("// ERROR: "))
            .last()
            .unwrap_or_else(|| panic!("{name}.kir has no // ERROR: line"));
        let got = kiln::parse_bytes(&format!("errors/{name}.kir"), &bytes, DefaultDType::F32)
            .expect_err(&format!("{name}.kir should not compile"));
        assert_eq!(got.to_string(), expected, "{name}.kir");
    }
}

#[test]
fn traced_closures_print_like_text() {
    let specs = [
        TensorSpec::new([4096], DType::F32).name("x"),
        TensorSpec::new([4096], DType::F32).name("y"),
        TensorSpec::new([4096], DType::F32).name("z"),
    ];
    let traced = trace(&specs, |v| ((&v[0] * 2.0 + &v[1]).relu() * &v[2]) - 1.0).unwrap();
    let text = std::fs::read_to_string(tests_dir().join("programs/elementwise_chain.kir")).unwrap();
    let mut parsed = parse("elementwise_chain", &text);
    let mut traced = traced.into_module();
    parsed.clear_locations();
    traced.clear_locations();
    assert_eq!(traced.to_string(), parsed.to_string());
    assert_eq!(traced, parsed);

    let mixed = trace(
        &[
            TensorSpec::new([1024], DType::I32).name("x"),
            TensorSpec::new([1024], DType::F16).name("y"),
            TensorSpec::new([1024], DType::F64).name("z"),
        ],
        |v| ((&v[0] * 2.0 + &v[1]).relu() * &v[2]) - 1,
    )
    .unwrap();
    let text = std::fs::read_to_string(tests_dir().join("programs/mixed_dtype.kir")).unwrap();
    assert_eq!(mixed.to_string(), parse("mixed_dtype", &text).to_string());
}

#[test]
fn tracing_reports_the_first_error_with_its_op() {
    let err = trace(
        &[
            TensorSpec::new([4, 3], DType::F32),
            TensorSpec::new([4], DType::F32),
        ],
        |v| (&v[0] + &v[1]).relu(),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "add: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    );
}

#[test]
fn traced_closures_take_several_results_lists_and_none() {
    let specs = [
        TensorSpec::new([3, 4], DType::F32).name("x"),
        TensorSpec::new([4], DType::F32).name("b"),
    ];
    let traced = trace(&specs, |v| {
        let (values, positions) = v[0].topk(2, -1, true, true);
        let (lo, hi) = v[0].aminmax(Some(1), false);
        let rows = v[0].unbind(0);
        let stacked = kiln::stack(&[&rows[0], &rows[2]], 0);
        let normed = v[0].layer_norm(&[4], None, Some(&v[1]), 1e-5);
        vec![values, positions, lo, hi, stacked, normed]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "%0, %1 = topk %x {k = 2, dim = -1} : (tensor<3x2xf32>, tensor<3x2xi64>)",
        "%2, %3 = aminmax %x {dim = 1} : (tensor<3xf32>, tensor<3xf32>)",
        "%4, %5, %6 = unbind %x {dim = 0}",
        "%7 = stack [%4, %6] {dim = 0} : tensor<2x4xf32>",
        "%8 = layer_norm %x, none, %b {normalized_shape = [4], eps = 1e-5}",
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    assert_round_trips("traced", traced.module());
    // Hand-checked values through the interpreter and the JIT.
    let x = kiln_runtime::Tensor::from_vec(
        vec![
            3.0f32, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0,
        ],
        &[3, 4],
    )
    .unwrap();
    let b = kiln_runtime::Tensor::from_vec(vec![0.0f32; 4], &[4]).unwrap();
    let inputs = [x, b];
    let reference = traced.interpret(&inputs).unwrap();
    let values: Vec<f32> = reference[0].to_vec().unwrap();
    let positions: Vec<i64> = reference[1].to_vec().unwrap();
    assert_eq!(values, [4.0, 3.0, 9.0, 6.0, 8.0, 5.0]);
    assert_eq!(positions, [2, 0, 1, 3, 3, 0]);
    assert_eq!(reference[2].to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(reference[3].to_vec::<f32>().unwrap(), [4.0, 9.0, 8.0]);
    let compiled = traced.compile(kiln::Device::CPU).unwrap();
    let got = compiled.run(&inputs).unwrap();
    for (g, r) in got.iter().zip(&reference) {
        assert_eq!(g.values(), r.values());
    }
}

#[test]
fn scoped_defaults_apply_to_traces() {
    let spec = [TensorSpec::new([3], DType::I32)];
    let f32_result = trace(&spec, |v| v[0].div(2)).unwrap();
    let f64_result = kiln::with_default_dtype(DType::F64, || trace(&spec, |v| v[0].div(2)))
        .unwrap()
        .unwrap();
    assert!(f32_result.to_string().contains("tensor<3xf32>"));
    assert!(f64_result.to_string().contains("tensor<3xf64>"));
    let meta =
        kiln::with_default_device(kiln::Device::META, || trace(&spec, |v| v[0].exp())).unwrap();
    assert!(meta.to_string().contains("tensor<3xf32, meta>"), "{meta}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_graphs_round_trip(recipe in recipe_strategy(DTypes::All, 3, 14)) {
        let module = recipe.build();
        let printed = module.to_string();
        let reparsed = parse_module("random", &printed, recipe.default_dtype);
        prop_assert!(reparsed.is_ok(), "{}\n{:?}", printed, reparsed.err());
        prop_assert_eq!(reparsed.unwrap().to_string(), printed);
    }
}

/// Issue 16's tracing methods record their ops with PyTorch's attributes
/// (absent optional tensors as `none`, reductions as strings).
#[test]
fn traced_products_norms_and_losses() {
    let specs = [
        TensorSpec::new([3, 4], DType::F32).name("x"),
        TensorSpec::new([4, 2], DType::F32).name("w"),
        TensorSpec::new([3], DType::I64).name("t"),
        TensorSpec::new([4], DType::F32).name("g"),
    ];
    let traced = trace(&specs, |v| {
        let mm = v[0].mm(&v[1]);
        let addmm = mm.addmm(&v[0], &v[1], 0.5, 2);
        let normed = v[0].rms_norm(&[4], Some(&v[3]), None);
        let bn = v[0].batch_norm(None, None, Some(&v[3]), None, true, 1e-5);
        let ce = v[0].cross_entropy(&v[2], None, -100, kiln::LossReduction::Sum, 0.1);
        let mask = v[0].gt(0.0);
        let filled = v[0].masked_fill(&mask, -1.0);
        let oh = v[2].one_hot(5);
        vec![addmm, normed, bn, ce, filled, oh]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "%0 = mm %x, %w : tensor<3x2xf32>",
        "%1 = addmm %0, %x, %w {beta = 0.5, alpha = 2} : tensor<3x2xf32>",
        "%2 = rms_norm %x, %g {normalized_shape = [4]} : tensor<3x4xf32>",
        "%3 = batch_norm %x, %g {training = true, eps = 1e-5} : tensor<3x4xf32>",
        "%4 = cross_entropy %x, %t {reduction = \"sum\", label_smoothing = 0.1} : tensor<f32>",
        "%6 = masked_fill %x, %5 {value = -1.0} : tensor<3x4xf32>",
        "%7 = one_hot %t {num_classes = 5} : tensor<3x5xi64>",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// The products added after issue 16 trace under PyTorch's names, with
/// its attributes (a list operand for multi_dot, `none` for a default).
#[test]
fn traced_products_more() {
    let specs = [
        TensorSpec::new([2, 3], DType::F32).name("a"),
        TensorSpec::new([3, 4], DType::F32).name("b"),
        TensorSpec::new([5, 3, 4], DType::F32).name("w"),
        TensorSpec::new([2, 4], DType::F32).name("c"),
        TensorSpec::new([3], DType::F32).name("v"),
    ];
    let traced = trace(&specs, |x| {
        let td = x[0].tensordot(&x[1], &[1], &[0]);
        let vd = x[4].vdot(&x[4]);
        let bl = x[0].bilinear(&x[3], &x[2], None);
        let md = kiln::linalg_multi_dot(&[&x[4], &x[1], &x[3].t()]);
        let lc = x[0].linalg_cross(&x[0], -1);
        let cr = x[0].cross(&x[0], None);
        let cd = x[0].cdist(&x[0], f64::INFINITY, None);
        vec![td, vd, bl, md, lc, cr, cd]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "%0 = tensordot %a, %b {dims_self = [1], dims_other = [0]} : tensor<2x4xf32>",
        "%1 = vdot %v, %v : tensor<f32>",
        "%2 = bilinear %a, %c, %w : tensor<2x5xf32>",
        "%4 = linalg_multi_dot [%v, %b, %3] : tensor<2xf32>",
        "%5 = linalg_cross %a, %a : tensor<2x3xf32>",
        "%6 = cross %a, %a : tensor<2x3xf32>",
        "%7 = cdist %a, %a {p = inf} : tensor<2x2xf32>",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// Issue 16's remaining ops trace under PyTorch's names with its result
/// types: searchsorted and bucketize (a number searched for), the masked
/// scatter, prelu, max_unpool1d, the losses, the native normalizations
/// (three results) and embedding_bag (four).
#[test]
fn traced_issue16_remaining() {
    let specs = [
        TensorSpec::new([2, 3, 4], DType::F32).name("x"),
        TensorSpec::new([5], DType::F32).name("e"),
        TensorSpec::new([3, 4], DType::Bool).name("m"),
        TensorSpec::new([3], DType::F32).name("w"),
        TensorSpec::new([2, 3, 4], DType::I64).name("i"),
        TensorSpec::new([6], DType::I64).name("j"),
        TensorSpec::new([2], DType::I64).name("o"),
    ];
    let traced = trace(&specs, |x| {
        let ss = kiln::searchsorted(&x[1], &x[0], true, false, None);
        let sn = kiln::searchsorted(&x[1], 0.5, false, true, None);
        let bk = kiln::bucketize(&x[0], &x[1], false, true);
        let ms = x[0].masked_scatter(&x[2], &x[0]);
        let pr = x[0].prelu(&x[3]);
        let mu = x[0].max_unpool(&x[4], &[9], &[], &[]);
        let gl = x[0].gaussian_nll_loss(&x[0], 0.5, true, 1e-6, LossReduction::Sum);
        let ce = x[0].select(0, 0).cosine_embedding_loss(
            &x[0].select(0, 1),
            &x[3],
            0.1,
            LossReduction::None,
        );
        let ml = x[0].multilabel_soft_margin_loss(&x[0], None, LossReduction::Mean);
        let tm = x[0].triplet_margin_loss(
            &x[0],
            &x[0],
            kiln::TripletMargin::default(),
            LossReduction::Mean,
        );
        let lrn = x[0].local_response_norm(2, 1e-4, 0.75, 1.0);
        let (ln, lm, lr) = x[0].native_layer_norm(&[4], None, None, 1e-5);
        let (bn, bm, bi) = x[0].native_batch_norm(None, None, None, true, 0.1, 1e-5);
        let (gn, gm, gr) = x[0].native_group_norm(None, None, 3, 1e-5);
        let (eb, o2b, bs, mi) = x[0]
            .select(0, 0)
            .embedding_bag(&x[5], &x[6], 2, None, false, None);
        vec![
            ss, sn, bk, ms, pr, mu, gl, ce, ml, tm, lrn, ln, lm, lr, bn, bm, bi, gn, gm, gr, eb,
            o2b, bs, mi,
        ]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "= searchsorted %e, %x {out_int32 = true} : tensor<2x3x4xi32>",
        "= searchsorted %e, 0.5 {right = true} : tensor<i64>",
        "= bucketize %x, %e {right = true} : tensor<2x3x4xi64>",
        "= masked_scatter %x, %m, %x : tensor<2x3x4xf32>",
        "= prelu %x, %w : tensor<2x3x4xf32>",
        "= max_unpool1d %x, %i {output_size = [9]} : tensor<2x3x9xf32>",
        "= gaussian_nll_loss %x, %x, 0.5 {full = true, reduction = \"sum\"} : tensor<f32>",
        "= multilabel_soft_margin_loss %x, %x : tensor<f32>",
        "= triplet_margin_loss %x, %x, %x : tensor<f32>",
        "= local_response_norm %x {size = 2} : tensor<2x3x4xf32>",
        "= native_layer_norm %x {normalized_shape = [4], eps = 1e-5} : (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)",
        "= native_batch_norm %x {training = true, momentum = 0.1, eps = 1e-5} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)",
        "= native_group_norm %x {n = 2, c = 3, hxw = 4, group = 3, eps = 1e-5} : (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)",
        "{mode = 2} : (tensor<2x4xf32>, tensor<6xi64>, tensor<2xi64>, tensor<2x4xi64>)",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    assert!(text.contains("cosine_embedding_loss"), "{text}");
}

/// Issue 20's pointwise math traces under PyTorch's names (NumPy's
/// `arctan2` and friends as the same ops), with PyTorch's result dtypes.
#[test]
fn traced_pointwise_math() {
    let specs = [
        TensorSpec::new([3, 4], DType::F32).name("x"),
        TensorSpec::new([4], DType::F32).name("y"),
        TensorSpec::new([4], DType::I32).name("e"),
    ];
    let traced = trace(&specs, |v| {
        let (x, y, e) = (&v[0], &v[1], &v[2]);
        vec![
            x.atan(),
            x.arcsin(),
            x.acos(),
            x.arctan2(y),
            x.erfc(),
            x.signbit(),
            x.fmod(1.5),
            x.hypot(y),
            x.copysign(-0.0),
            x.logaddexp2(y),
            x.ldexp(e),
            e.fmod(2),
        ]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "%0 = atan %x : tensor<3x4xf32>",
        "%1 = asin %x : tensor<3x4xf32>",
        "%2 = acos %x : tensor<3x4xf32>",
        "%3 = atan2 %x, %y : tensor<3x4xf32>",
        "%4 = erfc %x : tensor<3x4xf32>",
        "%5 = signbit %x : tensor<3x4xbool>",
        "%6 = fmod %x, 1.5 : tensor<3x4xf32>",
        "%7 = hypot %x, %y : tensor<3x4xf32>",
        "%8 = copysign %x, -0.0 : tensor<3x4xf32>",
        "%9 = logaddexp2 %x, %y : tensor<3x4xf32>",
        "%10 = ldexp %x, %e : tensor<3x4xf32>",
        "%11 = fmod %e, 2 : tensor<4xi32>",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// Issue 20's remaining pointwise math traces under PyTorch's names
/// (`round` with decimals is round.decimals), with PyTorch's result dtypes.
#[test]
fn traced_special_math() {
    let specs = [
        TensorSpec::new([3, 4], DType::F32).name("x"),
        TensorSpec::new([4], DType::F32).name("y"),
        TensorSpec::new([4], DType::I32).name("e"),
    ];
    let traced = trace(&specs, |v| {
        let (x, y, e) = (&v[0], &v[1], &v[2]);
        vec![
            x.sgn(),
            x.round_decimals(2),
            x.polygamma(1),
            x.erfinv(),
            e.lgamma(),
            x.digamma(),
            x.i0(),
            x.special_i0e(),
            x.special_i1(),
            x.special_i1e(),
            x.special_zeta(y),
            x.nextafter(y),
            e.gcd(e),
            e.lcm(e),
            e.bitwise_left_shift(3),
            e.bitwise_right_shift(e),
            x.special_chebyshev_polynomial_t(y),
            e.special_hermite_polynomial_he(5),
            x.igamma(y),
        ]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "%0 = sgn %x : tensor<3x4xf32>",
        "%1 = round %x {decimals = 2} : tensor<3x4xf32>",
        "%2 = polygamma %x {n = 1} : tensor<3x4xf32>",
        "%3 = erfinv %x : tensor<3x4xf32>",
        "%4 = lgamma %e : tensor<4xf32>",
        "%5 = digamma %x : tensor<3x4xf32>",
        "%6 = i0 %x : tensor<3x4xf32>",
        "%7 = special_i0e %x : tensor<3x4xf32>",
        "%8 = special_i1 %x : tensor<3x4xf32>",
        "%9 = special_i1e %x : tensor<3x4xf32>",
        "%10 = special_zeta %x, %y : tensor<3x4xf32>",
        "%11 = nextafter %x, %y : tensor<3x4xf32>",
        "%12 = gcd %e, %e : tensor<4xi32>",
        "%13 = lcm %e, %e : tensor<4xi32>",
        "%14 = bitwise_left_shift %e, 3 : tensor<4xi32>",
        "%15 = bitwise_right_shift %e, %e : tensor<4xi32>",
        "%16 = special_chebyshev_polynomial_t %x, %y : tensor<3x4xf32>",
        "%17 = special_hermite_polynomial_he %e, 5 : tensor<4xf32>",
        "%18 = igamma %x, %y : tensor<3x4xf32>",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// Issue 20's shape, selection and creation ops trace under PyTorch's
/// names, with its attributes and result types (views, several results of
/// several operands, creation from nothing).
#[test]
fn traced_shape_selection_creation() {
    let specs = [
        TensorSpec::new([2, 3, 4], DType::F32).name("x"),
        TensorSpec::new([3], DType::F32).name("v"),
        TensorSpec::new([4], DType::I64).name("w"),
    ];
    let traced = trace(&specs, |x| {
        let (kv, ki) = x[0].kthvalue(2, -1, false);
        let (mv, _) = x[0].median_dim(1, true);
        let (_, oi) = x[2].mode(0, false);
        let grid = kiln::meshgrid(&[&x[1], &x[0].select(0, 0).select(0, 0)], "xy");
        let both = kiln::broadcast_tensors(&[&x[2], &x[0]]);
        vec![
            x[0].diagonal(1, 1, 2),
            x[1].diag(-1),
            x[0].diag_embed(0, -2, -1),
            x[1].diagflat(1),
            x[0].diagonal_scatter(&x[0].diagonal(0, 0, 1), 0, 0, 1),
            x[0].unfold(2, 2, 1),
            x[0].as_strided(&[2, 2], &[1, 2], Some(3)),
            kv,
            ki,
            mv,
            x[1].median(),
            x[1].nanmedian(),
            oi,
            grid[0].clone(),
            both[1].clone(),
            x[0].zeros_like(None),
            x[0].full_like(2.5, Some(DType::F64)),
            kiln::logspace(0.0, 2.0, 3, 2.0, None),
            kiln::tril_indices(3, 3, 0),
            kiln::triu_indices(3, 4, 1),
            kiln::empty(&[2, 2], Some(DType::I32)),
            kiln::empty_strided(&[2, 3], &[1, 2], None),
        ]
    })
    .unwrap();
    let text = traced.to_string();
    for line in [
        "= diagonal %x {offset = 1, dim1 = 1, dim2 = 2} : tensor<2x3xf32>",
        "= diag %v {diagonal = -1} : tensor<4x4xf32>",
        "= diag_embed %x : tensor<2x3x4x4xf32>",
        "= diagflat %v {offset = 1} : tensor<4x4xf32>",
        "= unfold %x {dimension = 2, size = 2, step = 1} : tensor<2x3x3x2xf32>",
        "= as_strided %x {size = [2, 2], stride = [1, 2], storage_offset = 3} : tensor<2x2xf32>",
        "= kthvalue %x {k = 2, dim = -1} : (tensor<2x3xf32>, tensor<2x3xi64>)",
        "= median %x {dim = 1, keepdim = true} : (tensor<2x1x4xf32>, tensor<2x1x4xi64>)",
        "= median %v : tensor<f32>",
        "= nanmedian %v : tensor<f32>",
        "= mode %w {dim = 0} : (tensor<i64>, tensor<i64>)",
        "{indexing = \"xy\"} : (tensor<4x3xf32>, tensor<4x3xf32>)",
        "= broadcast_tensors [%w, %x] : (tensor<2x3x4xi64>, tensor<2x3x4xf32>)",
        "= zeros_like %x : tensor<2x3x4xf32>",
        "= full_like %x {fill_value = 2.5, dtype = f64} : tensor<2x3x4xf64>",
        "= logspace {start = 0.0, end = 2.0, steps = 3, base = 2.0} : tensor<3xf32>",
        "= tril_indices {row = 3, col = 3} : tensor<2x6xi64>",
        "= triu_indices {row = 3, col = 4, offset = 1} : tensor<2x6xi64>",
        "= empty {size = [2, 2], dtype = i32} : tensor<2x2xi32>",
        "= empty_strided {size = [2, 3], stride = [1, 2]} : tensor<2x3xf32>",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}
