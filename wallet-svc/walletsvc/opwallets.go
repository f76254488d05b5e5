package walletsvc

// The operators file in wallet-svc (Config.OperatorsFile; docs/operators.md,
// design-tenancy step 4): each operator's seamless wallet and currencies.
//
// In seamless mode an operator's debits, credits, rollbacks and round
// ends go to the wallet its entry's `wallet` names (its url, signed with
// the first of its secret_files, answers trusted when signed with either).
// The default operator (Config.OperatorID) whose entry has no wallet, or
// who is not listed, keeps Config.Operator (the -operator-url flags). An
// operator with neither is refused FAILED_PRECONDITION SEAMLESS_WALLET.
//
// An operator listed with `currencies` may only name accounts in those:
// any other is INVALID_ARGUMENT CURRENCY_UNKNOWN (unknown to that
// operator, as to the deployment: the caller learns nothing more).
//
// The file, and every secret file it names, is read again every
// Config.OperatorsReloadInterval: a rotated secret is taken without
// restart (the client keeps its connections: opwallet.HTTP.SetSecrets),
// an operator added is served. A file that does not parse, names a
// currency the deployment does not have, or a secret that cannot be read
// keeps the last good configuration: logged as an ERROR once per distinct
// error, counted in chemmy_wallet_reload_errors_total{what="operators"}.
// At start such a file is an error (the service does not start).

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/chemmy/chemmy/services/kit/operators"
	"github.com/chemmy/chemmy/services/kit/opwallet"
)

// DefaultOperatorsReloadInterval is how often the operators file is read
// again by default (the gateway's -reload-interval default).
const DefaultOperatorsReloadInterval = 10 * time.Second

// opWallet is one operator's wallet client built from its entry, with
// what it was built from (to keep it across reloads).
type opWallet struct {
	client  *opwallet.HTTP
	url, ca string
	secrets [][]byte
}

// opConfig is one reading of the operators file.
type opConfig struct {
	wallets    map[string]*opWallet
	currencies map[string][]string
}

// opFile is the operators file's state in the service.
type opFile struct {
	path      string
	seamless  bool
	timeout   time.Duration
	allowHTTP bool
	cur       atomic.Pointer[opConfig]
	errors    prometheus.Counter
	mu        sync.Mutex // serializes reloads; guards lastErr
	lastErr   string
}

func newOpFile(c Config) *opFile {
	f := &opFile{path: c.OperatorsFile, seamless: c.Operator != nil || c.Seamless, timeout: c.OperatorTimeout, allowHTTP: c.OperatorAllowHTTP,
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "chemmy_wallet_reload_errors_total",
			Help:        "Reloads of a configuration file that failed (the last good one is kept).",
			ConstLabels: prometheus.Labels{"what": "operators"}})}
	f.cur.Store(&opConfig{})
	return f
}

// load reads the file and its secrets, building or updating the wallet
// clients; on error nothing changes.
func (f *opFile) load(cs currencies) error {
	file, err := operators.Load(f.path)
	if err != nil {
		return err
	}
	if err := file.CheckCurrencies(cs.known); err != nil {
		return err
	}
	old := f.cur.Load()
	next := &opConfig{wallets: map[string]*opWallet{}, currencies: map[string][]string{}}
	type update struct {
		w       *opWallet
		secrets [][]byte
	}
	var updates []update
	for _, o := range file.Operators {
		if len(o.Currencies) > 0 {
			next.currencies[o.ID] = o.Currencies
		}
		if o.Wallet == nil || !f.seamless {
			continue
		}
		secrets, err := o.Wallet.ReadSecrets()
		if err != nil {
			return fmt.Errorf("operator %q: %w", o.ID, err)
		}
		if w := old.wallets[o.ID]; w != nil && w.url == o.Wallet.URL && w.ca == o.Wallet.CAFile {
			if !slices.EqualFunc(w.secrets, secrets, bytes.Equal) {
				updates = append(updates, update{w, secrets})
			}
			next.wallets[o.ID] = w
			continue
		}
		w, err := f.newWallet(*o.Wallet, secrets)
		if err != nil {
			return fmt.Errorf("operator %q: wallet: %w", o.ID, err)
		}
		next.wallets[o.ID] = w
	}
	for _, u := range updates { // nothing fails past here
		_ = u.w.client.SetSecrets(u.secrets[0], previousOf(u.secrets))
		u.w.secrets = u.secrets
	}
	f.cur.Store(next)
	return nil
}

