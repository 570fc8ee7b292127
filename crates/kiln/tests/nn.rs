//! `kiln::nn`: each block against values worked out by hand (or by a naive
//! loop written here), the parameter store's errors, and GPT-2 and Llama
//! written with `kiln::nn` (the examples) against transformers' logits for
//! the tiny random-weight models of `tests/data/nn/` (BERT's and ViT's
//! hidden states and pooled outputs too)
//! (`tests/data/generate_nn_models.py` made them), and the ResNet
//! example's block against torchvision's `BasicBlock`.
//!
//! Every program runs on the default backend (Cranelift) and on the
//! interpreter backend.

#[path = "../examples/bert.rs"]
#[allow(dead_code)]
mod bert;
#[path = "../examples/gpt2.rs"]
#[allow(dead_code)]
mod gpt2;
#[path = "../examples/llama.rs"]
#[allow(dead_code)]
mod llama;
#[path = "../examples/mobilenet_v3.rs"]
#[allow(dead_code)]
mod mobilenet_v3;
#[path = "../examples/resnet.rs"]
#[allow(dead_code)]
mod resnet;
#[path = "../examples/vit.rs"]
#[allow(dead_code)]
mod vit;

use std::path::PathBuf;

use half::{bf16, f16};
use kiln::nn::{
    Activation, Attention, AttentionConfig, Dropout, Embedding, LayerNorm, Linear, Module, RmsNorm,
    RotaryEmbedding, TracedModel, VarStore, merge_heads, rotate_half, split_heads,
};
use kiln::runtime::Tensor as HostTensor;
use kiln::{BackendKind, Compiler, DType, Device, ErrorKind, TensorSpec};

fn host(values: &[f32], shape: &[i64]) -> HostTensor {
    HostTensor::from_vec(values.to_vec(), shape).unwrap()
}

fn store(tensors: Vec<(&str, HostTensor)>) -> VarStore {
    VarStore::from_tensors(
        "test.safetensors",
        tensors.into_iter().map(|(n, t)| (n.to_string(), t)),
    )
}

fn values(t: &HostTensor) -> Vec<f64> {
    t.values().into_iter().map(|v| v.f64()).collect()
}

/// Runs a traced model on Cranelift and on the interpreter backend,
/// checks they agree, and returns Cranelift's first result.
fn run(model: &TracedModel, inputs: &[HostTensor]) -> HostTensor {
    let cranelift = model.compile(Device::CPU).unwrap().run(inputs).unwrap();
    let interp = model
        .compile_with(&Compiler::new(BackendKind::Interp))
        .unwrap()
        .run(inputs)
        .unwrap();
    assert_eq!(cranelift[0].shape(), interp[0].shape());
    assert_eq!(cranelift[0].dtype(), interp[0].dtype());
    assert_close(&values(&cranelift[0]), &values(&interp[0]), 1e-5);
    cranelift.into_iter().next().unwrap()
}

/// Every |a - b| within `rel` times the largest |b| (or `rel` when that is
/// below 1).
fn assert_close(a: &[f64], b: &[f64], rel: f64) {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let worst = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(
        worst <= rel * scale,
        "largest difference {worst:e} > {rel:e} x {scale}\n  got      {a:?}\n  expected {b:?}"
    );
}

#[test]
fn linear_with_and_without_bias() {
    let vs = store(vec![
        ("fc.weight", host(&[1., 2., 3., 4., 5., 6.], &[3, 2])),
        ("fc.bias", host(&[0.5, -1., 2.], &[3])),
    ]);
    let with_bias = Linear::load(&vs.root().pp("fc"), 2, 3).unwrap();
    let without = Linear::load_no_bias(&vs.root().pp("fc"), 2, 3).unwrap();
    let x = TensorSpec::new([2, 2], DType::F32).name("x");
    let model = vs
        .trace(&[x], |xs| {
            (with_bias.forward(&xs[0]), without.forward(&xs[0]))
        })
        .unwrap();
    assert_eq!(model.param_names(), ["fc.weight", "fc.bias"]);
    let input = host(&[1., -1., 0., 2.], &[2, 2]);
    let y = run(&model, std::slice::from_ref(&input));
    // [1, -1] @ [[1, 3, 5], [2, 4, 6]] = [-1, -1, -1]; [0, 2] -> [4, 8, 12].
    assert_eq!(values(&y), [-0.5, -2., 1., 4.5, 7., 14.]);
    let outs = model.compile(Device::CPU).unwrap().run(&[input]).unwrap();
    assert_eq!(values(&outs[1]), [-1., -1., -1., 4., 8., 12.]);
}

#[test]
fn embedding_picks_rows() {
    let vs = store(vec![(
        "wte.weight",
        host(&[0., 1., 10., 11., 20., 21., 30., 31.], &[4, 2]),
    )]);
    let wte = Embedding::load(&vs.root().pp("wte"), 4, 2).unwrap();
    let spec = TensorSpec::new([1, 3], DType::I64).name("ids");
    let model = vs.trace(&[spec], |xs| wte.forward(&xs[0])).unwrap();
    let ids = HostTensor::from_vec(vec![3i64, 0, 2], &[1, 3]).unwrap();
    let y = run(&model, &[ids]);
    assert_eq!(y.shape(), [1, 3, 2]);
    assert_eq!(values(&y), [30., 31., 0., 1., 20., 21.]);
}

