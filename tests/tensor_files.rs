//! Tensor files: Kiln reads what PyTorch (safetensors) and numpy (`.npy`)
//! write, round-trips every dtype each format has, and turns every corrupt or
//! truncated file into a clean error (fuzzed header bytes, every truncation).

use std::path::Path;

use kiln::DType;
use kiln_runtime::convert::Elem;
use kiln_runtime::random::Stream;
use kiln_runtime::{Tensor, io};
use kiln_tests::{parse_float, tests_dir};
use serde_json::Value;

fn files_dir() -> std::path::PathBuf {
    tests_dir().join("data/files")
}

fn manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(files_dir().join("manifest.json")).unwrap())
        .unwrap()
}

fn expected_value(v: &Value) -> Elem {
    match v {
        Value::Array(parts) => Elem::C(
            parse_float(parts[0].as_str().unwrap()),
            parse_float(parts[1].as_str().unwrap()),
        ),
        Value::String(s) if s == "true" || s == "false" => Elem::B(s == "true"),
        Value::String(s) if s.parse::<i128>().is_ok() => Elem::I(s.parse().unwrap()),
        Value::String(s) => Elem::F(parse_float(s)),
        other => panic!("unexpected manifest value {other}"),
    }
}

fn check_against(tensor: &Tensor, entry: &Value, what: &str) {
    let dtype: DType = entry["dtype"].as_str().unwrap().parse().unwrap();
    assert_eq!(tensor.dtype(), dtype, "{what}");
    let shape: Vec<i64> = entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    assert_eq!(tensor.shape(), shape.as_slice(), "{what}");
    let expected: Vec<Elem> = entry["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(expected_value)
        .collect();
    assert_eq!(tensor.values(), expected, "{what}");
}

#[test]
fn reads_every_dtype_pytorch_writes_to_safetensors() {
    let m = manifest();
    let tensors = io::read_safetensors(&files_dir().join("torch_dtypes.safetensors")).unwrap();
    let entries = m["safetensors"].as_object().unwrap();
    assert_eq!(tensors.len(), entries.len());
    for (name, entry) in entries {
        check_against(&tensors[name], entry, name);
    }
}

#[test]
fn reads_every_dtype_numpy_writes_to_npy() {
    let m = manifest();
    for (name, entry) in m["npy"].as_object().unwrap() {
        let t = io::read_npy(&files_dir().join(format!("{name}.npy"))).unwrap();
        check_against(&t, entry, name);
    }
}

/// A tensor of every value pattern for `dtype`, from a fixed stream.
fn sample(dtype: DType, shape: &[i64]) -> Tensor {
    let mut s = Stream::new(dtype as u64 + 7);
    let n: i64 = shape.iter().product();
    if dtype.is_shell() {
        let bytes: Vec<u8> = (0..n * dtype.itemsize() as i64)
            .map(|_| s.next_u64() as u8)
            .collect();
        return Tensor::from_bytes(&bytes, shape, dtype).unwrap();
    }
    Tensor::from_values((0..n).map(|_| s.value(dtype)), shape, dtype).unwrap()
}

#[test]
fn every_dtype_round_trips_through_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let mut st_written = 0;
    for dtype in DType::ALL {
        let t = sample(dtype, &[3, 4]);
        // A strided view is written in logical order.
        let view = t.view(t.geometry().t().unwrap()).unwrap();
        let path = dir.path().join("t.safetensors");
        match io::write_safetensors(&path, &[("t".into(), &view)]) {
            Ok(()) => {
                let back = io::read_safetensors(&path).unwrap().remove("t").unwrap();
                assert_eq!(back.shape(), view.shape(), "{dtype}");
                assert_eq!(back.to_bytes(), view.to_bytes(), "{dtype}");
                st_written += 1;
            }
            Err(e) => assert!(e.to_string().contains("safetensors has no"), "{dtype}: {e}"),
        }
        let path = dir.path().join("t.npy");
        match io::write_npy(&path, &view) {
            Ok(()) => {
                let back = io::read_npy(&path).unwrap();
                assert_eq!(back.to_bytes(), view.to_bytes(), "{dtype}");
            }
            Err(e) => assert!(e.to_string().contains("numpy has no"), "{dtype}: {e}"),
        }
    }
    assert!(
        st_written >= 20,
        "safetensors holds most dtypes ({st_written})"
    );
}

