//! The `kiln` command line (IR.md §2).

use clap::{Parser, Subcommand};
use kiln::{DType, DefaultDType, promote_types};

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

#[derive(Subcommand)]
enum Command {
    /// Print what Kiln's semantic core knows: dtypes and type promotion.
    Info {
        /// The default dtype (what torch.set_default_dtype sets).
        #[arg(long, default_value = "f32")]
        default_dtype: String,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { default_dtype } => info(&default_dtype),
    };
    if let Err(err) = result {
        eprintln!("kiln: {err}");
        std::process::exit(1);
    }
}

fn info(default_dtype: &str) -> Result<(), kiln::Error> {
    let default = DefaultDType::try_from(default_dtype.parse::<DType>()?)?;
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