#[test]
fn layer_norm_by_hand() {
    let vs = store(vec![
        ("ln.weight", host(&[1., 1., 2., 2.], &[4])),
        ("ln.bias", host(&[0., 0., 1., 1.], &[4])),
    ]);
    let ln = LayerNorm::load(&vs.root().pp("ln"), 4, 1e-5).unwrap();
    let model = vs
        .trace(&[TensorSpec::new([1, 4], DType::F32)], |xs| {
            ln.forward(&xs[0])
        })
        .unwrap();
    let y = run(&model, &[host(&[1., 2., 3., 4.], &[1, 4])]);
    // mean 2.5, biased variance 1.25.
    let s = (1.25f64 + 1e-5).sqrt();
    let expected = [-1.5 / s, -0.5 / s, 2. * 0.5 / s + 1., 2. * 1.5 / s + 1.];
    assert_close(&values(&y), &expected, 1e-6);
}

#[test]
fn rms_norm_by_hand_and_in_f32_for_half_inputs() {
    let vs = store(vec![("norm.weight", host(&[1., 2.], &[2]))]);
    let norm = RmsNorm::load(&vs.root().pp("norm"), 2, 1e-6).unwrap();
    let model = vs
        .trace(&[TensorSpec::new([2, 2], DType::F32)], |xs| {
            norm.forward(&xs[0])
        })
        .unwrap();
    let y = run(&model, &[host(&[3., 4., 1., -1.], &[2, 2])]);
    // rms [3, 4] = √12.5, rms [1, -1] = 1.
    let r = (12.5f64 + 1e-6).sqrt();
    let one = (1.0f64 + 1e-6).sqrt();
    assert_close(&values(&y), &[3. / r, 8. / r, 1. / one, -2. / one], 1e-6);

    // f16 activations and weights: squares of 300 overflow f16 (9e4 >
    // 65504), so only statistics taken in f32 give a finite answer.
    let half = |v: &[f32]| {
        HostTensor::from_vec(
            v.iter().map(|&x| f16::from_f32(x)).collect(),
            &[v.len() as i64],
        )
        .unwrap()
    };
    let vs = store(vec![("norm.weight", half(&[1., 2.]))]);
    let norm = RmsNorm::load(&vs.root().pp("norm"), 2, 1e-6).unwrap();
    let model = vs
        .trace(&[TensorSpec::new([2], DType::F16)], |xs| {
            norm.forward(&xs[0])
        })
        .unwrap();
    let y = run(&model, &[half(&[300., 400.])]);
    assert_eq!(y.dtype(), DType::F16);
    assert_close(&values(&y), &[0.6 * 2f64.sqrt(), 1.6 * 2f64.sqrt()], 1e-3);
}

#[test]
fn dropout_is_the_identity_and_checks_p() {
    let d = Dropout::new(0.1).unwrap();
    assert_eq!(d.p(), 0.1);
    let traced = kiln::trace(&[TensorSpec::new([3], DType::F32)], |xs| {
        let y = d.forward(&xs[0]);
        assert_eq!(y, xs[0]);
        y
    })
    .unwrap();
    assert!(traced.to_string().contains("return %arg0"));
    let err = Dropout::new(1.5).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Attribute);
    assert!(err.message().contains("between 0 and 1"), "{err}");
}

#[test]
fn activations_by_name() {
    assert_eq!(
        Activation::from_name("gelu_new").unwrap(),
        Activation::GeluTanh
    );
    assert_eq!(Activation::from_name("swish").unwrap(), Activation::Silu);
    let err = Activation::from_name("quick_gelu").unwrap_err();
    assert!(err.message().contains("quick_gelu"), "{err}");
    let vs = store(vec![]);
    let model = vs
        .trace(&[TensorSpec::new([2], DType::F32)], |xs| {
            (
                Activation::Relu.forward(&xs[0]),
                Activation::Silu.forward(&xs[0]),
            )
        })
        .unwrap();
    let outs = model
        .compile(Device::CPU)
        .unwrap()
        .run(&[host(&[-1., 2.], &[2])])
        .unwrap();
    assert_eq!(values(&outs[0]), [0., 2.]);
    let silu = |x: f64| x / (1. + (-x).exp());
    assert_close(&values(&outs[1]), &[silu(-1.), silu(2.)], 1e-6);
}

#[test]
fn rotary_embedding_by_hand() {
    let rope = RotaryEmbedding::new(4, 10000.0).unwrap();
    assert!(RotaryEmbedding::new(3, 10000.0).is_err());
    let vs = store(vec![]);
    // [batch 1, heads 1, len 2, head_dim 4]
    let model = vs
        .trace(&[TensorSpec::new([1, 1, 2, 4], DType::F32)], |xs| {
            (
                rope.apply(&xs[0], 0),
                rotate_half(&xs[0]),
                rope.apply(&xs[0], 5),
            )
        })
        .unwrap();
    let x = [1., 2., 3., 4., 1., 2., 3., 4.];
    let input = host(&x, &[1, 1, 2, 4]);
    let outs = model.compile(Device::CPU).unwrap().run(&[input]).unwrap();
    assert_eq!(values(&outs[1]), [-3., -4., 1., 2., -3., -4., 1., 2.]);
    // inv_freq = [1, 1/100]; position p turns pair (x0, x2) by p and
    // (x1, x3) by p/100.
    let expect = |offset: f64| {
        let mut out = Vec::new();
        for p in [offset, offset + 1.] {
            let (a, b) = (p, p / 100.);
            out.extend([
                1. * a.cos() - 3. * a.sin(),
                2. * b.cos() - 4. * b.sin(),
                3. * a.cos() + 1. * a.sin(),
                4. * b.cos() + 2. * b.sin(),
            ]);
        }
        out
    };
    assert_close(&values(&outs[0]), &expect(0.), 1e-6);
    assert_close(&values(&outs[2]), &expect(5.), 1e-6);
}

