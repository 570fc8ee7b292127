//! `kiln demo`: Kiln's main job end to end. Traces a Rust closure (a
//! mixed-dtype, channels_last block: scale, bias, relu, a softmax over
//! channels), prints its IR, dumps it after the passes and the backend's
//! stages, compiles it, runs it on deterministic inputs, and checks the
//! result against the reference interpreter.

use kiln::runtime::random::tensor_for;
use kiln::{Compiler, DType, MemoryFormat, Result, TensorSpec, trace};

use crate::highlight::Source;
use crate::{Color, backend, render};

pub fn demo(backend_name: &str, color: Color) -> Result<()> {
    let specs = [
        TensorSpec::new([2, 4, 3, 3], DType::F16)
            .memory_format(MemoryFormat::ChannelsLast)
            .name("x"),
        TensorSpec::new([1, 4, 1, 1], DType::F32).name("scale"),
        TensorSpec::new([4, 1, 1], DType::F32).name("bias"),
    ];
    let traced = trace(&specs, |xs| {
        let (x, scale, bias) = (&xs[0], &xs[1], &xs[2]);
        (x * scale + bias).relu().softmax(1)
    })?;
    println!("// traced: (x * scale + bias).relu().softmax(1)");
    print!("{}", render(&traced.to_string(), color, Source::Kir));

    let compiler = Compiler::new(backend(backend_name)?);
    let compiled = compiler.compile(traced.module())?;
    println!("// after {}", compiler.pipeline().names().join(", "));
    print!(
        "{}",
        render(&compiled.module().to_string(), color, Source::Kir)
    );
    for listing in compiled.listings()? {
        match listing.stage {
            "fuse" => {
                println!("// after fuse: {}", listing.title);
                println!("{}", listing.text.trim_end());
            }
            _ => println!(
                "// {}: {} lines (kiln dump FILE --after all shows them)",
                listing.title,
                listing.text.lines().count()
            ),
        }
    }

    let entry = traced.module().entry()?;
    let inputs = entry
        .params
        .iter()
        .enumerate()
        .map(|(i, &p)| tensor_for(entry.ty(p), i as u64 + 1))
        .collect::<Result<Vec<_>>>()?;
    let results = compiled.run(&inputs)?;
    let reference = traced.interpret(&inputs)?;
    println!("// result on the {} backend", compiled.backend());
    println!("{}", results[0]);
    let worst = kiln::runtime::compare::max_abs_difference(&results[0], &reference[0])?;
    println!("// largest difference from the reference interpreter: {worst:e}");
    Ok(())
}
