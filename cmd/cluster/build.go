package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NATSServerModule is the module of the nats-server binary; Build
// installs the version the cmd module requires (cmd/go.mod), the one the
// local stack embeds.
const NATSServerModule = "github.com/nats-io/nats-server/v2"

// Build makes the Binaries in binDir from the source tree at root (the
// directory of go.work): `go build` of wallet-svc, shoe-svc, table-svc and
// the gateway, and `go install` of nats-server at the version of
// cmd/go.mod. It needs the go command on PATH; the Go build cache makes
// a second build quick.
func Build(ctx context.Context, root, binDir string) error {
	bin, err := filepath.Abs(binDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	goCmd := func(dir string, env []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("cluster: go %s: %w\n%s", strings.Join(args, " "), err, out.String())
		}
		return strings.TrimSpace(out.String()), nil
	}
	version, err := goCmd(filepath.Join(root, "cmd"), nil, "list", "-m", "-f", "{{.Version}}", NATSServerModule)
	if err != nil {
		return err
	}
	if _, err := goCmd(root, []string{"GOBIN=" + bin}, "install", NATSServerModule+"@"+version); err != nil {
		return err
	}
	for _, b := range Binaries {
		if b == "nats-server" {
			continue
		}
		if _, err := goCmd(root, nil, "build", "-o", filepath.Join(bin, b), "./"+b); err != nil {
			return err
		}
	}
	return nil
}

// FindRoot is the source tree's root: dir or the nearest parent of it
// holding go.work.
func FindRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("cluster: no go.work in " + dir + " or above: run from chemmy's source tree")
		}
		d = parent
	}
}