func previousOf(secrets [][]byte) []byte {
	if len(secrets) > 1 {
		return secrets[1]
	}
	return nil
}

// newWallet builds an operator's client (as -operator-url's: https unless
// loopback or -operator-allow-http; ca_file's CAs, else the system roots).
func (f *opFile) newWallet(w operators.Wallet, secrets [][]byte) (*opWallet, error) {
	cfg := opwallet.HTTPConfig{BaseURL: w.URL, Secret: secrets[0], PreviousSecret: previousOf(secrets),
		Timeout: f.timeout, AllowInsecureHTTP: f.allowHTTP}
	if w.CAFile != "" {
		if !strings.HasPrefix(strings.ToLower(w.URL), "https://") {
			return nil, errors.New("ca_file needs an https url")
		}
		tc, err := OperatorTLS(w.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		cfg.TLSConfig = tc
	}
	c, err := opwallet.NewHTTP(cfg)
	if err != nil {
		return nil, err
	}
	return &opWallet{client: c, url: w.URL, ca: w.CAFile, secrets: secrets}, nil
}

// OperatorTLS is the TLS configuration trusting the CAs of PEM file
// caFile (TLS 1.2 at least), for an operator wallet's client. Errors: the
// file cannot be read or holds no PEM certificate.
func OperatorTLS(caFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// reloadOperators is load for the poll: an error is counted, and logged when it
// differs from the last one.
func (s *Service) reloadOperators() {
	f := s.opFile
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.load(s.cur)
	if err == nil {
		if f.lastErr != "" {
			s.log.Info("operators file read again", "file", f.path)
		}
		f.lastErr = ""
		return
	}
	f.errors.Inc()
	if err.Error() != f.lastErr {
		s.log.Error("operators file not taken, the last good one is kept", "file", f.path, "err", err)
	}
	f.lastErr = err.Error()
}

// operatorsLoop reads the operators file again every interval until ctx
// is done.
func (s *Service) operatorsLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.reloadOperators()
		}
	}
}

// walletOf is operator op's seamless wallet: its entry's in the operators
// file, else Config.Operator for the default operator; nil: none.
func (s *Service) walletOf(op string) opwallet.Operator {
	if s.opFile != nil {
		if w := s.opFile.cur.Load().wallets[op]; w != nil {
			return w.client
		}
	}
	if op == s.opID && s.op != nil {
		return s.op
	}
	return nil
}

// walletOperators are the operators with a seamless wallet (walletOf),
// sorted: the default operator's first when he has one, then the
// operators file's.
func (s *Service) walletOperators() []string {
	var ops []string
	if s.opFile != nil {
		for op := range s.opFile.cur.Load().wallets {
			if op != s.opID {
				ops = append(ops, op)
			}
		}
		slices.Sort(ops)
	}
	if s.walletOf(s.opID) != nil {
		ops = append([]string{s.opID}, ops...)
	}
	return ops
}

// checkOperatorCurrency refuses (INVALID_ARGUMENT CURRENCY_UNKNOWN) an
// account id of operator op in a currency op's entry does not list.
func (s *Service) checkOperatorCurrency(op, id string) error {
	return s.checkOperatorCurrencyCode(op, currencyOf(bare(id), s.currency))
}

// checkOperatorCurrencyCode refuses (INVALID_ARGUMENT CURRENCY_UNKNOWN)
// currency c for operator op when op's entry lists currencies without it.
func (s *Service) checkOperatorCurrencyCode(op, c string) error {
	if s.opFile == nil {
		return nil
	}
	allowed := s.opFile.cur.Load().currencies[op]
	if allowed == nil {
		return nil
	}
	if !slices.Contains(allowed, c) {
		return failf(codes.InvalidArgument, reasonCurrencyUnknown,
			"currency %s is not one of operator %q's (%s)", c, op, strings.Join(allowed, ", "))
	}
	return nil
}
