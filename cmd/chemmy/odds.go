package main

import (
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"text/tabwriter"

	"github.com/chemmy/chemmy/services/odds"
	"github.com/chemmy/chemmy/services/rules"
)

// runOdds is `chemmy odds`: the exact odds of a variant from a shoe
// composition, by exact enumeration (services/odds).
func runOdds(args []string) int { return oddsMain(args, os.Stdout, os.Stderr) }

func oddsMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chemmy odds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	variant := fs.String("variant", "punto-banco", "punto-banco, chemin-de-fer, banque or old")
	decks := fs.Int("decks", 8, "number of full decks in the shoe (SHOE-DECKS); default 8, 3 for banque (BQ-DECKS), 2 for old (OLD-DECKS)")
	counts := fs.String("counts", "", `custom shoe composition "A=32,2=32,...,K=32" (ranks A23456789TJQK; "inf:" prefix for an infinite shoe); overrides -decks`)
	infinite := fs.Bool("infinite", false, "the infinite-deck model instead of -decks")
	commission := fs.Int64("commission-bp", rules.DefaultCommissionBP, "commission on the bank's winnings, basis points")
	free := fs.Bool("banco-free-play", false, "chemin de fer: solve the banco coup under banco_free_play (the banker chooses at every cell)")
	follow := fs.String("banker-follows", "right", "banque: the table the banker plays the tableau against, right (equal money) or left (the left carries more money)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	decksSet := false
	fs.Visit(func(f *flag.Flag) { decksSet = decksSet || f.Name == "decks" })
	if !decksSet {
		// Source: RULES.md BQ-DECKS (3 decks), OLD-DECKS (two full decks)
		switch *variant {
		case "banque":
			*decks = 3
		case "old":
			*decks = rules.OldDecks
		}
	}
	shoe := odds.Decks(*decks)
	desc := fmt.Sprintf("%d decks", *decks)
	switch {
	case *counts != "":
		s, err := odds.ParseShoe(*counts)
		if err != nil {
			fmt.Fprintln(stderr, "chemmy odds:", err)
			return 2
		}
		shoe, desc = s, "custom "+s.String()
	case *infinite:
		shoe, desc = odds.InfiniteShoe(), "infinite deck"
	}
	if err := shoe.Validate(); err != nil {
		fmt.Fprintln(stderr, "chemmy odds:", err)
		return 2
	}
	if !shoe.Infinite {
		desc += fmt.Sprintf(" (%d cards)", shoe.Cards())
	}
	var err error
	switch *variant {
	case "punto-banco":
		pr := rules.DefaultPuntoBancoRules()
		pr.CommissionBP = *commission
		err = printPuntoBanco(stdout, shoe, desc, pr)
	case "chemin-de-fer":
		hr := rules.DefaultHouseRules()
		hr.CommissionBP = *commission
		hr.BancoFreePlay = *free
		err = printChemin(stdout, shoe, desc, hr)
	case "banque":
		var st odds.BanqueStrategy
		switch *follow {
		case "right":
			st.Follow = rules.TableRight
		case "left":
			st.Follow = rules.TableLeft
		default:
			fmt.Fprintf(stderr, "chemmy odds: -banker-follows %q: want right or left\n", *follow)
			return 2
		}
		err = printBanque(stdout, shoe, desc, st)
	case "old":
		err = printOld(stdout, shoe, desc)
	default:
		fmt.Fprintf(stderr, "chemmy odds: unknown -variant %q (punto-banco, chemin-de-fer, banque, old)\n", *variant)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "chemmy odds:", err)
		return 1
	}
	return 0
}

func pct(r *big.Rat) string {
	return new(big.Rat).Mul(r, big.NewRat(100, 1)).FloatString(4) + "%"
}

func printPuntoBanco(w io.Writer, shoe odds.Shoe, desc string, pr rules.PuntoBancoRules) error {
	o, err := odds.PuntoBanco(shoe, pr)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "punto banco (PB-TABLEAU), shoe: %s\nexact enumeration of %v ordered six-card deals\n\n", desc, o.Deals)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "outcome\tdeals\tprobability\t")
	for _, r := range []struct {
		name string
		n    *big.Int
	}{{"banker wins", o.BankWins}, {"player wins", o.PlayerWins}, {"tie", o.Ties}, {"bank natural", o.BankNaturals}} {
		fmt.Fprintf(tw, "%s\t%v\t%s\t\n", r.name, r.n, o.Prob(r.n).FloatString(8))
	}
	fmt.Fprintln(tw, "\t\t\t")
	fmt.Fprintln(tw, "bet\tpays\texpected value (exact)\thouse edge\t")
	for _, b := range o.Bets {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t\n", b.Bet, b.Pays, b.EV, pct(b.HouseEdge()))
	}
	return tw.Flush()
}

