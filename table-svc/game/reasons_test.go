package game_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
)

// reason is a refusal's reason found in a core's source: its value (an
// ErrorReason name without the prefix) and where the code names it.
type reason struct {
	Value string
	Pos   string
}

// scan is what scanReasons finds in one package: the reasons its code can
// return (Refuse calls and Error literals), its Reason... constants (name
// to value) and those a refusal names (Used, in any package), and what it
// cannot read (a reason that is no constant).
type scan struct {
	Returned  []reason
	Constants map[string]reason
	Used      map[string]bool
	Unread    []string
}

// scanReasons reads the Go sources under dir (tests left out), package by
// package (keyed by package name), for every reason a core can return:
// the reason argument of each Refuse call (Refuse in package game,
// game.Refuse elsewhere) and the Reason of each Error literal (&Error{...}
// in package game, game.Error elsewhere), but the one in Refuse itself. A
// reason must be a string literal or a string constant of the package
// (any.Name for package any's): one the scan cannot read is Unread, so
// that no reason escapes it. The string constants named Reason... are
// the package's catalogue of reasons (Constants).
func scanReasons(dir string) (map[string]*scan, error) {
	fset := token.NewFileSet()
	files := map[string][]*ast.File{} // by package name
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files[f.Name.Name] = append(files[f.Name.Name], f)
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Every package's string constants, to read a reason named by one.
	consts := map[string]map[string]string{}
	out := map[string]*scan{}
	for pkg, pfiles := range files {
		consts[pkg] = map[string]string{}
		out[pkg] = &scan{Constants: map[string]reason{}, Used: map[string]bool{}}
		for _, f := range pfiles {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return nil, err
						}
						consts[pkg][name.Name] = v
						if strings.HasPrefix(name.Name, "Reason") {
							out[pkg].Constants[name.Name] = reason{v, fset.Position(name.Pos()).String()}
						}
					}
				}
			}
		}
	}

	for pkg, pfiles := range files {
		sc := out[pkg]
		// read adds the reason expression e names, or notes it unread.
		read := func(e ast.Expr) {
			where := fset.Position(e.Pos()).String()
			switch e := e.(type) {
			case *ast.BasicLit:
				if v, err := strconv.Unquote(e.Value); e.Kind == token.STRING && err == nil {
					sc.Returned = append(sc.Returned, reason{v, where})
					return
				}
			case *ast.Ident:
				if v, ok := consts[pkg][e.Name]; ok {
					sc.Returned = append(sc.Returned, reason{v, where})
					sc.Used[e.Name] = true
					return
				}
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok {
					if v, ok := consts[x.Name][e.Sel.Name]; ok {
						sc.Returned = append(sc.Returned, reason{v, where})
						out[x.Name].Used[e.Sel.Name] = true
						return
					}
				}
			}
			sc.Unread = append(sc.Unread, fmt.Sprintf("%s: reason %s", where, kind(e)))
		}
		// is reports whether e names the package game's name (Refuse,
		// Error) from package pkg.
		is := func(e ast.Expr, name string) bool {
			switch e := e.(type) {
			case *ast.Ident:
				return pkg == "game" && e.Name == name
			case *ast.SelectorExpr:
				x, ok := e.X.(*ast.Ident)
				return ok && x.Name == "game" && e.Sel.Name == name
			}
			return false
		}
		for _, f := range pfiles {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && pkg == "game" && fd.Recv == nil && fd.Name.Name == "Refuse" {
					continue // the builder: its reason is its caller's
				}
				ast.Inspect(d, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						if is(n.Fun, "Refuse") {
							if len(n.Args) < 2 {
								sc.Unread = append(sc.Unread, fset.Position(n.Pos()).String()+": Refuse without a reason")
								return true
							}
							read(n.Args[1])
						}
					case *ast.CompositeLit:
						if !is(n.Type, "Error") {
							return true
						}
						found := false
						for i, el := range n.Elts {
							if kv, ok := el.(*ast.KeyValueExpr); ok {
								if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Reason" {
									read(kv.Value)
									found = true
								}
							} else if i == 1 {
								read(el) // Error{Code, Reason, Msg}
								found = true
							}
						}
						if !found {
							sc.Unread = append(sc.Unread, fset.Position(n.Pos()).String()+": an Error without a reason")
						}
					}
					return true
				})
			}
		}
	}
	return out, nil
}

// kind names an expression's kind for a message.
func kind(e ast.Expr) string { return strings.TrimPrefix(fmt.Sprintf("%T", e), "*ast.") }

// inEnum reports whether r is a name of chemmy.table.v1.ErrorReason
// without its prefix (UNSPECIFIED is none).
func inEnum(r string) bool {
	_, ok := tablev1.ErrorReason_value["ERROR_REASON_"+r]
	return ok && r != "UNSPECIFIED"
}

// constName is the name of the Reason constant of r: "Reason" and r in
// camel case (WRONG_STATE: ReasonWrongState).
func constName(r string) string {
	var b strings.Builder
	b.WriteString("Reason")
	for _, w := range strings.Split(r, "_") {
		if w == "" {
			continue
		}
		b.WriteString(w[:1])
		b.WriteString(strings.ToLower(w[1:]))
	}
	return b.String()
}