#[test]
fn split_and_merge_heads_round_trip() {
    let vs = store(vec![]);
    let model = vs
        .trace(&[TensorSpec::new([1, 2, 6], DType::F32)], |xs| {
            let heads = split_heads(&xs[0], 3);
            assert_eq!(heads.shape(), Some(vec![1, 3, 2, 2]));
            (heads.contiguous(), merge_heads(&heads))
        })
        .unwrap();
    let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let outs = model
        .compile(Device::CPU)
        .unwrap()
        .run(&[host(&x, &[1, 2, 6])])
        .unwrap();
    // head h of position t is x[t, 2h..2h+2].
    assert_eq!(
        values(&outs[0]),
        [0., 1., 6., 7., 2., 3., 8., 9., 4., 5., 10., 11.]
    );
    assert_eq!(
        values(&outs[1]),
        x.iter().map(|&v| v as f64).collect::<Vec<_>>()
    );
}

/// Causal attention of one sequence, written as loops: `q` `[hq][t][d]`,
/// `k`, `v` `[hkv][t][d]`, each key/value head serving `hq / hkv` query
/// heads in turn.
fn naive_attention(
    q: &[Vec<Vec<f64>>],
    k: &[Vec<Vec<f64>>],
    v: &[Vec<Vec<f64>>],
) -> Vec<Vec<Vec<f64>>> {
    let group = q.len() / k.len();
    q.iter()
        .enumerate()
        .map(|(h, qh)| {
            let (kh, vh) = (&k[h / group], &v[h / group]);
            qh.iter()
                .enumerate()
                .map(|(i, qi)| {
                    let scale = 1.0 / (qi.len() as f64).sqrt();
                    let scores: Vec<f64> = (0..=i)
                        .map(|j| qi.iter().zip(&kh[j]).map(|(a, b)| a * b).sum::<f64>() * scale)
                        .collect();
                    let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
                    let z: f64 = e.iter().sum();
                    (0..qi.len())
                        .map(|c| (0..=i).map(|j| e[j] / z * vh[j][c]).sum())
                        .collect()
                })
                .collect()
        })
        .collect()
}

#[test]
fn attention_one_head_by_hand() {
    let eye = host(&[1., 0., 0., 1.], &[2, 2]);
    let vs = store(vec![
        ("attn.q_proj.weight", eye.clone()),
        ("attn.k_proj.weight", eye.clone()),
        ("attn.v_proj.weight", eye.clone()),
        ("attn.o_proj.weight", eye),
    ]);
    let attn = Attention::load(&vs.root().pp("attn"), &AttentionConfig::new(2, 1)).unwrap();
    let model = vs
        .trace(&[TensorSpec::new([1, 2, 2], DType::F32)], |xs| {
            attn.forward(&xs[0])
        })
        .unwrap();
    let y = run(&model, &[host(&[1., 0., 0., 1.], &[1, 2, 2])]);
    // Position 0 sees itself; position 1 scores 0 and 1/√2.
    let p1 = 1.0 / (1.0 + (-(0.5f64).sqrt()).exp());
    assert_close(&values(&y), &[1., 0., 1. - p1, p1], 1e-6);
}

