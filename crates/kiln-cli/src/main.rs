//! The `kiln` command line (IR.md §2): `check`, `dump`, `run`, `bench`,
//! plus `demo` (Kiln's main job end to end) and `info`.
//!
//! Every error is printed as one line naming the place (`prog.kir:3:15:
//! error: ...`) and exits with status 1; usage errors exit with 2.

mod bench;
mod demo;
mod dump;
mod highlight;
mod io;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use kiln::{BackendKind, DType, DefaultDType, Module};

#[derive(Parser)]
#[command(
    name = "kiln",
    version,
    about = "Kiln: a lazy tensor graph compiler with PyTorch's semantics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Clone, Debug)]
pub struct Common {
    /// The default dtype (what torch.set_default_dtype sets): f32 or f64.
    #[arg(long, default_value = "f32")]
    default_dtype: String,
}

impl Common {
    fn default_dtype(&self) -> Result<DefaultDType, kiln::Error> {
        DefaultDType::try_from(self.default_dtype.parse::<DType>()?)
    }
}

/// Where a program's inputs come from and its outputs go.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Files {
    /// A safetensors file holding the inputs by argument name (without `%`).
    #[arg(long, value_name = "IN.safetensors")]
    inputs: Option<PathBuf>,
    /// One input from a .npy file: NAME=PATH (repeatable; wins over --inputs).
    #[arg(long = "input", value_name = "NAME=PATH.npy")]
    input: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, infer and verify a .kir file; print it with every type written out.
    Check {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        color: Color,
        #[command(flatten)]
        common: Common,
    },
    /// Print the module after passes (`// after NAME` before each).
    Dump {
        file: PathBuf,
        /// A pass name, or `all` for every pass and the backend's code
        /// (repeatable; default: the last module pass).
        #[arg(long, value_name = "PASS")]
        after: Vec<String>,
        /// Also print the time each pass took.
        #[arg(long)]
        timings: bool,
        /// With the optimizer's dump, the chain of rules behind each change.
        #[arg(long)]
        explain: bool,
        #[arg(long, default_value = "cranelift")]
        backend: String,
        #[arg(long, value_enum, default_value = "auto")]
        color: Color,
        #[command(flatten)]
        common: Common,
    },
    /// Compile and run @main on tensors from files.
    Run {
        file: PathBuf,
        #[command(flatten)]
        files: Files,
        /// Write the results (out0, out1, ...) to a safetensors file.
        #[arg(long, value_name = "OUT.safetensors")]
        out: Option<PathBuf>,
        /// Write each result as DIR/out0.npy, DIR/out1.npy, ...
        #[arg(long, value_name = "DIR")]
        out_npy: Option<PathBuf>,
        #[arg(long, default_value = "cranelift")]
        backend: String,
        #[command(flatten)]
        common: Common,
    },
    /// Time compilation (cold, then cached) and runs; bytes moved and GB/s.
    Bench {
        file: PathBuf,
        #[command(flatten)]
        files: Files,
        #[arg(long, default_value = "cranelift")]
        backend: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Also time each step of the kernel plan (kernels, matmuls,
        /// interpreted ops), each synchronized: where the time goes.
        #[arg(long)]
        steps: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Trace a Rust closure, dump its IR after the passes, compile and run it.
    Demo {
        #[arg(long, default_value = "cranelift")]
        backend: String,
        #[arg(long, value_enum, default_value = "auto")]
        color: Color,
    },
    /// Print what Kiln's semantic core knows: dtypes and type promotion.
    Info {
        #[command(flatten)]
        common: Common,
    },
    /// Print the op table: every op with its operands, attributes, kind and
    /// the dtypes its CPU kernel takes (markdown).
    Ops,
}

fn main() -> ExitCode {
    // Output piped into a reader that stops early (`kiln dump x | head`)
    // ends the process quietly, as Unix tools do, instead of a panic.
    #[cfg(unix)]
    // SAFETY: restoring SIGPIPE's default action before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check {
            file,
            color,
            common,
        } => check(&file, color, &common),
        Command::Dump {
            file,
            after,
            timings,
            explain,
            backend,
            color,
            common,
        } => dump::dump(
            &file,
            &after,
            &dump::DumpOptions { timings, explain },
            &backend,
            color,
            &common,
        ),
        Command::Run {
            file,
            files,
            out,
            out_npy,
            backend,
            common,
        } => run::run(
            &file,
            &files,
            out.as_deref(),
            out_npy.as_deref(),
            &backend,
            &common,
        ),
        Command::Bench {
            file,
            files,
            backend,
            json,
            steps,
            common,
        } => bench::bench(
            &file,
            &files,
            &backend,
            bench::Report { json, steps },
            &common,
        ),
        Command::Demo { backend, color } => demo::demo(&backend, color),
        Command::Info { common } => info(&common),
        Command::Ops => {
            print!("{}", kiln::ops::catalogue::markdown());
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if err.location().is_some() {
                eprintln!("{err}");
            } else {
                eprintln!("error: {err}");
            }
            ExitCode::from(1)
        }
    }
}

/// Reads and parses a .kir file; errors name the file, line and column.
fn load(path: &Path, common: &Common) -> Result<Module, kiln::Error> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        kiln::Error::new(
            kiln::ErrorKind::Io,
            format!("{name}: cannot read the file: {e}"),
        )
    })?;
    kiln::parse_bytes(&name, &bytes, common.default_dtype()?)
}

fn backend(name: &str) -> Result<BackendKind, kiln::Error> {
    name.parse()
}

fn check(path: &Path, color: Color, common: &Common) -> Result<(), kiln::Error> {
    let module = load(path, common)?;
    // Strides are part of an instruction's meaning: check lays the module
    // out as compiling will, so a view its operand's strides do not allow
    // is reported here, at its line and column.
    let mut laid_out = module.clone();
    kiln::passes::PassManager::standard()
        .until("layout")?
        .run(&mut laid_out)?;
    print!(
        "{}",
        render(&module.to_string(), color, highlight::Source::Kir)
    );
    Ok(())
}

/// Whether to colour stdout.
fn colored(color: Color) -> bool {
    use std::io::IsTerminal;
    match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stdout().is_terminal(),
    }
}

/// Colours text for a terminal: always, never, or when stdout is one.
fn render(text: &str, color: Color, source: highlight::Source) -> String {
    if colored(color) {
        highlight::colorize(text, source)
    } else {
        text.to_string()
    }
}

fn info(common: &Common) -> Result<(), kiln::Error> {
    use kiln::promote_types;
    let default = common.default_dtype()?;
    println!("default dtype: {default} (complex: {})", default.complex());
    println!();
    println!(
        "{:<11} {:<18} {:>4} {:<9} {:<6}",
        "dtype", "torch", "size", "category", "shell"
    );
    for d in DType::ALL {
        println!(
            "{:<11} {:<18} {:>4} {:<9} {:<6}",
            d.short_name(),
            d.torch_name(),
            d.itemsize(),
            format!("{:?}", d.category()).to_lowercase(),
            if d.is_shell() { "yes" } else { "" }
        );
    }
    println!();
    let core = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
    ];
    print!("promote_types {:>5}", "");
    for b in core {
        print!("{:>5}", b.short_name());
    }
    println!();
    for a in core {
        print!("{:>19}", a.short_name());
        for b in core {
            let r = promote_types(a, b).map(|d| d.short_name()).unwrap_or("err");
            print!("{r:>5}");
        }
        println!();
    }
    Ok(())
}
