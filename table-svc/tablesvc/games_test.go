package tablesvc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// shellGames are the games of the registry: each one's package, its
// adapter's type and file, and its variant's name in chemmy.table.v1.
var shellGames = []struct {
	pkg, adapter, file, variant string
}{
	{"table-svc/game/chemindefer", "cfAdapter", "adapter_chemindefer.go", "Variant_VARIANT_CHEMIN_DE_FER"},
	{"table-svc/game/puntobanco", "pbAdapter", "adapter_puntobanco.go", "Variant_VARIANT_PUNTO_BANCO"},
	{"table-svc/game/banque", "banqueAdapter", "adapter_banque.go", "Variant_VARIANT_BACCARAT_BANQUE"},
	{"table-svc/game/oldbaccarat", "oldAdapter", "adapter_oldbaccarat.go", "Variant_VARIANT_OLD_BACCARAT"},
}

// TestEachGameNamedOnlyByItsAdapter lists, per game, the shell's files
// that name it (import its package, name its adapter or its variant): a
// game is its adapter and its line in the registry (games.go), so a fifth
// game touches only its package, its adapter and the registry. Chemin de
// fer is also the game of a record or request that names none (variant
// unspecified): where the shell says so, it names it by gameOf.
func TestEachGameNamedOnlyByItsAdapter(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	naming := map[string][]string{} // game package -> shell files naming it
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, g := range shellGames {
				if strings.HasSuffix(p, "/"+g.pkg) {
					named[g.pkg] = true
				}
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			for _, g := range shellGames {
				if id.Name == g.adapter || id.Name == g.variant {
					named[g.pkg] = true
				}
			}
			return true
		})
		for p := range named {
			naming[p] = append(naming[p], f)
		}
	}
	for _, g := range shellGames {
		got := naming[g.pkg]
		slices.Sort(got)
		want := []string{g.file, "games.go"}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s is named by %v, want only its adapter and the registry %v", g.pkg, got, want)
		}
	}
}
