package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/chemmy/chemmy/cmd/cluster"
	tablev1 "github.com/chemmy/chemmy/proto/gen/chemmy/table/v1"
	walletv1 "github.com/chemmy/chemmy/proto/gen/chemmy/wallet/v1"
	"github.com/chemmy/chemmy/services/kit/shard"
)

// runCheck is `chemmy check`: a running chemmy at rest, checked through
// its gateway and its event stream, as `make k8s-e2e` does from inside the
// cluster after its load and its kills (docs/kubernetes.md).
func runCheck(args []string) int { return checkMain(args, os.Stdout, os.Stderr) }

// checkMain checks, until they all hold or -timeout passes:
//   - the ledger: AuditLedger (as the auditor) balanced;
//   - the escrow: the money the wallet holds in holds (the audit's held,
//     every currency) equals what the tables say is at stake, the sum
//     over every table (ListTables, then GetTable as the croupier) of its
//     banker's bank, its coup's bets and its highest bid;
//   - the events: for each table, the stream CHEMMY (NATS at -nats-url as
//     the read-only user, -nats-nkey) holds its events 1, 2, ...
//     event_sequence in order, each once;
//   - the shards: each of 0..-shards-1 answered GetTable for a table of
//     its own (a table's id starts s<shard>-: package shard).
//
// It prints one line per check and last "check: ..." with the figures;
// exit status 0 when every check held, 1 when one did not within
// -timeout, 2 on bad flags.
func checkMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chemmy check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gw := fs.String("gateway", "127.0.0.1:7000", "the gateway's gRPC address (plaintext h2c)")
	auditor := fs.String("auditor-token", "auditor-token", "token of an auditor: AuditLedger")
	croupier := fs.String("croupier-token", "croupier-token", "token of a croupier: ListTables, GetTable")
	natsURL := fs.String("nats-url", "", "NATS URL(s), comma-separated: the event stream")
	nkey := fs.String("nats-nkey", "", "the read-only NATS user's nkey seed file")
	shards := fs.Int("shards", 1, "the table-svc shards, each of which must answer for a table of its own (0: not checked)")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long the checks may take to hold (escrows settle, outboxes publish)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *natsURL == "" || *nkey == "" || *shards < 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "chemmy check: -nats-url and -nats-nkey are required, -shards at least 0, -timeout positive")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cc, err := grpc.NewClient(*gw, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(stderr, "chemmy check:", err)
		return 2
	}
	defer cc.Close()
	c := checker{
		wallet:   walletv1.NewWalletServiceClient(cc),
		tables:   tablev1.NewTableServiceClient(cc),
		auditor:  *auditor,
		croupier: *croupier,
		shards:   *shards,
	}
	var last error
	for {
		var r checkReport
		if r, last = c.once(ctx); last == nil {
			// the stream, once the tables agree with the wallet
			if last = cluster.CheckEvents(ctx, *natsURL, *nkey, r.sequences); last == nil {
				var events uint64
				for _, s := range r.sequences {
					events += s
				}
				fmt.Fprintf(stdout, "ledger balanced: %d accounts, %d transfers replayed\n", r.accounts, r.transfers)
				fmt.Fprintf(stdout, "escrow %d = the tables' banks, bets and bids %d (%d open holds)\n", r.held, r.atStake, r.openHolds)
				fmt.Fprintf(stdout, "events: %d tables' %d events in the stream, each 1..event_sequence in order\n", len(r.sequences), events)
				fmt.Fprintf(stdout, "shards serving: %s\n", r.serving)
				fmt.Fprintf(stdout, "check: ledger balanced, escrow %d held = at stake, %d events in order, %d shards serving\n", r.held, events, c.shards)
				return 0
			}
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(stdout, "check failed:", last)
			return 1
		case <-time.After(time.Second):
		}
	}
}

type checker struct {
	wallet            walletv1.WalletServiceClient
	tables            tablev1.TableServiceClient
	auditor, croupier string
	shards            int
}

type checkReport struct {
	accounts, transfers, openHolds int64
	held, atStake                  int64
	sequences                      map[string]uint64
	serving                        string
}

func (c checker) as(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// once reads the wallet's audit and every table once, and compares them.
func (c checker) once(ctx context.Context) (checkReport, error) {
	r := checkReport{sequences: map[string]uint64{}}
	audit, err := c.wallet.AuditLedger(c.as(ctx, c.auditor), &walletv1.AuditLedgerRequest{})
	if err != nil {
		return r, fmt.Errorf("AuditLedger: %w", err)
	}
	if !audit.GetBalanced() {
		return r, fmt.Errorf("the ledger is not balanced: %s", strings.Join(audit.GetDiscrepancies(), "; "))
	}
	r.accounts, r.transfers, r.openHolds = audit.GetAccountsChecked(), audit.GetTransfersReplayed(), audit.GetOpenHolds()
	for _, cur := range audit.GetCurrencies() {
		r.held += cur.GetHeld()
	}
	ids, err := c.tableIDs(ctx)
	if err != nil {
		return r, err
	}
	served := map[int]int{}
	for _, id := range ids {
		t, err := c.tables.GetTable(c.as(ctx, c.croupier), &tablev1.GetTableRequest{TableId: id})
		if err != nil {
			return r, fmt.Errorf("GetTable %s: %w", id, err)
		}
		v := t.GetTable()
		r.sequences[id] = v.GetEventSequence()
		if v.GetBankerPlayerId() != "" {
			r.atStake += v.GetBank()
		}
		for _, b := range v.GetCoup().GetBets() {
			r.atStake += b.GetAmount()
		}
		if v.GetHighestBidderPlayerId() != "" {
			r.atStake += v.GetHighestBid()
		}
		if k, ok := shard.Of(id); ok {
			served[k]++
		}
	}
	var missing []string
	var serving []string
	for k := range c.shards {
		if served[k] == 0 {
			missing = append(missing, strconv.Itoa(k))
		} else {
			serving = append(serving, fmt.Sprintf("shard %d (%d tables)", k, served[k]))
		}
	}
	r.serving = strings.Join(serving, ", ")
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("no table of shard(s) %s answered", strings.Join(missing, ", ")))
	}
	if r.held != r.atStake {
		errs = append(errs, fmt.Errorf("the wallet holds %d in escrow, the tables have %d at stake (banks, bets, bids)", r.held, r.atStake))
	}
	return r, errors.Join(errs...)
}

// tableIDs lists every table (ListTables, every page), sorted.
func (c checker) tableIDs(ctx context.Context) ([]string, error) {
	var ids []string
	token := ""
	for {
		resp, err := c.tables.ListTables(c.as(ctx, c.croupier), &tablev1.ListTablesRequest{PageSize: 100, PageToken: token})
		if err != nil {
			return nil, fmt.Errorf("ListTables: %w", err)
		}
		if u := resp.GetUnreachable(); len(u) > 0 {
			return nil, fmt.Errorf("ListTables: unreachable %s", strings.Join(u, ", "))
		}
		for _, t := range resp.GetTables() {
			ids = append(ids, t.GetTableId())
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	slices.Sort(ids)
	return ids, nil
}
