// Command prepare readies a running wallet-svc for a ghz run of
// SettleCoup: it funds a banker and a punter, puts up one bank hold and
// -n bet holds (from -c concurrent clients), and writes to -out a JSON
// array of -n SettleCoupRequests, each with its own coup id and bet hold,
// for ghz --data-file (ghz sends the array's elements round robin).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/auth"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7002", "wallet-svc address")
	n := flag.Int("n", 20000, "settlements to prepare")
	conc := flag.Int("c", 64, "concurrent clients placing holds")
	run := flag.String("run", "load", "id prefix")
	out := flag.String("out", "settle.json", "ghz data file")
	flag.Parse()
	if err := prepare(*addr, *n, *conc, *run, *out); err != nil {
		fmt.Fprintln(os.Stderr, "prepare:", err)
		os.Exit(1)
	}
}

func prepare(addr string, n, conc int, run, out string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := walletv1.NewWalletServiceClient(conn)
	op := auth.Outgoing(context.Background(), auth.Caller{Subject: "load", Role: auth.RoleOperator})
	svc := auth.Outgoing(context.Background(), auth.Caller{Subject: "load", Role: auth.RoleService})
	banker, punter := "player:"+run+"-banker", "player:"+run+"-punter"
	for acct, amt := range map[string]int64{banker: 1 << 40, punter: int64(n)*100 + 100} {
		if _, err := c.Deposit(op, &walletv1.DepositRequest{RequestId: run + "-dep-" + acct, AccountId: acct, Amount: amt}); err != nil {
			return err
		}
	}
	br, err := c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: run + "-bank", AccountId: banker, Amount: 1 << 39})
	if err != nil {
		return err
	}
	reqs := make([]json.RawMessage, n)
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += conc {
				h, err := c.PlaceHold(svc, &walletv1.PlaceHoldRequest{RequestId: fmt.Sprintf("%s-bet-%d", run, i), AccountId: punter, Amount: 100})
				if err != nil {
					errs <- err
					return
				}
				b, err := protojson.Marshal(&walletv1.SettleCoupRequest{CoupId: fmt.Sprintf("%s-coup-%d", run, i),
					BankHoldId: br.GetHold().GetHoldId(), Outcome: walletv1.CoupOutcome_COUP_OUTCOME_BANK_WINS, CommissionBp: 500,
					Bets: []*walletv1.CoupBet{{HoldId: h.GetHold().GetHoldId(), Amount: 100}}})
				if err != nil {
					errs <- err
					return
				}
				reqs[i] = b
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	b, err := json.Marshal(reqs)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
