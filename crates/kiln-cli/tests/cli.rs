//! The `kiln` binary as users run it: exit statuses, messages, files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kiln::DefaultDType;
use kiln::runtime::{Tensor, interp, io};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("the kiln binary runs")
}

fn repo(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join(path).display().to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure is one line on stderr and status 1: no panic, no backtrace.
fn assert_clean_failure(o: &Output, expected: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(expected), "expected {expected:?} in {err:?}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn check_prints_the_typed_module() {
    let o = kiln(&["check", &repo("tests/programs/binary_float.kir")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("%add = add %x, %y : tensor<2x3xf32>"));
    assert!(!stdout(&o).contains('\x1b'), "piped output is plain");
}

#[test]
fn check_applies_the_layout_rules() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("view.kir");
    std::fs::write(
        &path,
        "func @main(%x: tensor<3x4xf32>) -> tensor<12xf32> {\n  %t = t %x\n  %0 = view %t {shape = [12]}\n  return %0\n}\n",
    )
    .unwrap();
    let o = kiln(&["check", path.to_str().unwrap()]);
    assert_clean_failure(&o, "view.kir:3:8: error:");
    assert!(
        stderr(&o).contains("Use .reshape(...) instead"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_colours_when_asked() {
    let o = kiln(&[
        "check",
        "--color",
        "always",
        &repo("tests/programs/binary_float.kir"),
    ]);
    assert!(stdout(&o).contains("\x1b[38;2;"));
}

#[test]
fn errors_name_the_place_and_exit_1() {
    let o = kiln(&["check", &repo("tests/errors/shape_mismatch.kir")]);
    assert_clean_failure(
        &o,
        "shape_mismatch.kir:2:8: error: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
    );
    let o = kiln(&["check", "/no/such/file.kir"]);
    assert_clean_failure(&o, "error: /no/such/file.kir: cannot read the file");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(kiln(&["check"]).status.code(), Some(2));
    assert_eq!(kiln(&["frobnicate"]).status.code(), Some(2));
    let o = kiln(&[
        "check",
        "--default-dtype",
        "f16",
        &repo("tests/programs/binary_float.kir"),
    ]);
    assert_clean_failure(&o, "f16");
}

#[test]
fn dump_prints_the_module_after_each_named_pass() {
    let file = repo("tests/programs/mixed_dtype.kir");
    let o = kiln(&[
        "dump",
        &file,
        "--after",
        "promote",
        "--after",
        "layout",
        "--backend",
        "interp",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let promote = text.find("// after promote\n").expect("promote dump");
    let layout = text.find("// after layout\n").expect("layout dump");
    assert!(promote < layout);
    assert!(text[promote..layout].contains("cast"));
    assert!(!text.contains("// after decompose"));

    let o = kiln(&[
        "dump",
        &file,
        "--after",
        "all",
        "--timings",
        "--backend",
        "interp",
    ]);
    let text = stdout(&o);
    for pass in ["promote", "layout", "decompose", "cse", "dce"] {
        assert!(text.contains(&format!("// after {pass}\n")), "{pass}");
    }
    assert!(text.contains("// timings"));

    let o = kiln(&["dump", &file, "--after", "inline", "--backend", "interp"]);
    assert_clean_failure(
        &o,
        "--after inline: no such pass for the interp backend (expected one of: promote, layout",
    );
}

#[test]
fn dump_explains_the_optimizers_changes() {
    let file = repo("tests/programs/simplify.kir");
    let o = kiln(&["dump", &file, "--after", "optimize", "--explain"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("// optimize @main: saturated after"),
        "{text}"
    );
    assert!(
        text.contains("// %m is rewritten by these steps:"),
        "{text}"
    );
    for rule in ["mul-one", "permute-chain", "cast-same", "min-max-absorb"] {
        assert!(
            text.contains(&format!("Rewrite<= {rule}")),
            "{rule}: {text}"
        );
    }
    assert!(text.contains("%k = maximum %u, %b"), "{text}");
    assert!(
        text.contains("%z = add %x, 0.0"),
        "-0.0 + 0.0 is 0.0: {text}"
    );
    // Without --explain, the report but no steps.
    let o = kiln(&["dump", &file, "--after", "optimize"]);
    assert!(stdout(&o).contains("// optimize @main:") && !stdout(&o).contains("steps"));
}

#[test]
fn dump_shows_cuda_c_and_ptx_or_says_nvrtc_is_missing() {
    let file = repo("tests/programs/softmax_layernorm.kir");
    let o = kiln(&[
        "dump",
        &file,
        "--backend",
        "cuda",
        "--after",
        "cuda",
        "--after",
        "ptx",
    ]);
    if kiln::cuda::nvrtc::nvrtc_present() {
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains("// after cuda\n") && text.contains("extern \"C\" __global__ void"));
        assert!(
            text.contains("kiln_warp_reduce<double>"),
            "sums accumulate in double"
        );
        assert!(
            text.contains("// after ptx\n") && text.contains(".target sm_"),
            "{text}"
        );
    } else {
        assert_clean_failure(&o, "NVRTC not found (libnvrtc.so.12)");
    }
}

fn write_inputs(dir: &Path, tensors: &[(&str, &Tensor)]) -> PathBuf {
    let path = dir.join("in.safetensors");
    let named: Vec<(String, &Tensor)> = tensors.iter().map(|(n, t)| (n.to_string(), *t)).collect();
    io::write_safetensors(&path, &named).unwrap();
    path
}

#[test]
fn run_reads_safetensors_and_writes_the_interpreters_results() {
    let dir = tempfile::tempdir().unwrap();
    let program = repo("tests/programs/binary_float.kir");
    let x = Tensor::from_vec(vec![1.5f32, -2.0, 3.0, 4.25, 0.5, -1.0], &[2, 3]).unwrap();
    let y = Tensor::from_vec(vec![2.0f32, 3.0, -0.5, 1.0, 7.0, 2.5], &[2, 3]).unwrap();
    let inputs = write_inputs(dir.path(), &[("x", &x), ("y", &y)]);
    let out = dir.path().join("out.safetensors");
    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        inputs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "interp",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = io::read_safetensors(&out).unwrap();
    let module = kiln::parse_module(
        &program,
        &std::fs::read_to_string(&program).unwrap(),
        DefaultDType::F32,
    )
    .unwrap();
    let expected = interp::run(&module, &[x.clone(), y.clone()]).unwrap();
    assert_eq!(got.keys().collect::<Vec<_>>(), ["out0"]);
    assert_eq!(got["out0"].to_bytes(), expected[0].to_bytes());

    // Without --out, a summary.
    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        inputs.to_str().unwrap(),
        "--backend",
        "interp",
    ]);
    assert!(
        stdout(&o).starts_with("out0: tensor<2x3xf32>\ntensor([["),
        "{}",
        stdout(&o)
    );

    // .npy in and out.
    let xnpy = dir.path().join("x.npy");
    io::write_npy(&xnpy, &y).unwrap();
    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        inputs.to_str().unwrap(),
        "--input",
        &format!("x={}", xnpy.display()),
        "--out-npy",
        dir.path().join("outs").to_str().unwrap(),
        "--backend",
        "interp",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = io::read_npy(&dir.path().join("outs/out0.npy")).unwrap();
    let expected = interp::run(&module, &[y.clone(), y]).unwrap();
    assert_eq!(got.to_bytes(), expected[0].to_bytes());
}

#[test]
fn run_refuses_bad_inputs_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let program = repo("tests/programs/binary_float.kir");
    let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
    let inputs = write_inputs(dir.path(), &[("x", &x)]);
    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        inputs.to_str().unwrap(),
        "--backend",
        "interp",
    ]);
    assert_clean_failure(
        &o,
        "in.safetensors: no tensor named 'y' for argument %y (the file has: x)",
    );

    let wrong = Tensor::from_vec(vec![1.0f64; 6], &[3, 2]).unwrap();
    let inputs = write_inputs(dir.path(), &[("x", &x), ("y", &wrong)]);
    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        inputs.to_str().unwrap(),
        "--backend",
        "interp",
    ]);
    assert_clean_failure(
        &o,
        "in.safetensors: tensor 'y': input %y must be tensor<2x3xf32>, but a tensor of shape [3, 2] and dtype f64 was given",
    );

    let o = kiln(&["run", &program, "--backend", "interp"]);
    assert_clean_failure(
        &o,
        "@main takes %x, %y: give them with --inputs FILE.safetensors or --input NAME=FILE.npy",
    );

    let corrupt = dir.path().join("corrupt.safetensors");
    std::fs::write(&corrupt, b"\x10\x00\x00\x00\x00\x00\x00\x00{\"x\": 1}").unwrap();
    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        corrupt.to_str().unwrap(),
        "--backend",
        "interp",
    ]);
    assert_clean_failure(&o, "corrupt.safetensors: not a valid safetensors file");

    let o = kiln(&[
        "run",
        &program,
        "--inputs",
        inputs.to_str().unwrap(),
        "--backend",
        "tpu",
    ]);
    assert_clean_failure(&o, "unknown backend 'tpu'");
}

