package tree_sitter_kir_test

import (
	"testing"

	tree_sitter "github.com/smacker/go-tree-sitter"
	"github.com/tree-sitter/tree-sitter-kir"
)

func TestCanLoadGrammar(t *testing.T) {
	language := tree_sitter.NewLanguage(tree_sitter_kir.Language())
	if language == nil {
		t.Errorf("Error loading Kir grammar")
	}
}
