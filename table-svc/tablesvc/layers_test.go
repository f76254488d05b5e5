package tablesvc

import (
	"go/ast"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// fileRefs are the shell's files, each with the other files of the
// package it refers to: a name declared there (a function, a type, a
// variable, a constant, a method or a field of a type of the package).
// Tests are not read.
func fileRefs(t *testing.T) map[string]map[string][]string {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo}, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("load the package: %v", pkgs)
	}
	p := pkgs[0]
	refs := map[string]map[string][]string{}
	for _, f := range p.Syntax {
		from := filepath.Base(p.Fset.File(f.Pos()).Name())
		refs[from] = map[string][]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := p.TypesInfo.Uses[id]
			if obj == nil || obj.Pkg() != p.Types {
				return true
			}
			switch o := obj.(type) {
			case *types.Func:
			case *types.Var:
				if !o.IsField() && o.Parent() != p.Types.Scope() {
					return true // a local
				}
			case *types.TypeName, *types.Const:
				if o.Parent() != p.Types.Scope() {
					return true
				}
			default:
				return true
			}
			to := filepath.Base(p.Fset.Position(obj.Pos()).Filename)
			if to != from && !slices.Contains(refs[from][to], id.Name) {
				refs[from][to] = append(refs[from][to], id.Name)
			}
			return true
		})
	}
	return refs
}

// TestShellFilesFormNoCircle: the files of table-svc/tablesvc refer to
// one another without a circle, so they stand in layers, each referring
// only to files below it: the record and the errors at the bottom, then
// the service's state, the seam with the games (gamecore.go), the save,
// the saga, the adapters, and the API and the start at the top. A file
// that refers back up (a circle) is named with the names it takes.
func TestShellFilesFormNoCircle(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package")
	}
	refs := fileRefs(t)
	// Tarjan's strongly connected components: a component of more than
	// one file is a circle.
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var circles [][]string
	var visit func(f string)
	visit = func(f string) {
		index[f], low[f] = len(index), len(index)
		stack = append(stack, f)
		on[f] = true
		for to := range refs[f] {
			if _, seen := index[to]; !seen {
				visit(to)
				low[f] = min(low[f], low[to])
			} else if on[to] {
				low[f] = min(low[f], index[to])
			}
		}
		if low[f] == index[f] {
			var c []string
			for {
				n := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[n] = false
				c = append(c, n)
				if n == f {
					break
				}
			}
			if len(c) > 1 {
				slices.Sort(c)
				circles = append(circles, c)
			}
		}
	}
	files := make([]string, 0, len(refs))
	for f := range refs {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	for _, c := range circles {
		var why []string
		for _, a := range c {
			for _, b := range c {
				if names := refs[a][b]; len(names) > 0 {
					why = append(why, a+" -> "+b+" ("+strings.Join(names, ", ")+")")
				}
			}
		}
		t.Errorf("a circle of %d files: %s", len(c), strings.Join(why, "; "))
	}
	if len(files) < 20 {
		t.Errorf("read %d files, want the whole shell", len(files))
	}
}