#[test]
fn the_demo_runs() {
    let o = kiln(&["demo", "--backend", "interp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("softmax"));
    assert!(text.contains("largest difference from the reference interpreter: 0e0"));
}

#[test]
fn meta_programs_check_but_do_not_run() {
    let o = kiln(&[
        "run",
        &repo("tests/programs/meta_device.kir"),
        "--backend",
        "interp",
    ]);
    assert_clean_failure(
        &o,
        "error: %x: tensors on the meta device have no data: the program can be checked but not run",
    );
}

#[test]
fn bench_json_reports_time_memory_and_steps() {
    let o = kiln(&[
        "bench",
        "--json",
        "--steps",
        &repo("tests/programs/block.kir"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    let field = |name: &str| {
        report[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} in {report}"))
    };
    assert!(field("run_ms_median") > 0.0);
    assert!(field("peak_rss_bytes") > 1e6, "a process takes megabytes");
    // block.kir's buffers are below the pooled size: nothing is pooled,
    // but its code is counted.
    assert!(field("pooled_bytes") >= 0.0);
    assert!(field("code_bytes") >= 4096.0);
    assert!(field("peak_live_bytes") > 0.0);
    // One entry per step of the plan: its kernels, in order.
    let steps = report["steps"].as_array().expect("steps");
    assert!(!steps.is_empty());
    for step in steps {
        assert!(
            step["step"].as_str().unwrap().starts_with("kernel k"),
            "{step}"
        );
        assert!(step["ms"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn the_readme_lists_the_op_table() {
    let o = kiln(&["ops"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let begin = "<!-- kiln ops: begin -->\n";
    let start = readme.find(begin).expect("the README has the op table") + begin.len();
    let end = readme.find("<!-- kiln ops: end -->").expect("and its end");
    assert_eq!(
        &readme[start..end],
        stdout(&o),
        "the README's op table is stale: paste `kiln ops` between its markers"
    );
}
