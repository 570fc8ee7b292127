//! The CUDA backend's implicit-GEMM convolutions
//! (`crates/kiln-cuda/src/implicit_gemm.rs`) with every tile, emulated on
//! the host against the interpreter's bits.
//!
//! The tile is chosen from the problem's size, so a test's small programs
//! would see only the smallest; `KILN_CUDA_CONV_TILE` forces each in turn.
//! That variable is read when kernels are generated, which is why this
//! test has a process (a test binary) of its own.

use kiln_runtime::Tensor;
use kiln_tests::cuda_emulator::{self, plan_of};
use kiln_tests::cuda_tools::{compiles_plan, nvrtc_here, ptxas};

/// Dense 2-D convolutions (one group, at least 16 output channels and 32
/// products an element) are implicit-GEMM kernels: tiles of output
/// channels × positions staged in shared memory. With every tile (and
/// with none: `off`, the direct kernels; and with blocks looping over
/// several tiles) they compile with NVRTC and ptxas and give the
/// interpreter's bits,
/// over partial tiles, batches, padding, strides, dilation, channels_last
/// operands, f64 (multiply and add) and f16, and with an infinity and a
/// NaN among the weights, whose padded taps the reference skips (`0 · inf`
/// would be NaN).
#[test]
fn dense_convolutions_give_the_references_bits_with_every_tile() {
    let text = "func @main(%x: tensor<2x6x9x10xf32>, %w: tensor<20x6x3x3xf32>, %b: tensor<20xf32>, %xl: tensor<1x5x7x8xf32, channels_last>, %wl: tensor<17x5x3x3xf32, channels_last>, %y: tensor<1x6x11x9xf64>, %wy: tensor<16x6x3x2xf64>, %h: tensor<1x8x6x6xf16>, %wh: tensor<16x8x2x2xf16>, %wi: tensor<16x6x3x3xf32>, %xb: tensor<3x40x8x8xf32>, %wb: tensor<70x40x3x3xf32>) -> (tensor<2x20x9x10xf32>, tensor<1x17x4x5xf32>, tensor<1x16x6x6xf64>, tensor<1x16x5x5xf16>, tensor<2x16x9x10xf32>, tensor<3x70x8x8xf32>) {
  %c = conv2d %x, %w, %b {padding = 1}
  %cl = conv2d %xl, %wl {stride = 2, padding = [1, 2]}
  %cy = conv2d %y, %wy {stride = [2, 1], padding = [2, 0], dilation = [2, 3]}
  %ch = conv2d %h, %wh
  %ci = conv2d %x, %wi {padding = 1}
  %cb = conv2d %xb, %wb {padding = 1}
  return %c, %cl, %cy, %ch, %ci, %cb
}
";
    // Each tile, `off` (the direct kernels), then the default choice.
    // (`:N` caps the grid at N blocks, which then loop over the tiles.)
    let settings = [
        "64x64", "64x32", "32x64", "32x32", "32x16", "16x32", "16x16", "16x16:3", "64x32:2", "off",
        "",
    ];
    let nvrtc = nvrtc_here();
    let ptxas = ptxas();
    let here = cuda_emulator::here();
    let mut inputs = None;
    for setting in settings {
        // SAFETY: this binary's only test sets the variable between runs,
        // when no other thread of the process reads the environment.
        unsafe {
            if setting.is_empty() {
                std::env::remove_var("KILN_CUDA_CONV_TILE");
            } else {
                std::env::set_var("KILN_CUDA_CONV_TILE", setting);
            }
        }
        let (module, plan) = plan_of(text);
        let kernels = kiln_cuda::steps::kernels(&plan);
        let tiled: Vec<&str> = kernels
            .iter()
            .filter_map(|k| k.source.lines().find(|l| l.contains("implicit GEMM")))
            .collect();
        if nvrtc {
            compiles_plan(&plan, ptxas.as_ref()).unwrap_or_else(|e| panic!("{setting}: {e}"));
        }
        let tile = setting.split(':').next().unwrap_or_default();
        match tile.split_once('x') {
            Some((to, tp)) => {
                let name = format!("tiles of {to} channels x {tp} positions");
                assert_eq!(tiled.len(), 6, "{setting}: {tiled:?}");
                assert!(
                    tiled.iter().all(|l| l.contains(&name)),
                    "{setting}: {tiled:?}"
                );
            }
            None if setting == "off" => assert!(tiled.is_empty(), "{tiled:?}"),
            None => assert_eq!(tiled.len(), 6, "{tiled:?}"),
        }
        if !here {
            continue;
        }
        let inputs = inputs.get_or_insert_with(|| {
            let mut inputs = kiln_tests::inputs_for(&module);
            let mut weights: Vec<f32> = (0..16 * 6 * 9)
                .map(|i| ((i * 37) % 17) as f32 * 0.25 - 2.0)
                .collect();
            // The top-left tap of output channel 3's first input channel
            // and the bottom-right tap of channel 9's last (a later pass
            // where a pass stages fewer than 6): each in the padding at
            // one corner of the output.
            weights[3 * 54] = f32::INFINITY;
            weights[9 * 54 + 5 * 9 + 8] = f32::NAN;
            inputs[9] = Tensor::from_vec(weights, &[16, 6, 3, 3]).unwrap();
            inputs
        });
        let expected = cuda_emulator::assert_same_bits(setting, &module, inputs);
        // The reference skips the padded taps: channel 3's top-left output
        // and channel 9's bottom-right one, whose infinite and NaN taps are
        // in the padding, are finite; their diagonal neighbours read them.
        let ci = expected[4].to_bytes();
        let at = |o: usize, y: usize, x: usize| {
            let i = 4 * ((o * 9 + y) * 10 + x);
            f32::from_le_bytes([ci[i], ci[i + 1], ci[i + 2], ci[i + 3]])
        };
        assert!(at(3, 0, 0).is_finite());
        assert!(!at(3, 1, 1).is_finite());
        assert!(at(9, 8, 9).is_finite());
        assert!(at(9, 7, 8).is_nan());
    }
}
