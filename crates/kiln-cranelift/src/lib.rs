//! `kiln-cranelift`: the CPU backend (Cranelift JIT).