func printChemin(w io.Writer, shoe odds.Shoe, desc string, hr rules.HouseRules) error {
	e, err := odds.CheminEquilibrium(shoe, hr)
	if err != nil {
		return err
	}
	c, err := odds.Chemin(shoe, hr, e.Strategy(), hr.BancoFreePlay)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "chemin de fer equilibrium, shoe: %s, banker options 3v9=%v 5v4=%v, banco free play=%v\n", desc, hr.BankerOption3vs9, hr.BankerOption5vs4, hr.BancoFreePlay)
	fmt.Fprintf(w, "model: %s\n\n", odds.EquilibriumModel)
	fmt.Fprintf(w, "player draws on 5 with probability %v (%s)\n", e.PlayerDrawOn5, e.PlayerDrawOn5.FloatString(6))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "banker total\tplayer's third card\ttableau\tdraws with probability\t")
	for _, b := range e.Banker {
		if b.Tableau != rules.DecisionOption && !b.Mixed() && (b.Draw.Sign() > 0) == (b.Tableau == rules.DecisionDraw) {
			continue // as the tableau says
		}
		third := fmt.Sprint(b.Third)
		if b.Third == odds.ThirdCardStood {
			third = "stood"
		}
		fmt.Fprintf(tw, "%d\t%s\t%v\t%v (%s)\t\n", b.Total, third, b.Tableau, b.Draw, b.Draw.FloatString(6))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(every other banker cell as the tableau)\ngame value to the player %v = %s per unit; banker's edge before commission %s\n\n",
		e.Value, e.Value.FloatString(8), pct(new(big.Rat).Neg(e.Value)))
	fmt.Fprintf(w, "at the equilibrium, of %v ordered six-card deals:\n", c.Deals)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "outcome\tdeals\tprobability\t")
	for _, r := range []struct {
		name string
		n    *big.Rat
	}{{"banker wins", c.BankWins}, {"player wins", c.PlayerWins}, {"stand-off", c.Ties}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", r.name, r.n.RatString(), c.Prob(r.n).FloatString(8))
	}
	return tw.Flush()
}

func printBets(w io.Writer, bets []odds.BetOdds) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "bet\tpays\twins\tloses\treturned\texpected value (exact)\texpected value\thouse edge\t")
	for _, b := range bets {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%v\t%v\t%s\t%s\t\n", b.Bet, b.Pays, b.Win, b.Lose, b.Push, b.EV, b.EV.FloatString(8), pct(b.HouseEdge()))
	}
	return tw.Flush()
}

func printBanque(w io.Writer, shoe odds.Shoe, desc string, st odds.BanqueStrategy) error {
	o, err := odds.Banque(shoe, st)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "baccarat banque, shoe: %s\nmodel: %s\nstrategy: %v\nexact enumeration of %v ordered nine-card deals\n\n", desc, odds.BanqueModel, st, o.Deals)
	res := []struct {
		name string
		o    rules.Outcome
	}{{"bank wins", rules.OutcomeBankWins}, {"bank loses", rules.OutcomeBankLoses}, {"stand-off", rules.OutcomeStandOff}}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "right table\tleft table\tdeals\tprobability\t")
	for _, r := range res {
		for _, l := range res {
			n := o.Count(r.o, l.o)
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t\n", r.name, l.name, n, o.Prob(n).FloatString(8))
		}
	}
	fmt.Fprintln(tw, "\t\t\t\t")
	fmt.Fprintln(tw, "table\tresult\tdeals\tprobability\t")
	for _, t := range []rules.Table{rules.TableRight, rules.TableLeft} {
		for _, r := range res {
			n := o.Table(t, r.o)
			fmt.Fprintf(tw, "%v\t%s\t%v\t%s\t\n", t, r.name, n, o.Prob(n).FloatString(8))
		}
	}
	fmt.Fprintf(tw, "banker\tnatural\t%v\t%s\t\n", o.BankerNaturals, o.Prob(o.BankerNaturals).FloatString(8))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := printBets(w, o.Bets); err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, "(the bank pays no commission; the 2.5% auction fee of BQ-BANK is on the bid and not in these figures)")
	return err
}

func printOld(w io.Writer, shoe odds.Shoe, desc string) error {
	o, err := odds.Old(shoe, odds.OldStrategy{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "old baccarat (aces 11), banker against one punter, shoe: %s\nmodel: %s\nstrategy: %v\nexact enumeration of %v ordered six-card deals\n\n", desc, odds.OldModel, o.Strategy, o.Deals)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "outcome\tdeals\tprobability\t")
	for _, r := range []struct {
		name string
		n    *big.Int
	}{
		{"punter wins", o.PunterWins}, {"banker wins", o.BankerWins}, {"tie (goes to the banker)", o.Ties},
		{"natural, no draw", o.Naturals}, {"punter baccarat (takes the bank)", o.PunterBaccarat},
	} {
		fmt.Fprintf(tw, "%s\t%v\t%s\t\n", r.name, r.n, o.Prob(r.n).FloatString(8))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := printBets(w, o.Bets); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "(EV per unit of the punter's stake; the banker holds double the stake (OLD-STAKE): his gain per unit held %v = %s)\n",
		o.BankerPerUnitHeld, o.BankerPerUnitHeld.FloatString(8))
	return err
}