/// Reading must give a tensor or an error, never a panic.
fn read_never_panics(path: &Path, read: fn(&Path) -> Result<(), kiln::Error>) -> bool {
    match std::panic::catch_unwind(|| read(path)) {
        Ok(result) => result.is_ok(),
        Err(_) => panic!("reading {} panicked", path.display()),
    }
}

fn read_st(p: &Path) -> Result<(), kiln::Error> {
    io::read_safetensors(p).map(|_| ())
}

fn read_np(p: &Path) -> Result<(), kiln::Error> {
    io::read_npy(p).map(|_| ())
}

fn fuzz(original: &[u8], header_len: usize, read: fn(&Path) -> Result<(), kiln::Error>, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzzed");
    let mut s = Stream::new(seed);
    let mut accepted = 0;
    for round in 0..3000 {
        let mut bytes = original.to_vec();
        let flips = 1 + (s.next_u64() % 4) as usize;
        for _ in 0..flips {
            let at = (s.next_u64() as usize) % header_len;
            bytes[at] = match s.next_u64() % 4 {
                0 => s.next_u64() as u8,
                1 => bytes[at] ^ (1 << (s.next_u64() % 8)),
                2 => b"0123456789[]{},:\"-eE"[(s.next_u64() % 20) as usize],
                _ => 0xff,
            };
        }
        std::fs::write(&path, &bytes).unwrap();
        if read_never_panics(&path, read) {
            accepted += 1;
        }
        if round % 1000 == 0 {
            // Every truncation too.
            for len in 0..original.len() {
                std::fs::write(&path, &original[..len]).unwrap();
                assert!(
                    !read_never_panics(&path, read),
                    "a file truncated to {len} bytes was accepted"
                );
            }
        }
    }
    // Most mutations break the header; some (a digit in a value) do not.
    assert!(
        accepted < 3000,
        "every mutation was accepted: the fuzzer hits nothing"
    );
}

#[test]
fn corrupt_safetensors_headers_are_clean_errors() {
    let original = std::fs::read(files_dir().join("torch_dtypes.safetensors")).unwrap();
    let header_len = 8 + u64::from_le_bytes(original[..8].try_into().unwrap()) as usize;
    fuzz(&original, header_len, read_st, 1);
    let err = io::read_safetensors(&files_dir().join("missing.safetensors")).unwrap_err();
    assert!(err.to_string().contains("missing.safetensors"), "{err}");
}

#[test]
fn corrupt_npy_headers_are_clean_errors() {
    for name in ["f32", "c128", "bool", "fortran_f32"] {
        let original = std::fs::read(files_dir().join(format!("{name}.npy"))).unwrap();
        let header_len = 10 + u16::from_le_bytes([original[8], original[9]]) as usize;
        fuzz(&original, header_len, read_np, 2);
    }
}

/// Found by `scripts/fuzz.sh`: a header whose shape nests brackets deeply
/// made the `.npy` header parser run for minutes. It is refused at once.
#[test]
fn deeply_nested_npy_headers_are_refused() {
    let mut header = String::from("{'descr': '|u1', 'fortran_order': False, 'shape': (");
    header += &"[".repeat(40);
    header += "2, 3), }";
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 6]);
    let err = kiln_runtime::io::npy_from_bytes(Path::new("nested.npy"), &bytes).unwrap_err();
    assert!(err.message().contains("nests brackets too deeply"), "{err}");
    assert!(err.to_string().contains("nested.npy"), "{err}");
}