#[test]
fn grouped_query_attention_with_rotary_against_loops() {
    // hidden 4, 4 query heads, 2 key/value heads of size 2 (so rotary has
    // one pair per head), 3 positions.
    let (hidden, hq, hkv, d, len) = (4usize, 4usize, 2usize, 2usize, 3usize);
    let w = |n: usize, seed: f32| -> Vec<f32> {
        (0..n)
            .map(|i| (i as f32 * 0.37 + seed).sin() * 0.8)
            .collect()
    };
    let (wq, wk, wv, wo) = (
        w(hq * d * hidden, 0.1),
        w(hkv * d * hidden, 1.3),
        w(hkv * d * hidden, 2.9),
        w(hidden * hq * d, 4.2),
    );
    let vs = store(vec![
        (
            "q_proj.weight",
            host(&wq, &[(hq * d) as i64, hidden as i64]),
        ),
        (
            "k_proj.weight",
            host(&wk, &[(hkv * d) as i64, hidden as i64]),
        ),
        (
            "v_proj.weight",
            host(&wv, &[(hkv * d) as i64, hidden as i64]),
        ),
        (
            "o_proj.weight",
            host(&wo, &[hidden as i64, (hq * d) as i64]),
        ),
    ]);
    let config = AttentionConfig::new(hidden as i64, hq as i64)
        .num_kv_heads(hkv as i64)
        .head_dim(d as i64);
    let attn = Attention::load(&vs.root(), &config).unwrap();
    let rope = RotaryEmbedding::new(d as i64, 10000.0).unwrap();
    let model = vs
        .trace(
            &[TensorSpec::new([1, len as i64, hidden as i64], DType::F32)],
            |xs| attn.forward_with(&xs[0], Some(&rope), None),
        )
        .unwrap();
    let x = w(len * hidden, 7.7);
    let y = run(&model, &[host(&x, &[1, len as i64, hidden as i64])]);

    // The same by loops.
    let x: Vec<Vec<f64>> = x
        .chunks(hidden)
        .map(|r| r.iter().map(|&v| v as f64).collect())
        .collect();
    let project = |w: &[f32], heads: usize| -> Vec<Vec<Vec<f64>>> {
        (0..heads)
            .map(|h| {
                (0..len)
                    .map(|t| {
                        (0..d)
                            .map(|c| {
                                let row = &w[(h * d + c) * hidden..][..hidden];
                                row.iter().zip(&x[t]).map(|(a, b)| *a as f64 * b).sum()
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect()
    };
    // head_dim 2: inv_freq [1], position t turns (a, b) by t.
    let rotate = |heads: Vec<Vec<Vec<f64>>>| -> Vec<Vec<Vec<f64>>> {
        heads
            .into_iter()
            .map(|h| {
                h.into_iter()
                    .enumerate()
                    .map(|(t, e)| {
                        let (c, s) = ((t as f64).cos(), (t as f64).sin());
                        vec![e[0] * c - e[1] * s, e[1] * c + e[0] * s]
                    })
                    .collect()
            })
            .collect()
    };
    let q = rotate(project(&wq, hq));
    let k = rotate(project(&wk, hkv));
    let v = project(&wv, hkv);
    let heads = naive_attention(&q, &k, &v);
    let mut expected = Vec::new();
    for t in 0..len {
        let merged: Vec<f64> = (0..hq).flat_map(|h| heads[h][t].clone()).collect();
        for o in 0..hidden {
            let row = &wo[o * hq * d..][..hq * d];
            expected.push(
                row.iter()
                    .zip(&merged)
                    .map(|(a, b)| *a as f64 * b)
                    .sum::<f64>(),
            );
        }
    }
    assert_close(&values(&y), &expected, 1e-5);
}

#[test]
fn attention_config_errors() {
    let vs = store(vec![]);
    let err =
        Attention::load(&vs.root(), &AttentionConfig::new(64, 4).num_kv_heads(3)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Attribute);
    assert!(err.message().contains("4 query heads"), "{err}");
    let err = Attention::load(&vs.root(), &AttentionConfig::new(10, 4)).unwrap_err();
    assert!(err.message().contains("not divisible"), "{err}");
}

// ---- the parameter store's errors ----

#[test]
fn a_missing_parameter_is_named_with_the_file() {
    let vs = store(vec![("transformer.wte.weight", host(&[0.; 8], &[4, 2]))]);
    let err = Embedding::load(&vs.root().pp("wte"), 4, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert_eq!(
        err.message(),
        "parameter 'wte.weight' is missing from test.safetensors (it has 'transformer.wte.weight')"
    );
    let err = Linear::load(&vs.root().pp("h").pp(0).pp("fc"), 2, 2).unwrap_err();
    assert_eq!(
        err.message(),
        "parameter 'h.0.fc.weight' is missing from test.safetensors"
    );
}

#[test]
fn a_parameter_of_the_wrong_shape_or_dtype_says_expected_and_found() {
    let vs = store(vec![
        ("fc.weight", host(&[0.; 6], &[3, 2])),
        ("fc.bias", host(&[0.; 2], &[2])),
    ]);
    let err = Linear::load(&vs.root().pp("fc"), 3, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert_eq!(
        err.message(),
        "parameter 'fc.weight' in test.safetensors has shape [3, 2], expected [2, 3]"
    );
    let err = Linear::load(&vs.root().pp("fc"), 2, 3).unwrap_err();
    assert_eq!(
        err.message(),
        "parameter 'fc.bias' in test.safetensors has shape [2], expected [3]"
    );

    let halves: Vec<bf16> = [1.0f32, 2.0].iter().map(|&x| bf16::from_f32(x)).collect();
    let vs = store(vec![(
        "norm.weight",
        HostTensor::from_vec(halves, &[2]).unwrap(),
    )]);
    assert_eq!(vs.dtype(), Some(DType::BF16));
    assert!(RmsNorm::load(&vs.root().pp("norm"), 2, 1e-6).is_ok());
    let err =
        RmsNorm::load(&vs.root().with_dtype(Some(DType::F32)).pp("norm"), 2, 1e-6).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert_eq!(
        err.message(),
        "parameter 'norm.weight' in test.safetensors has dtype bf16, expected f32"
    );
}

#[test]
fn a_missing_file_is_an_error() {
    let err = VarStore::load("/nonexistent/model.safetensors").unwrap_err();
    assert!(
        err.message().contains("/nonexistent/model.safetensors"),
        "{err}"
    );
}

#[test]
fn parameters_outside_their_trace_are_errors() {
    let vs = store(vec![("fc.weight", host(&[1., 0., 0., 1.], &[2, 2]))]);
    let fc = Linear::load_no_bias(&vs.root().pp("fc"), 2, 2).unwrap();
    let spec = [TensorSpec::new([1, 2], DType::F32)];

    let err = kiln::trace(&spec, |xs| fc.forward(&xs[0])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert_eq!(
        err.message(),
        "parameter 'fc.weight' is used outside VarStore::trace"
    );

    let other = store(vec![]);
    let err = other.trace(&spec, |xs| fc.forward(&xs[0])).unwrap_err();
    assert!(err.message().contains("another VarStore"), "{err}");

    // Loading an already declared parameter again inside the trace is
    // fine (it has its input); a missing one is the usual load error.
    let y = vs.trace(&spec, |xs| {
        assert!(Linear::load_no_bias(&vs.root().pp("fc2"), 2, 2).is_err());
        let again = Linear::load_no_bias(&vs.root().pp("fc"), 2, 2).unwrap();
        again.forward(&xs[0])
    });
    assert!(y.is_ok());

    let vs = store(vec![
        ("a.weight", host(&[1., 0., 0., 1.], &[2, 2])),
        ("b.weight", host(&[1., 0., 0., 1.], &[2, 2])),
    ]);
    let a = Linear::load_no_bias(&vs.root().pp("a"), 2, 2).unwrap();
    let err = vs
        .trace(&spec, |xs| {
            let b = Linear::load_no_bias(&vs.root().pp("b"), 2, 2).unwrap();
            b.forward(&a.forward(&xs[0]))
        })
        .unwrap_err();
    assert_eq!(
        err.message(),
        "parameter 'b.weight' is used after VarStore::trace began (load the model before tracing it)"
    );
}

#[test]
fn a_compiled_model_takes_only_the_callers_inputs() {
    let vs = store(vec![("fc.weight", host(&[1., 0., 0., 1.], &[2, 2]))]);
    let fc = Linear::load_no_bias(&vs.root().pp("fc"), 2, 2).unwrap();
    let model = vs
        .trace(&[TensorSpec::new([1, 2], DType::F32).name("x")], |xs| {
            fc.forward(&xs[0])
        })
        .unwrap();
    assert!(
        model
            .to_string()
            .starts_with("func @main(%x: tensor<1x2xf32>, %fc.weight: tensor<2x2xf32>)")
    );
    assert_eq!(model.num_inputs(), 1);
    let compiled = model.compile(Device::CPU).unwrap();
    let err = compiled.run(&[]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert!(err.message().contains("takes 1 input"), "{err}");
    let y = compiled.run(&[host(&[2., 3.], &[1, 2])]).unwrap();
    assert_eq!(values(&y[0]), [2., 3.]);
    // The reference interpreter, with no passes, agrees.
    let y = model.interpret(&[host(&[2., 3.], &[1, 2])]).unwrap();
    assert_eq!(values(&y[0]), [2., 3.]);
}

// ---- whole models against transformers ----

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/nn")
        .join(name)
}

/// `input_ids` and transformers' `logits` for a model.
fn reference(name: &str) -> (HostTensor, Vec<f64>) {
    let io = kiln::runtime::io::read_safetensors(&data(&format!("{name}_io.safetensors"))).unwrap();
    (io["input_ids"].clone(), values(&io["logits"]))
}

#[test]
fn gpt2_matches_transformers() {
    let config = gpt2::Gpt2Config::from_json_file(&data("gpt2_config.json")).unwrap();
    let vs = VarStore::load(data("gpt2.safetensors")).unwrap();
    let model = gpt2::Gpt2::load(&vs.root(), &config).unwrap();
    let (ids, expected) = reference("gpt2");
    let traced = model.trace(&vs, 1, 16).unwrap();
    assert_eq!(traced.param_names().len(), 2 + 12 * 2 + 2);
    let logits = run(&traced, std::slice::from_ref(&ids));
    assert_eq!(logits.shape(), [1, 16, 100]);
    assert_close(&values(&logits), &expected, 1e-4);

    // f16 weights: the same model in f16, to f16's precision.
    let vs16 = vs.to_dtype(DType::F16).unwrap();
    let model16 = gpt2::Gpt2::load(&vs16.root(), &config).unwrap();
    let logits16 = model16
        .trace(&vs16, 1, 16)
        .unwrap()
        .compile(Device::CPU)
        .unwrap()
        .run(&[ids])
        .unwrap();
    assert_eq!(logits16[0].dtype(), DType::F16);
    assert_close(&values(&logits16[0]), &expected, 5e-3);
}

#[test]
fn llama_matches_transformers() {
    let config = llama::LlamaConfig::from_json_file(&data("llama_config.json")).unwrap();
    assert_eq!(
        (config.num_attention_heads, config.num_key_value_heads),
        (4, 2)
    );
    let vs = VarStore::load(data("llama.safetensors")).unwrap();
    let model = llama::Llama::load(&vs.root(), &config).unwrap();
    let (ids, expected) = reference("llama");
    let traced = model.trace(&vs, 1, 16).unwrap();
    let logits = run(&traced, std::slice::from_ref(&ids));
    assert_eq!(logits.shape(), [1, 16, 100]);
    assert_close(&values(&logits), &expected, 1e-4);

    // bf16 weights (RMS norm's statistics in f32), to bf16's precision.
    let vsb = vs.to_dtype(DType::BF16).unwrap();
    let modelb = llama::Llama::load(&vsb.root(), &config).unwrap();
    let logitsb = modelb
        .trace(&vsb, 1, 16)
        .unwrap()
        .compile(Device::CPU)
        .unwrap()
        .run(&[ids])
        .unwrap();
    assert_eq!(logitsb[0].dtype(), DType::BF16);
    assert_close(&values(&logitsb[0]), &expected, 4e-2);
}

/// The Llama checkpoint split into two shards with a Hugging Face index
/// file loads as the whole file does and gives the same logits; a tensor
/// the index lists in a shard that lacks it, and a missing shard, are
/// errors naming them.
#[test]
fn a_sharded_checkpoint_loads_through_its_index() {
    let config = llama::LlamaConfig::from_json_file(&data("llama_config.json")).unwrap();
    let whole = VarStore::load(data("llama.safetensors")).unwrap();
    let dir = std::env::temp_dir().join(format!("kiln-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let names: Vec<&str> = whole.names().collect();
    let mut weight_map = serde_json::Map::new();
    for (k, part) in names.chunks(names.len().div_ceil(2)).enumerate() {
        let shard = format!("model-0000{}-of-00002.safetensors", k + 1);
        let tensors: Vec<(String, &HostTensor)> = part
            .iter()
            .map(|n| (n.to_string(), whole.tensor(n).unwrap()))
            .collect();
        kiln::runtime::io::write_safetensors(&dir.join(&shard), &tensors).unwrap();
        for n in part {
            weight_map.insert(n.to_string(), shard.clone().into());
        }
    }
    let index = dir.join("model.safetensors.index.json");
    let write_index = |map: &serde_json::Map<String, serde_json::Value>| {
        let json = serde_json::json!({"metadata": {"total_size": 0}, "weight_map": map});
        std::fs::write(&index, json.to_string()).unwrap();
    };
    write_index(&weight_map);
    let vs = VarStore::load(&index).unwrap();
    assert_eq!(vs.names().count(), names.len());
    let model = llama::Llama::load(&vs.root(), &config).unwrap();
    let (ids, expected) = reference("llama");
    let logits = run(&model.trace(&vs, 1, 16).unwrap(), &[ids]);
    assert_close(&values(&logits), &expected, 1e-4);

    let mut wrong = weight_map.clone();
    wrong.insert(
        "model.norm.weight".into(),
        "model-00001-of-00002.safetensors".into(),
    );
    write_index(&wrong);
    let e = VarStore::load(&index).err().unwrap();
    assert!(
        e.message().ends_with(
            "'model.norm.weight' is listed in model-00001-of-00002.safetensors, which does not hold it"
        ),
        "{e}"
    );
    std::fs::remove_file(dir.join("model-00002-of-00002.safetensors")).unwrap();
    write_index(&weight_map);
    assert!(VarStore::load(&index).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gpt2_checkpoint_with_a_missing_layer_says_which() {
    let config = gpt2::Gpt2Config::from_json_file(&data("gpt2_config.json")).unwrap();
    let mut three = config.clone();
    three.n_layer = 3;
    let vs = VarStore::load(data("gpt2.safetensors")).unwrap();
    let err = gpt2::Gpt2::load(&vs.root(), &three).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert!(
        err.message()
            .starts_with("parameter 'h.2.ln_1.weight' is missing from "),
        "{err}"
    );
    let mut wide = config;
    wide.n_positions = 64;
    let err = gpt2::Gpt2::load(&vs.root(), &wide).unwrap_err();
    assert!(
        err.message().contains("'wpe.weight'")
            && err
                .message()
                .ends_with("has shape [32, 64], expected [64, 64]"),
        "{err}"
    );
}

#[test]
fn llama_with_a_key_value_cache_matches_the_whole_sequence() {
    // Positions 0..5 as a prompt, 5..9 as a chunk after a cache (the
    // causal mask shifted by the cache), then 9..16 one at a time: each
    // step's logits are transformers' rows for those positions. The cache
    // has a static length: three programs in all (chunks of 5, 4 and 1).
    let config = llama::LlamaConfig::from_json_file(&data("llama_config.json")).unwrap();
    let vs = VarStore::load(data("llama.safetensors")).unwrap();
    let model = llama::Llama::load(&vs.root(), &config).unwrap();
    let (ids, expected) = reference("llama");
    let ids: Vec<i64> = ids.to_vec().unwrap();
    let mut generator = kiln::nn::Generator::new(&model, &vs, DType::F32, 16).unwrap();
    let mut chunks = vec![0..5, 5..9];
    chunks.extend((9..16).map(|i| i..i + 1));
    for range in chunks {
        let logits = generator.feed(&ids[range.clone()]).unwrap();
        assert_eq!(logits.shape(), [1, range.len() as i64, 100]);
        assert_close(
            &values(&logits),
            &expected[range.start * 100..range.end * 100],
            1e-4,
        );
        assert_eq!(generator.len(), range.end as i64);
    }
    assert_eq!(generator.programs(), 3);
    let full = generator.feed(&[1]).unwrap_err();
    assert_eq!(
        full.message(),
        "the key/value cache holds 16 positions: 1 more after 16 do not fit"
    );
}

/// Greedy generation of 32 tokens after an 8-token prompt with the static
/// cache: the tokens transformers' `generate` gives
/// (`tests/data/nn/llama_generate.safetensors`, whose smallest gap between
/// the two largest logits is 0.023: no step is a near tie), with two
/// compiled programs (the prompt's and the one-token step's).
#[test]
fn llama_greedy_generation_matches_transformers_generate() {
    let config = llama::LlamaConfig::from_json_file(&data("llama_config.json")).unwrap();
    let vs = VarStore::load(data("llama.safetensors")).unwrap();
    let model = llama::Llama::load(&vs.root(), &config).unwrap();
    let io = kiln::runtime::io::read_safetensors(&data("llama_generate.safetensors")).unwrap();
    let get = |name: &str| -> Vec<i64> { io[name].to_vec().unwrap() };
    let (prompt, expected) = (get("prompt"), get("generated"));
    let mut generator = kiln::nn::Generator::new(&model, &vs, DType::F32, 40).unwrap();
    assert_eq!(generator.generate(&prompt, 32).unwrap(), expected);
    assert_eq!(generator.programs(), 2);
}

/// GPT-2 through the same generator (its attention over the static cache
/// with `attend_static`, learned positions looked up at run time): the 24
/// tokens transformers' `generate` appends to an 8-token prompt (all the
/// tiny model's 32 positions; smallest top-2 gap 0.025), two programs.
#[test]
fn gpt2_greedy_generation_matches_transformers_generate() {
    let config = gpt2::Gpt2Config::from_json_file(&data("gpt2_config.json")).unwrap();
    let vs = VarStore::load(data("gpt2.safetensors")).unwrap();
    let model = gpt2::Gpt2::load(&vs.root(), &config).unwrap();
    let io = kiln::runtime::io::read_safetensors(&data("gpt2_generate.safetensors")).unwrap();
    let get = |name: &str| -> Vec<i64> { io[name].to_vec().unwrap() };
    let (prompt, expected) = (get("prompt"), get("generated"));
    let mut generator = kiln::nn::Generator::new(&model, &vs, DType::F32, 32).unwrap();
    assert_eq!(generator.generate(&prompt, 24).unwrap(), expected);
    assert_eq!(generator.programs(), 2);
    // A one-token step may write every layer's caches in place (the
    // generator gives them up to it).
    let step = kiln::nn::CausalLm::trace_step(&model, &vs, 1, 32, DType::F32)
        .unwrap()
        .compile(kiln::Device::CPU)
        .unwrap();
    let plan = step.compiled().kernel_plan().unwrap().unwrap();
    assert_eq!(
        plan.matches("if donated").count(),
        2 * config.n_layer as usize,
        "{plan}"
    );
}

/// BERT written with `kiln::nn` (the example) against transformers'
/// `BertModel`: token types, a padded second sequence (its last four
/// positions masked as keys), hidden states and pooled output within 1e-4
/// of the largest value, on Cranelift and the interpreter.
#[test]
fn bert_matches_transformers() {
    let config = bert::BertConfig::from_json_file(&data("bert_config.json")).unwrap();
    let vs = VarStore::load(data("bert.safetensors")).unwrap();
    let model = bert::Bert::load(&vs.root(), &config).unwrap();
    let io = kiln::runtime::io::read_safetensors(&data("bert_io.safetensors")).unwrap();
    let inputs = ["input_ids", "token_type_ids", "attention_mask"].map(|n| io[n].clone());
    let traced = model.trace(&vs, 2, 12).unwrap();
    for backend in [BackendKind::Cranelift, BackendKind::Interp] {
        let outputs = traced
            .compile_with(&Compiler::new(backend))
            .unwrap()
            .run(&inputs)
            .unwrap();
        assert_eq!(outputs[0].shape(), [2, 12, 64]);
        assert_eq!(outputs[1].shape(), [2, 64]);
        assert_close(
            &values(&outputs[0]),
            &values(&io["last_hidden_state"]),
            1e-4,
        );
        assert_close(&values(&outputs[1]), &values(&io["pooler_output"]), 1e-4);
    }
}

/// ViT written with `kiln::nn` (the example: patch convolution, `[CLS]`,
/// pre-norm layers over `kiln::nn::Attention`) against transformers'
/// `ViTModel` on two images: hidden states and pooled output within 1e-4
/// of the largest value, on Cranelift and the interpreter.
#[test]
fn vit_matches_transformers() {
    let config = vit::VitConfig::from_json_file(&data("vit_config.json")).unwrap();
    let vs = VarStore::load(data("vit.safetensors")).unwrap();
    let model = vit::Vit::load(&vs.root(), &config).unwrap();
    let io = kiln::runtime::io::read_safetensors(&data("vit_io.safetensors")).unwrap();
    let traced = model.trace(&vs, 2).unwrap();
    for backend in [BackendKind::Cranelift, BackendKind::Interp] {
        let outputs = traced
            .compile_with(&Compiler::new(backend))
            .unwrap()
            .run(std::slice::from_ref(&io["pixel_values"]))
            .unwrap();
        assert_eq!(outputs[0].shape(), [2, 17, 64]);
        assert_close(
            &values(&outputs[0]),
            &values(&io["last_hidden_state"]),
            1e-4,
        );
        assert_close(&values(&outputs[1]), &values(&io["pooler_output"]), 1e-4);
    }
}

/// torchvision's ResNet `BasicBlock` (stride 2 with a 1×1 downsample,
/// random weights and batch-norm statistics, eval mode) written with
/// `Conv2d` and `BatchNorm2d`: PyTorch's output within 1e-5.
#[test]
fn resnet_basic_block_matches_torchvision() {
    use kiln::ConvOptions;
    use kiln::nn::{BatchNorm2d, Conv2d};
    let vs = VarStore::load(data("basic_block.safetensors")).unwrap();
    let root = vs.root();
    let conv = |name: &str, cin, cout, k, options: ConvOptions| {
        Conv2d::load(&root.pp(name), cin, cout, [k, k], options, false).unwrap()
    };
    let bn = |name: &str| BatchNorm2d::load(&root.pp(name), 6, 1e-5).unwrap();
    let stride2 = || ConvOptions::default().stride(&[2]).padding(&[1]);
    let (conv1, bn1) = (conv("conv1", 4, 6, 3, stride2()), bn("bn1"));
    let (conv2, bn2) = (
        conv("conv2", 6, 6, 3, ConvOptions::default().padding(&[1])),
        bn("bn2"),
    );
    let (down, down_bn) = (
        conv("downsample.0", 4, 6, 1, ConvOptions::default().stride(&[2])),
        bn("downsample.1"),
    );
    let model = vs
        .trace(&[TensorSpec::new([2, 4, 8, 8], DType::F32)], |xs| {
            let x = &xs[0];
            let y = bn1.forward(&conv1.forward(x)).relu();
            let y = bn2.forward(&conv2.forward(&y));
            let identity = down_bn.forward(&down.forward(x));
            (&y + &identity).relu()
        })
        .unwrap();
    let input = vs.tensor("input").unwrap().clone();
    let y = run(&model, &[input]);
    assert_close(&values(&y), &values(vs.tensor("expected").unwrap()), 1e-5);
}

/// The ResNet example's residual block, loaded by torchvision's names,
/// against torchvision's `BasicBlock` with a downsampling shortcut: the
/// same 1e-5 as the block written out above.
#[test]
fn resnet_example_block_matches_torchvision() {
    let vs = VarStore::load(data("basic_block.safetensors")).unwrap();
    let (block, channels) = resnet::Block::load(&vs.root(), 4, 6, 2, false).unwrap();
    assert_eq!(channels, 6);
    let model = vs
        .trace(&[TensorSpec::new([2, 4, 8, 8], DType::F32)], |xs| {
            block.forward(&xs[0])
        })
        .unwrap();
    let input = vs.tensor("input").unwrap().clone();
    let y = run(&model, &[input]);
    assert_close(&values(&y), &values(vs.tensor("expected").unwrap()), 1e-5);
}

/// The example reads ResNet-18's architecture from a checkpoint's names:
/// four stages of two basic blocks, 1000 classes; a checkpoint without
/// stages is refused by name.
#[test]
fn resnet_example_reads_the_architecture_from_names() {
    let vs = resnet::random_resnet18(10).unwrap();
    let model = resnet::ResNet::load(&vs.root()).unwrap();
    assert_eq!(
        (model.blocks, model.bottleneck, model.num_classes),
        ([2; 4], false, 10)
    );
    let traced = model.trace(&vs, 1, [32, 32]).unwrap();
    let image = host(
        &(0..3 * 32 * 32)
            .map(|i| (i % 7) as f32 / 7.0)
            .collect::<Vec<_>>(),
        &[1, 3, 32, 32],
    );
    let logits = run(&traced, &[image]);
    assert_eq!(logits.shape(), &[1, 10]);

    let partial = store(vec![("conv1.weight", host(&[0.0; 3 * 49], &[1, 3, 7, 7]))]);
    let err = resnet::ResNet::load(&partial.root()).unwrap_err();
    assert!(
        err.to_string().contains("no layer1.0.conv1.weight"),
        "{err}"
    );
}

/// The MobileNetV3 example on its random small model: the variant and
/// classes read from the checkpoint, Cranelift equal to the interpreter
/// (squeeze-and-excitation, depthwise convolutions, residuals); a
/// checkpoint with another number of blocks is refused by name.
#[test]
fn mobilenet_example_loads_and_runs() {
    let vs = mobilenet_v3::random_small(7).unwrap();
    let model = mobilenet_v3::MobileNetV3::load(&vs.root()).unwrap();
    assert_eq!((model.variant, model.num_classes), ("small", 7));
    let traced = model.trace(&vs, 1, [32, 32]).unwrap();
    let image = host(
        &(0..3 * 32 * 32)
            .map(|i| (i % 11) as f32 / 11.0 - 0.5)
            .collect::<Vec<_>>(),
        &[1, 3, 32, 32],
    );
    assert_eq!(run(&traced, &[image]).shape(), &[1, 7]);
    let partial = store(vec![(
        "features.1.block.0.0.weight",
        host(&[0.0; 9], &[1, 1, 3, 3]),
    )]);
    let err = mobilenet_v3::MobileNetV3::load(&partial.root()).unwrap_err();
    assert!(
        err.to_string().contains("1 inverted residual blocks"),
        "{err}"
    );
}

/// `Tensor::multi_head_attention_forward` traces the op with the
/// arguments as given: the traced program (on Cranelift and the
/// interpreter) equals the same op written in `.kir` (interpreted), with
/// the weights averaged over heads, per head, and not asked for.
#[test]
fn multi_head_attention_forward_traces_its_arguments() {
    use kiln::MultiHeadAttentionArgs;
    let (l, s, n, e, h) = (3i64, 4i64, 2i64, 4i64, 2i64);
    let wave = |len: i64, phase: f32| -> Vec<f32> {
        (0..len).map(|i| (i as f32 * 0.37 + phase).sin()).collect()
    };
    let mut mask = vec![0u8; (l * s) as usize];
    mask[1] = 1;
    let inputs = vec![
        host(&wave(l * n * e, 0.1), &[l, n, e]),
        host(&wave(s * n * e, 0.2), &[s, n, e]),
        host(&wave(3 * e * e, 0.3), &[3 * e, e]),
        host(&wave(3 * e, 0.4), &[3 * e]),
        host(&wave(e * e, 0.5), &[e, e]),
        HostTensor::from_vec(
            mask.into_iter().map(|m| m == 1).collect::<Vec<bool>>(),
            &[l, s],
        )
        .unwrap(),
    ];
    let specs = [
        TensorSpec::new([l, n, e], DType::F32).name("q"),
        TensorSpec::new([s, n, e], DType::F32).name("kv"),
        TensorSpec::new([3 * e, e], DType::F32).name("w"),
        TensorSpec::new([3 * e], DType::F32).name("b"),
        TensorSpec::new([e, e], DType::F32).name("ow"),
        TensorSpec::new([l, s], DType::Bool).name("m"),
    ];
    for (need, average, attrs) in [
        (true, true, ""),
        (true, false, ", average_attn_weights = false"),
        (false, true, ", need_weights = false"),
    ] {
        let traced = kiln::trace(&specs, |x| {
            let args = MultiHeadAttentionArgs::new(e, h, &x[2], &x[4])
                .in_proj_bias(&x[3])
                .attn_mask(&x[5], false)
                .weights(need, average);
            let (o, w) = x[0].multi_head_attention_forward(&x[1], &x[1], &args);
            assert_eq!(w.is_some(), need);
            let mut out = vec![o];
            out.extend(w);
            out
        })
        .unwrap();
        let weights_ty = match (need, average) {
            (true, true) => format!(", tensor<{n}x{l}x{s}xf32>"),
            (true, false) => format!(", tensor<{n}x{h}x{l}x{s}xf32>"),
            _ => String::new(),
        };
        let results = if need { "%o, %a" } else { "%o" };
        let text = format!(
            "func @main(%q: tensor<{l}x{n}x{e}xf32>, %kv: tensor<{s}x{n}x{e}xf32>, %w: tensor<{}x{e}xf32>, %b: tensor<{}xf32>, %ow: tensor<{e}x{e}xf32>, %m: tensor<{l}x{s}xbool>) -> (tensor<{l}x{n}x{e}xf32>{weights_ty}) {{
  {results} = multi_head_attention_forward %q, %kv, %kv, %w, %b, none, none, %ow, none, none, %m {{embed_dim_to_check = {e}, num_heads = {h}, training = false{attrs}}}
  return {results}
}}",
            3 * e,
            3 * e
        );
        let module = kiln::parse_module("mha.kir", &text, kiln::DefaultDType::F32).unwrap();
        let expected = kiln::runtime::interp::run(&module, &inputs).unwrap();
        assert_eq!(expected.len(), if need { 2 } else { 1 });
        let compiled = Compiler::new(BackendKind::Cranelift)
            .compile(traced.module())
            .unwrap()
            .run(&inputs)
            .unwrap();
        for got in [compiled, traced.interpret(&inputs).unwrap()] {
            for (g, x) in got.iter().zip(&expected) {
                assert_eq!(g.shape(), x.shape());
                assert_close(&values(g), &values(x), 1e-6);
            }
        }
    }
}
