//! Colouring `.kir` for terminals: inkjet's highlighter with Kiln's own
//! tree-sitter grammar for `.kir`.

use std::fmt::Write;
use std::sync::LazyLock;

use inkjet::constants::HIGHLIGHT_NAMES;
use inkjet::formatter::Formatter;
use inkjet::theme::{Theme, vendored};
use inkjet::tree_sitter_highlight::{HighlightConfiguration, HighlightEvent};
use inkjet::{Highlighter, Language};

unsafe extern "C" {
    fn tree_sitter_kir() -> tree_sitter::Language;
}

const KIR_HIGHLIGHTS: &str = include_str!("../tree-sitter-kir/queries/highlights.scm");

/// The `.kir` grammar.
pub fn kir_language() -> tree_sitter::Language {
    // SAFETY: the function is the generated parser's entry point; it takes no
    // arguments and returns a pointer to static data.
    unsafe { tree_sitter_kir() }
}

static KIR_CONFIG: LazyLock<HighlightConfiguration> = LazyLock::new(|| {
    let mut config = HighlightConfiguration::new(kir_language(), "kir", KIR_HIGHLIGHTS, "", "")
        .expect("the .kir highlight query matches the .kir grammar");
    config.configure(HIGHLIGHT_NAMES);
    config
});

fn kir_config() -> &'static HighlightConfiguration {
    &KIR_CONFIG
}

/// Source languages Kiln prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Kir,
    /// CUDA C, through inkjet's C grammar.
    C,
}

/// Writes ANSI colour escapes from a theme into a `String`.
struct Ansi {
    theme: Theme,
}

impl Formatter for Ansi {
    fn write<W: Write>(
        &self,
        source: &str,
        w: &mut W,
        event: HighlightEvent,
    ) -> inkjet::Result<()> {
        match event {
            HighlightEvent::Source { start, end } => w.write_str(&source[start..end])?,
            HighlightEvent::HighlightStart(h) => {
                let color = self
                    .theme
                    .get_style(HIGHLIGHT_NAMES[h.0])
                    .and_then(|s| s.fg)
                    .unwrap_or(self.theme.fg);
                write!(w, "\x1b[38;2;{};{};{}m", color.r, color.g, color.b)?;
            }
            HighlightEvent::HighlightEnd => w.write_str("\x1b[0m")?,
        }
        Ok(())
    }
}

/// Colours `text`; on any highlighting failure, returns it unchanged.
pub fn colorize(text: &str, source: Source) -> String {
    let language = match source {
        Source::Kir => Language::Runtime(kir_config),
        Source::C => Language::C,
    };
    let Ok(theme) = Theme::from_helix(vendored::ONEDARK) else {
        return text.to_string();
    };
    Highlighter::new()
        .highlight_to_string(language, &Ansi { theme }, text)
        .unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_program_parses_without_errors() {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&kir_language()).unwrap();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/programs");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let tree = parser.parse(&text, None).unwrap();
            assert!(
                !tree.root_node().has_error(),
                "{}: {}",
                path.display(),
                tree.root_node().to_sexp()
            );
        }
    }

    #[test]
    fn colours_keywords_and_types() {
        let out = colorize(
            "func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x\n}\n",
            Source::Kir,
        );
        assert!(out.contains("\x1b[38;2;"));
        assert!(out.contains("func"));
    }
}
