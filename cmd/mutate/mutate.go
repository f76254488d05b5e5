package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A Mutant is one small change to one source file: the bytes From at
// Offset replaced by To.
type Mutant struct {
	File   string // path relative to the repository root
	Line   int
	Col    int
	Func   string // the enclosing function ("" at package level)
	Offset int
	From   string
	To     string
}

func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d:%d: %s → %s", m.File, m.Line, m.Col, show(m.From), show(m.To))
}

func show(s string) string {
	if s == "" {
		return "(removed)"
	}
	return s
}

// Apply returns src with the mutant's change made. It panics if src does
// not hold From at Offset (the file changed since it was enumerated).
func (m Mutant) Apply(src []byte) []byte {
	if m.Offset+len(m.From) > len(src) || string(src[m.Offset:m.Offset+len(m.From)]) != m.From {
		panic(fmt.Sprintf("mutate: %s: %q not at offset %d", m.File, m.From, m.Offset))
	}
	out := make([]byte, 0, len(src)-len(m.From)+len(m.To))
	out = append(out, src[:m.Offset]...)
	out = append(out, m.To...)
	return append(out, src[m.Offset+len(m.From):]...)
}

// The operators and what each becomes.
var binaryOps = map[token.Token][]token.Token{
	token.LSS:  {token.LEQ}, // conditional boundaries
	token.LEQ:  {token.LSS},
	token.GTR:  {token.GEQ},
	token.GEQ:  {token.GTR},
	token.EQL:  {token.NEQ}, // negated conditionals
	token.NEQ:  {token.EQL},
	token.LAND: {token.LOR}, // boolean operators
	token.LOR:  {token.LAND},
	token.ADD:  {token.SUB}, // arithmetic
	token.SUB:  {token.ADD},
	token.MUL:  {token.QUO},
	token.QUO:  {token.MUL},
	token.REM:  {token.MUL},
}

var assignOps = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.SUB_ASSIGN,
	token.SUB_ASSIGN: token.ADD_ASSIGN,
	token.MUL_ASSIGN: token.QUO_ASSIGN,
	token.QUO_ASSIGN: token.MUL_ASSIGN,
}

// Enumerate returns the mutants of one Go source file (name is the path
// reported in each mutant), in the order of the file. If funcs is not
// empty only the functions (or methods) named in it are mutated.
func Enumerate(name string, src []byte, funcs map[string]bool) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Mutant
	add := func(fn string, pos token.Pos, from, to string) {
		p := fset.Position(pos)
		out = append(out, Mutant{File: name, Line: p.Line, Col: p.Column, Func: fn, Offset: p.Offset, From: from, To: to})
	}
	for _, d := range f.Decls {
		fn := ""
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		if len(funcs) > 0 && !funcs[fn] {
			continue
		}
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if stringOperand(n) {
					return true // "a" + b: its mutants do not compile
				}
				for _, to := range binaryOps[n.Op] {
					add(fn, n.OpPos, n.Op.String(), to.String())
				}
			case *ast.AssignStmt:
				if to, ok := assignOps[n.Tok]; ok && !stringLit(n.Rhs[0]) {
					add(fn, n.TokPos, n.Tok.String(), to.String())
				}
			case *ast.IncDecStmt:
				to := token.DEC
				if n.Tok == token.DEC {
					to = token.INC
				}
				add(fn, n.TokPos, n.Tok.String(), to.String())
			case *ast.UnaryExpr:
				if n.Op == token.NOT {
					add(fn, n.OpPos, "!", "")
				}
			}
			return true
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, nil
}

func stringOperand(b *ast.BinaryExpr) bool {
	return b.Op == token.ADD && (stringLit(b.X) || stringLit(b.Y) || isConcat(b.X) || isConcat(b.Y))
}

func isConcat(e ast.Expr) bool {
	if b, ok := ast.Unparen(e).(*ast.BinaryExpr); ok {
		return stringOperand(b)
	}
	return false
}

func stringLit(e ast.Expr) bool {
	l, ok := ast.Unparen(e).(*ast.BasicLit)
	return ok && l.Kind == token.STRING
}

// A Target is a set of source files to mutate and the tests that judge
// its mutants.
type Target struct {
	Name  string   // a short name (MUTATE_PKGS matches it)
	Dir   string   // the package directory, relative to the root
	Files []string // the files of Dir to mutate (none: every non-test .go file)
	Funcs []string // only these functions (none: all)
	Tests []string // the packages whose short tests judge a mutant ("./" + Dir if empty)
	// Shell: the short tests of the service that plays the target (its
	// package and a -run pattern), judging the mutants Tests let through,
	// before the simulation: a game core's rules are also tested through
	// table-svc's shell (make test-short runs both).
	Shell *TestSet
}

// A TestSet is a package's short tests, those matching Run (all if empty).
type TestSet struct {
	Pkg string // e.g. "./table-svc/tablesvc"
	Run string // a go test -run pattern
}

// Sites lists the mutants of a target; root is the repository root.
func (t Target) Sites(root string) ([]Mutant, error) {
	files := t.Files
	if len(files) == 0 {
		ents, err := os.ReadDir(filepath.Join(root, t.Dir))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && !e.IsDir() {
				files = append(files, n)
			}
		}
	}
	funcs := map[string]bool{}
	for _, f := range t.Funcs {
		funcs[f] = true
	}
	var out []Mutant
	for _, f := range files {
		rel := filepath.ToSlash(filepath.Join(t.Dir, f))
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		if bytes.Contains(src, []byte("\n//go:build ")) || bytes.HasPrefix(src, []byte("//go:build ")) {
			continue // built only with a tag the tests do not set
		}
		ms, err := Enumerate(rel, src, funcs)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}