// check is every fault of the scan of the packages: a reason returned or
// declared that is not in the enum, a reason the scan cannot read, a
// Reason constant not named after its value or that no refusal names.
func check(scans map[string]*scan) []string {
	var faults []string
	for _, pkg := range slices.Sorted(maps.Keys(scans)) {
		sc := scans[pkg]
		faults = append(faults, sc.Unread...)
		for _, r := range sc.Returned {
			if !inEnum(r.Value) {
				faults = append(faults, fmt.Sprintf("%s: %q is no chemmy.table.v1.ErrorReason", r.Pos, r.Value))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(sc.Constants)) {
			c := sc.Constants[name]
			switch {
			case !inEnum(c.Value):
				faults = append(faults, fmt.Sprintf("%s: %s = %q is no chemmy.table.v1.ErrorReason", c.Pos, name, c.Value))
			case constName(c.Value) != name:
				faults = append(faults, fmt.Sprintf("%s: %s = %q: the constant of %[3]q is %s", c.Pos, name, c.Value, constName(c.Value)))
			case !sc.Used[name]:
				faults = append(faults, fmt.Sprintf("%s: %s = %q: no refusal names it", c.Pos, name, c.Value))
			}
		}
	}
	return faults
}

// TestCoreReasons: every reason a game core can return (RULES.md's
// refusals as the cores name them) is a name of chemmy.table.v1.ErrorReason,
// the enum the table service's callers read in ErrorInfo: found in the
// sources of package game and of each core, not listed by hand. Each
// core's Reason constants are named after their values, and a refusal
// names each.
func TestCoreReasons(t *testing.T) {
	scans, err := scanReasons(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"game", "chemindefer", "puntobanco", "banque", "oldbaccarat"} {
		if sc := scans[pkg]; sc == nil || len(sc.Returned) == 0 {
			t.Errorf("no reason found in package %s: the scan no longer sees how it refuses", pkg)
		}
	}
	for _, f := range check(scans) {
		t.Error(f)
	}
	for _, pkg := range slices.Sorted(maps.Keys(scans)) {
		var rs []string
		for _, r := range scans[pkg].Returned {
			rs = append(rs, r.Value)
		}
		slices.Sort(rs)
		if rs = slices.Compact(rs); len(rs) > 0 {
			t.Logf("%s returns %v", pkg, rs)
		}
	}
}

// TestReasonScan: the scan of TestCoreReasons reads each way a core names
// a reason, notes one it cannot read, and its check fails on a reason
// that is not in the enum, a Reason constant misnamed or unused; tests
// and calls that are no refusal are left out.
func TestReasonScan(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("game.go", `package game

const (
	ReasonWrongState      = "WRONG_STATE"
	ReasonBankerCannotBet = "BANKER_CANNOT_BET"
)

func Refuse(code Code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason}
}

func f() error { return Refuse(FailedPrecondition, "TABLE_CLOSED", "closed") }
`)
	write("core/core.go", `package core

const (
	ReasonNotSeated = "NOT_SEATED"
	ReasonMisnamed  = "TABLE_FULL"
	ReasonUnused    = "UNUSED"
	notAReason      = "BID_TOO_LOW"
)

func f(r string) error {
	_ = game.Refuse(game.InvalidArgument, "INVALID_ARGUMENT", "a literal")
	_ = game.Refuse(game.InvalidArgument, ReasonNotSeated, "a constant")
	_ = game.Refuse(game.InvalidArgument, ReasonMisnamed, "a constant")
	_ = game.Refuse(game.InvalidArgument, notAReason, "any constant")
	_ = game.Refuse(game.InvalidArgument, game.ReasonWrongState, "another package's")
	_ = &game.Error{Code: game.NotFound, Reason: "NO_SUCH_REASON"}
	_ = game.Refuse(game.InvalidArgument, r, "a variable")
	_ = status.Error(codes.Internal, "NOT_A_REFUSAL")
	return nil
}
`)
	write("core/core_test.go", `package core

func g() error { return game.Refuse(game.InvalidArgument, "IN_TEST", "tests are left out") }
`)
	scans, err := scanReasons(dir)
	if err != nil {
		t.Fatal(err)
	}
	returned := func(pkg string) []string {
		var out []string
		for _, r := range scans[pkg].Returned {
			out = append(out, r.Value)
		}
		slices.Sort(out)
		return out
	}
	if got, want := returned("game"), []string{"TABLE_CLOSED"}; !slices.Equal(got, want) {
		t.Errorf("package game returns %v, want %v", got, want)
	}
	want := []string{"BID_TOO_LOW", "INVALID_ARGUMENT", "NOT_SEATED", "NO_SUCH_REASON", "TABLE_FULL", "WRONG_STATE"}
	if got := returned("core"); !slices.Equal(got, want) {
		t.Errorf("package core returns %v, want %v", got, want)
	}
	if u := scans["core"].Unread; len(u) != 1 || !strings.Contains(u[0], "reason Ident") {
		t.Errorf("unread in package core: %v, want the variable r", u)
	}
	faults := strings.Join(check(scans), "\n")
	for _, want := range []string{
		`reason Ident`,
		`"NO_SUCH_REASON" is no chemmy.table.v1.ErrorReason`,
		`ReasonMisnamed = "TABLE_FULL": the constant of "TABLE_FULL" is ReasonTableFull`,
		`ReasonUnused = "UNUSED" is no chemmy.table.v1.ErrorReason`,
		`ReasonBankerCannotBet = "BANKER_CANNOT_BET": no refusal names it`,
	} {
		if !strings.Contains(faults, want) {
			t.Errorf("the check does not find %s; it finds:\n%s", want, faults)
		}
	}
	if n := strings.Count(faults, "\n") + 1; n != 5 {
		t.Errorf("the check finds %d faults, want 5:\n%s", n, faults)
	}
}
