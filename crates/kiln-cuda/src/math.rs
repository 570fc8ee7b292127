//! `kiln-math`'s f32 functions as CUDA C device functions: a `Builder`
//! that prints each operation as one statement, so the GPU (and the host
//! emulation of the generated code) computes the interpreter's algorithm
//! step for step, with the same bits.
//!
//! Every operation is one correctly rounded CUDA operation: `+ - * /` on
//! floats are IEEE with NVRTC's `--prec-div=true --fmad=false`, `fmaf`
//! rounds once, `rintf` rounds to nearest even.

use std::fmt::Write;

use kiln_math::{Builder, Function, Function2};

/// Prints operations as statements on numbered temporaries.
struct Printer {
    body: String,
    next: usize,
}

impl Printer {
    fn temp(&mut self, ty: &str, expr: String) -> usize {
        let n = self.next;
        self.next += 1;
        writeln!(self.body, "  const {ty} t{n} = {expr};").expect("writing to a String");
        n
    }

    fn float(&mut self, expr: String) -> usize {
        self.temp("float", expr)
    }

    fn int(&mut self, expr: String) -> usize {
        self.temp("int", expr)
    }

    fn mask(&mut self, expr: String) -> usize {
        self.temp("bool", expr)
    }
}

/// An f32 constant, exactly: by its bits.
fn literal(v: f32) -> String {
    format!("__int_as_float(0x{:08x})", v.to_bits())
}

impl Builder for Printer {
    type F = usize;
    type I = usize;
    type M = usize;

    fn f32(&mut self, v: f32) -> usize {
        self.float(literal(v))
    }
    fn i32(&mut self, v: i32) -> usize {
        // INT_MIN has no literal of type int.
        let text = if v == i32::MIN {
            "(int)0x80000000u".to_string()
        } else {
            v.to_string()
        };
        self.int(text)
    }
    fn add(&mut self, a: usize, b: usize) -> usize {
        self.float(format!("t{a} + t{b}"))
    }
    fn sub(&mut self, a: usize, b: usize) -> usize {
        self.float(format!("t{a} - t{b}"))
    }
    fn mul(&mut self, a: usize, b: usize) -> usize {
        self.float(format!("t{a} * t{b}"))
    }
    fn div(&mut self, a: usize, b: usize) -> usize {
        self.float(format!("t{a} / t{b}"))
    }
    fn sqrt(&mut self, a: usize) -> usize {
        // Correctly rounded: NVRTC runs with `--prec-sqrt=true`.
        self.float(format!("sqrtf(t{a})"))
    }
    fn fma(&mut self, a: usize, b: usize, c: usize) -> usize {
        self.float(format!("fmaf(t{a}, t{b}, t{c})"))
    }
    fn neg(&mut self, a: usize) -> usize {
        self.float(format!("-t{a}"))
    }
    fn abs(&mut self, a: usize) -> usize {
        self.float(format!("fabsf(t{a})"))
    }
    fn round(&mut self, a: usize) -> usize {
        self.float(format!("rintf(t{a})"))
    }
    fn lt(&mut self, a: usize, b: usize) -> usize {
        self.mask(format!("t{a} < t{b}"))
    }
    fn gt(&mut self, a: usize, b: usize) -> usize {
        self.mask(format!("t{a} > t{b}"))
    }
    fn is_nan(&mut self, a: usize) -> usize {
        self.mask(format!("t{a} != t{a}"))
    }
    fn select(&mut self, m: usize, a: usize, b: usize) -> usize {
        self.float(format!("t{m} ? t{a} : t{b}"))
    }
    fn nonzero(&mut self, a: usize) -> usize {
        self.mask(format!("t{a} != 0"))
    }
    fn to_i32(&mut self, a: usize) -> usize {
        self.int(format!("(int)t{a}"))
    }
    fn to_f32(&mut self, a: usize) -> usize {
        self.float(format!("(float)t{a}"))
    }
    fn iadd(&mut self, a: usize, b: usize) -> usize {
        self.int(format!("(int)((unsigned)t{a} + (unsigned)t{b})"))
    }
    fn isub(&mut self, a: usize, b: usize) -> usize {
        self.int(format!("(int)((unsigned)t{a} - (unsigned)t{b})"))
    }
    fn iand(&mut self, a: usize, b: usize) -> usize {
        self.int(format!("t{a} & t{b}"))
    }
    fn ior(&mut self, a: usize, b: usize) -> usize {
        self.int(format!("t{a} | t{b}"))
    }
    fn ixor(&mut self, a: usize, b: usize) -> usize {
        self.int(format!("t{a} ^ t{b}"))
    }
    fn shl(&mut self, a: usize, n: u32) -> usize {
        self.int(format!("(int)((unsigned)t{a} << {n})"))
    }
    fn sar(&mut self, a: usize, n: u32) -> usize {
        self.int(format!("t{a} >> {n}"))
    }
    fn bits(&mut self, a: usize) -> usize {
        self.int(format!("__float_as_int(t{a})"))
    }
    fn from_bits(&mut self, a: usize) -> usize {
        self.float(format!("__int_as_float(t{a})"))
    }
    fn exact(&mut self, f: Function, x: usize, when: usize, fast: usize) -> usize {
        // The f64 function, rounded once: as `kiln_math::exact`.
        self.float(format!(
            "t{when} ? (float){}((double)t{x}) : t{fast}",
            f.name()
        ))
    }
}

/// The device function computing `f` on an f32: `kiln_{name}_f32`.
pub fn device_function(f: Function) -> String {
    let mut p = Printer {
        body: String::new(),
        next: 1,
    };
    let r = f.build(&mut p, 0);
    format!(
        "// {name} of an f32: kiln-math's algorithm, as the interpreter computes it.\n\
         __device__ __forceinline__ float kiln_{name}_f32(float t0) {{\n{body}  return t{r};\n}}\n",
        name = f.name(),
        body = p.body
    )
}

/// The device function computing the two-argument `f` on f32s:
/// `kiln_{name}_f32(a, b)`.
pub fn device_function2(f: Function2) -> String {
    let mut p = Printer {
        body: String::new(),
        next: 2,
    };
    let r = f.build(&mut p, 0, 1);
    format!(
        "// {name} of two f32s: kiln-math's algorithm, as the interpreter computes it.\n\
         __device__ __forceinline__ float kiln_{name}_f32(float t0, float t1) {{\n{body}  return t{r};\n}}\n",
        name = f.name(),
        body = p.body
    )
}

/// Every function's device function.
pub fn device_functions() -> String {
    let unary = Function::ALL.iter().map(|&f| device_function(f));
    let binary = Function2::ALL.iter().map(|&f| device_function2(f));
    unary.chain(binary).collect()
}
