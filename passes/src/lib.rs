//! `kiln-passes`: the passes that make a Kiln graph executable.
