//! `kiln-runtime`: storage, concrete tensors and the reference interpreter.
