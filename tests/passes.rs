//! The passes: every program of `tests/programs/` gives the same results on
//! the interpreter before and after each pass (bit for bit, layouts
//! included); the layout pass gives PyTorch's strides on every case of the
//! layout oracles written as a program; snapshots show the IR after each
//! pass.

use kiln::graph::{FuncBuilder, Operand};
use kiln::infer::InferCtx;
use kiln::{DType, DefaultDType, MemoryFormat, Module, Op, TensorType, TypeLayout};
use kiln_passes::PassManager;
use kiln_passes::layout::LayoutPass;
use kiln_runtime::{Tensor, interp};
use kiln_tests::{
    Mismatches, dtype, geometry, inputs_for, int_list, load, oracle, programs, runnable, scalar,
    tests_dir,
};
use serde_json::Value;

/// Results must be identical: dtype, shape, strides and every byte.
fn same_results(a: &[Tensor], b: &[Tensor]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} results vs {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.dtype() != y.dtype() || x.shape() != y.shape() || x.strides() != y.strides() {
            return Err(format!("result {i}: {x:?} vs {y:?}"));
        }
        if x.to_bytes() != y.to_bytes() {
            return Err(format!("result {i} differs:\n{x}\n{y}"));
        }
    }
    Ok(())
}

#[test]
fn every_pass_keeps_every_program_result_identical() {
    let pipeline = PassManager::standard();
    for (name, path) in programs() {
        let module = load(&path);
        if !runnable(&module) {
            continue;
        }
        let inputs = inputs_for(&module);
        let reference = interp::run(&module, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut current = module.clone();
        let mut failure = None;
        pipeline
            .run_observed(&mut current, |event| {
                if failure.is_some() {
                    return;
                }
                match interp::run(event.module, &inputs) {
                    Ok(got) => {
                        if let Err(e) = same_results(&reference, &got) {
                            failure = Some(format!(
                                "{name}: after {}: {e}\n{}",
                                event.name, event.module
                            ));
                        }
                    }
                    Err(e) => failure = Some(format!("{name}: after {}: {e}", event.name)),
                }
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Some(f) = failure {
            panic!("{f}");
        }
    }
}

#[test]
fn ir_after_each_pass_snapshots() {
    let pipeline = PassManager::standard();
    for (name, path) in programs() {
        let mut module = load(&path);
        let mut dump = String::new();
        pipeline
            .run_observed(&mut module, |event| {
                dump.push_str(&format!("// after {}\n{}", event.name, event.module));
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::with_settings!({
            snapshot_path => tests_dir().join("../snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("passes__{name}"), dump);
        });
    }
}

/// Builds `op` over parameters with the given types and runs the layout pass.
fn layout_of(
    op: Op,
    params: Vec<Result<TensorType, kiln::Scalar>>,
) -> Result<Vec<i64>, kiln::Error> {
    let mut b = FuncBuilder::new("main", InferCtx::default());
    let mut operands = Vec::new();
    for (i, p) in params.into_iter().enumerate() {
        match p {
            Ok(ty) => operands.push(Operand::Value(b.param(Some(&format!("x{i}")), ty)?)),
            Err(s) => operands.push(Operand::Scalar(s)),
        }
    }
    let v = b.push(op, operands, None)?;
    let mut module = Module::single(b.finish(vec![v], None)?, DefaultDType::F32);
    PassManager::new().with(LayoutPass).run(&mut module)?;
    let func = module.entry()?;
    Ok(func.ty(func.returns[0]).strides().unwrap().to_vec())
}

fn typed(input: &Value) -> TensorType {
    let g = geometry(input);
    TensorType::new(g.shape, dtype(&input["dtype"]).unwrap())
        .with_layout(TypeLayout::Strided(g.strides))
}

#[test]
fn layout_pass_gives_pytorch_strides_on_every_oracle_case() {
    let mut m = Mismatches::default();
    let table = oracle("memory_format.json");
    let inputs: std::collections::HashMap<i64, &Value> = table["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["id"].as_i64().unwrap(), i))
        .collect();
    let input = |id: &Value| typed(inputs[&id.as_i64().unwrap()]);
    let mut check = |what: String, got: Result<Vec<i64>, kiln::Error>, expected: &Value| {
        let ok = match (&got, expected.get("result"), expected.get("error")) {
            (Ok(s), Some(r), _) => *s == int_list(&r["strides"]),
            (Err(e), None, Some(msg)) => e.message().ends_with(msg.as_str().unwrap()),
            _ => false,
        };
        m.check(ok, || format!("{what}: Kiln {got:?}, PyTorch {expected}"));
    };
    for case in table["pointwise"].as_array().unwrap() {
        let params: Vec<Result<TensorType, kiln::Scalar>> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                if i.is_number() {
                    Ok(input(i))
                } else {
                    Err(scalar(i).unwrap())
                }
            })
            .collect();
        let op = match case["op"].as_str().unwrap() {
            "where" => Op::Where,
            name => Op::parse(name, Default::default()).unwrap(),
        };
        check(
            format!("{} {}", case["op"], case["note"]),
            layout_of(op, params),
            case,
        );
    }
    for case in table["like"].as_array().unwrap() {
        let call = case["call"].as_str().unwrap();
        let format = [
            ("channels_last_3d", MemoryFormat::ChannelsLast3d),
            ("channels_last", MemoryFormat::ChannelsLast),
            ("contiguous_format", MemoryFormat::Contiguous),
        ]
        .into_iter()
        .find(|(k, _)| call.contains(k))
        .map_or(MemoryFormat::Preserve, |(_, f)| f);
        // empty_like/ones_like/zeros_like/full_like lay out as clone does.
        let op = Op::Clone {
            memory_format: format,
            strides: None,
        };
        check(
            call.to_string(),
            layout_of(op, vec![Ok(input(&case["input"]))]),
            case,
        );
    }
    for case in table["contiguous_to"].as_array().unwrap() {
        let call = case["call"].as_str().unwrap();
        let format = [
            ("channels_last_3d", MemoryFormat::ChannelsLast3d),
            ("channels_last", MemoryFormat::ChannelsLast),
            ("contiguous_format", MemoryFormat::Contiguous),
            ("preserve_format", MemoryFormat::Preserve),
        ]
        .into_iter()
        .find(|(k, _)| call.contains(k))
        .map(|(_, f)| f);
        let x = input(&case["input"]);
        let op = if call.starts_with("x.contiguous(") {
            Op::Contiguous {
                memory_format: format.unwrap_or(MemoryFormat::Contiguous),
            }
        } else {
            let dtype = [("float64", DType::F64), ("float32", DType::F32)]
                .into_iter()
                .find(|(k, _)| call.contains(k))
                .map(|(_, d)| d);
            let device = call
                .contains("'meta'")
                .then_some(kiln::Device::META)
                .or(call.contains("'cpu'").then_some(kiln::Device::CPU));
            Op::To {
                dtype,
                device,
                memory_format: format.unwrap_or(MemoryFormat::Preserve),
                copy: call.contains("copy=True"),
            }
        };
        check(call.to_string(), layout_of(op, vec![Ok(x)]), case);
    }
    for case in table["reductions"].as_array().unwrap() {
        let dims = &case["dims"];
        let keepdim = case["keepdim"].as_bool().unwrap_or(false);
        let op = match case["op"].as_str().unwrap() {
            "softmax" => Op::Softmax {
                dim: dims.as_i64().unwrap(),
                dtype: None,
            },
            "log_softmax" => Op::LogSoftmax {
                dim: dims.as_i64().unwrap(),
                dtype: None,
            },
            "layer_norm" => Op::LayerNorm {
                normalized_shape: int_list(&case["normalized_shape"]),
                eps: kiln::F64(1e-5),
            },
            "argmax" => Op::ArgReduce {
                op: kiln::ArgReduceOp::Argmax,
                dim: dims.as_i64(),
                keepdim,
            },
            name => match Op::parse(name, Default::default()).unwrap() {
                Op::Reduce { op, .. } => Op::Reduce {
                    op,
                    dims: Some(int_list(dims)),
                    keepdim,
                    dtype: None,
                },
                Op::Mean { .. } => Op::Mean {
                    dims: Some(int_list(dims)),
                    keepdim,
                    dtype: None,
                },
                other => other,
            },
        };
        check(
            format!("{} {}", case["op"], case["dims"]),
            layout_of(op, vec![Ok(input(&case["input"]))]),
            case,
        );
    }
    for case in table["cat"].as_array().unwrap() {
        let params = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| Ok(input(i)))
            .collect();
        check(
            format!("cat {}", case["note"]),
            layout_of(
                Op::Cat {
                    dim: case["dim"].as_i64().unwrap(),
                },
                params,
            ),
            case,
        );
    }
    // View ops of strides.json: the layout pass keeps views as views.
    let table = oracle("strides.json");
    let inputs: Vec<TensorType> = table["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(typed)
        .collect();
    for case in table["cases"].as_array().unwrap() {
        let x = inputs[case["input"].as_u64().unwrap() as usize].clone();
        let args = &case["args"];
        let i = |k: &str| args[k].as_i64().unwrap();
        let op = match case["op"].as_str().unwrap() {
            "t" => Op::T,
            "transpose" => Op::Transpose {
                dim0: i("dim0"),
                dim1: i("dim1"),
            },
            "permute" => Op::Permute {
                dims: int_list(&args["dims"]),
            },
            "expand" => Op::Expand {
                shape: int_list(&args["shape"]),
            },
            "unsqueeze" => Op::Unsqueeze { dim: i("dim") },
            "squeeze" => Op::Squeeze {
                dims: match &args["dims"] {
                    Value::Null => None,
                    Value::Number(n) => Some(vec![n.as_i64().unwrap()]),
                    l => Some(int_list(l)),
                },
            },
            "slice" => Op::Slice {
                dim: i("dim"),
                start: args["start"].as_i64(),
                end: args["end"].as_i64(),
                step: i("step"),
            },
            "select" => Op::Select {
                dim: i("dim"),
                index: i("index"),
            },
            "flatten" => Op::Flatten {
                start_dim: i("start_dim"),
                end_dim: i("end_dim"),
            },
            "reshape" => Op::Reshape {
                shape: int_list(&args["shape"]),
            },
            "view" => Op::View {
                shape: int_list(&args["shape"]),
            },
            _ => Op::Contiguous {
                memory_format: MemoryFormat::Contiguous,
            },
        };
        let expected = match case.get("error").and_then(Value::as_str) {
            // Kiln's wording for the two misleading PyTorch messages (see oracle_core).
            Some(msg) if msg.contains("sparse_coo") => {
                serde_json::json!({"error": msg.replace("permute(sparse_coo):", "permute():")})
            }
            Some("numel: integer multiplication overflow") => {
                serde_json::json!({"error": "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"})
            }
            _ => case.clone(),
        };
        check(
            format!("{} {} on {:?}", case["op"], args, x.strides()),
            layout_of(op, vec![Ok(x)]),
            &expected,
        );
    }
    m.finish("layout oracle programs");
}
