package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chemmy/chemmy/services/kit/opwallet"
	"github.com/chemmy/chemmy/services/kit/opwallet/refwallet"
	"github.com/chemmy/chemmy/wallet-svc/walletsvc"
)

// Wallet modes (Config.Wallet).
const (
	WalletTransfer = "transfer"
	WalletSeamless = "seamless"
)

// walletMode is the walletsvc mode of Config.Wallet (Start refuses
// another value than these).
func walletMode(w string) string {
	if w == WalletSeamless {
		return walletsvc.ModeSeamless
	}
	return walletsvc.ModeTransfer
}

// operator returns the operator wallet wallet-svc calls in seamless mode
// (nil in transfer mode), starting the reference operator wallet when the
// configuration names none.
func (s *Stack) operator(ctx context.Context, c Config) (opwallet.Operator, error) {
	switch c.Wallet {
	case "", WalletTransfer:
		if c.Operator != nil {
			return nil, errors.New("stack: an operator wallet is given but the wallet mode is not seamless")
		}
		return nil, nil
	case WalletSeamless:
	default:
		return nil, fmt.Errorf("stack: wallet mode %q: want %q or %q", c.Wallet, WalletTransfer, WalletSeamless)
	}
	if c.Operator != nil {
		return c.Operator, nil
	}
	dir := filepath.Join(c.DataDir, "operator")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	secret, err := keptSecret(filepath.Join(dir, "secret"))
	if err != nil {
		return nil, err
	}
	s.OperatorAdminTokenFile = filepath.Join(dir, "admin-token")
	admin, err := keptSecret(s.OperatorAdminTokenFile)
	if err != nil {
		return nil, err
	}
	ref, err := refwallet.Start(ctx, refwallet.Config{Addr: c.OperatorWalletAddr, DataFile: filepath.Join(dir, "opwallet.db"),
		Secret: secret, AdminToken: string(admin), Currency: c.Currency, Faults: c.OperatorFaults, Logger: c.Logger})
	if err != nil {
		return nil, fmt.Errorf("stack: reference operator wallet: %w", err)
	}
	s.add(func() { _ = ref.Stop() }, func() error { return nil })
	s.OperatorWallet = ref
	return opwallet.NewHTTP(opwallet.HTTPConfig{BaseURL: ref.BaseURL(), AllowInsecureHTTP: true, Secret: secret})
}

// keptSecret returns the hex secret stored in path, making a random one
// (32 bytes) on first use.
func keptSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if v := strings.TrimSpace(string(b)); v != "" {
			return []byte(v), nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("stack: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	v := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	return []byte(v), nil
}
