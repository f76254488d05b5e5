package tablesvc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cfRules are the chemin de fer rule IDs of RULES.md.
var cfRules = []string{
	"CF-FIRST-BANKER", "CF-BANK-SIZE", "CF-BANK-NO-WITHDRAW", "CF-BANK-LIMIT", "CF-BANK-RAISE",
	"CF-HOLD", "CF-PASS", "CF-LOSE", "CF-BET-AGAINST", "CF-BET-BEFORE", "CF-BET-LIMIT", "CF-BET-ORDER",
	"CF-GALLERY", "CF-UNCOVERED", "CF-BANCO", "CF-BANCO-PRIORITY", "CF-HAND-HOLDER", "CF-DEAL",
	"CF-NATURAL-PLAYER", "CF-NATURAL-BANKER", "CF-PLAYER-DRAW", "CF-BANKER-DRAW", "CF-BANCO-FREEDOM",
	"CF-ERROR", "CF-RESULT", "CF-STANDOFF", "CF-BANK-WINS", "CF-BANK-LOSES",
}

// notRunYet are rules the table does not run yet, with the reason.
var notRunYet = map[string]string{}

// TestEveryCFRuleHasATest: every CF-* rule of RULES.md is named by a test
// of the table service or of the rules engine, or listed in notRunYet.
func TestEveryCFRuleHasATest(t *testing.T) {
	var text strings.Builder
	for _, dir := range []string{".", "../../services/rules"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if filepath.Base(f) == "coverage_test.go" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text.Write(b)
		}
	}
	all := text.String()
	for _, id := range cfRules {
		named := strings.Contains(all, id+" ") || strings.Contains(all, id+",") || strings.Contains(all, id+")") ||
			strings.Contains(all, id+".") || strings.Contains(all, id+"\n") || strings.Contains(all, id+"\"")
		if _, skip := notRunYet[id]; skip {
			if named {
				t.Errorf("%s is tested now: take it out of notRunYet", id)
			}
			continue
		}
		if !named {
			t.Errorf("no test names %s", id)
		}
	}
}

// gameRules are the rule IDs of the other games of RULES.md.
var gameRules = []string{
	"PB-BANK", "PB-DECKS", "PB-BETS", "PB-TABLEAU",
	"BQ-DECKS", "BQ-BANK", "BQ-HANDS", "BQ-BETS", "BQ-PLAY", "BQ-CHEVAL",
	"OLD-DECKS", "OLD-BANKER", "OLD-CUT", "OLD-DEAL", "OLD-STAKE", "OLD-VALUES", "OLD-RANK",
	"OLD-BACCARAT", "OLD-NATURAL", "OLD-DRAW", "OLD-SETTLE",
}

// TestEveryGameRuleIsPlayedAtATable: every PB-, BQ- and OLD- rule is named
// by a test that plays it through a table (this package's scenario tests
// on prepared shoes), not only by the engine's or a core's tests.
func TestEveryGameRuleIsPlayedAtATable(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range files {
		if f == "coverage_test.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
	}
	all := text.String()
	for _, id := range gameRules {
		if !strings.Contains(all, "RULES.md "+id) && !strings.Contains(all, ", "+id) && !strings.Contains(all, "("+id) {
			t.Errorf("no table test plays %s", id)
		}
	}
}
