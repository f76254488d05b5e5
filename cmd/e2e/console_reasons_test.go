package e2e

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gatewayv1 "github.com/chemmy/chemmy/proto/gen/chemmy/gateway/v1"
	shoev1 "github.com/chemmy/chemmy/proto/gen/chemmy/shoe/v1"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
)

// reasonSources are the code that puts reasons in ErrorInfo: the services,
// the gateway's own refusals (authentication, policy, limits, identity)
// and the shared authenticator.
var reasonSources = []string{
	"table-svc/tablesvc", "table-svc/game",
	"wallet-svc",
	"shoe-svc",
	"gateway/gateway",
	"services/kit/auth",
}

var upperSnake = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{4,}$`)

// codeReasons scans the Go sources (tests left out) under dir for the
// ErrorInfo reasons they can return: string constants named reason...
// or Reason..., values of an ErrorReason enum (ErrorReason_ERROR_REASON_X),
// and UPPER_SNAKE string literals passed to the functions that build a
// refusal (game.Refuse, a service's fail, errs.New, errs.WithMetadata).
func codeReasons(t *testing.T, dir string) map[string]string {
	t.Helper()
	found := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		add := func(lit ast.Expr, pos token.Pos) {
			b, ok := lit.(*ast.BasicLit)
			if !ok || b.Kind != token.STRING {
				return
			}
			s, err := strconv.Unquote(b.Value)
			if err == nil && upperSnake.MatchString(s) {
				found[s] = fset.Position(pos).String()
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if strings.HasPrefix(strings.ToLower(name.Name), "reason") && i < len(n.Values) {
						add(n.Values[i], name.Pos())
					}
				}
			case *ast.Ident:
				if r, ok := strings.CutPrefix(n.Name, "ErrorReason_ERROR_REASON_"); ok && r != "UNSPECIFIED" {
					found[r] = fset.Position(n.Pos()).String()
				}
			case *ast.CallExpr:
				var name string
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					if x, ok := fn.X.(*ast.Ident); ok {
						name = x.Name + "." + fn.Sel.Name
					} else {
						name = fn.Sel.Name
					}
				}
				if name == "Refuse" || name == "game.Refuse" || name == "fail" || name == "errs.New" || name == "errs.WithMetadata" {
					for _, a := range n.Args {
						add(a, a.Pos())
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestConsoleNamesEveryReason: the table console's plain messages
// (gateway/gateway/console/reasons.json, which app.js loads) cover every
// ErrorInfo reason the services and the gateway can return, found both in
// the contracts (each service's ErrorReason enum) and in the code, and
// name no reason that nothing returns.
func TestConsoleNamesEveryReason(t *testing.T) {
	root := repoRoot(t)
	consoleDir := filepath.Join(root, "gateway", "gateway", "console")
	raw, err := os.ReadFile(filepath.Join(consoleDir, "reasons.json"))
	if err != nil {
		t.Fatal(err)
	}
	var friendly map[string]string
	if err := json.Unmarshal(raw, &friendly); err != nil {
		t.Fatalf("reasons.json: %v", err)
	}
	app, err := os.ReadFile(filepath.Join(consoleDir, "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(app), `"/console/reasons.json"`) {
		t.Errorf("app.js does not load /console/reasons.json")
	}

	used := map[string]string{} // reason -> where it was found
	for _, dir := range reasonSources {
		found := codeReasons(t, filepath.Join(root, dir))
		if len(found) == 0 {
			t.Errorf("no reason found in %s: the scan no longer sees how it builds its errors", dir)
		}
		for r, where := range found {
			used[r] = where
		}
	}
	for _, enum := range []map[int32]string{tablev1.ErrorReason_name, walletv1.ErrorReason_name, shoev1.ErrorReason_name, gatewayv1.ErrorReason_name} {
		for _, name := range enum {
			if r := strings.TrimPrefix(name, "ERROR_REASON_"); r != "UNSPECIFIED" && used[r] == "" {
				used[r] = "an ErrorReason enum"
			}
		}
	}
	if len(used) < 50 {
		t.Errorf("only %d reasons found in all: the scan misses some", len(used))
	}

	var missing, dead []string
	for r, where := range used {
		if strings.TrimSpace(friendly[r]) == "" {
			missing = append(missing, r+" ("+where+")")
		}
	}
	for r := range friendly {
		if _, ok := used[r]; !ok {
			dead = append(dead, r)
		}
	}
	slices.Sort(missing)
	slices.Sort(dead)
	if len(missing) > 0 {
		t.Errorf("reasons.json has no message for %d reasons:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
	if len(dead) > 0 {
		t.Errorf("reasons.json names reasons nothing returns: %v", dead)
	}
}

// TestCodeReasonsScan: the scan of TestConsoleNamesEveryReason sees each
// way the code names a reason, and takes no message for one.
func TestCodeReasonsScan(t *testing.T) {
	dir := t.TempDir()
	src := `package x

const reasonFromConst = "FROM_CONST"

const ReasonExported = "EXPORTED"

var r = reason(walletv1.ErrorReason_ERROR_REASON_FROM_ENUM)

func f() {
	_ = game.Refuse(game.InvalidArgument, "FROM_REFUSE", "a message")
	_ = fail(codes.NotFound, "FROM_FAIL", "NOT A REASON: %d", 1)
	_ = errs.New(codes.Unauthenticated, Domain, "FROM_ERRS_NEW", "unknown token")
	_ = status.Error(codes.Internal, "NOT_FROM_STATUS")
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x_test.go"), []byte("package x\n\nconst reasonInTest = \"IN_TEST\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range codeReasons(t, dir) {
		got = append(got, r)
	}
	slices.Sort(got)
	want := []string{"EXPORTED", "FROM_CONST", "FROM_ENUM", "FROM_ERRS_NEW", "FROM_FAIL", "FROM_REFUSE"}
	if !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
