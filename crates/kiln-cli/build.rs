//! Compiles the tree-sitter grammar of `.kir` (generated C, see
//! `tree-sitter-kir/grammar.js`) for colouring `kiln check`/`kiln dump`.

fn main() {
    let dir = std::path::Path::new("tree-sitter-kir/src");
    println!("cargo:rerun-if-changed=tree-sitter-kir/src/parser.c");
    cc::Build::new()
        .include(dir)
        .file(dir.join("parser.c"))
        .warnings(false)
        .compile("tree-sitter-kir");
}
