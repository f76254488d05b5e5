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
// builds it from the module cache at the version the workspace requires
// (cmd/go.mod and go.sum: the one the local stack embeds).
const NATSServerModule = "github.com/nats-io/nats-server/v2"

// goCommand is one go command of Build: in dir (from the root), its
// arguments.
type goCommand struct {
	dir  string
	args []string
}

// buildCommands are Build's go commands, binaries into bin: nats-server
// built in the cmd module, which requires it (its version and checksum
// from cmd/go.mod and go.sum, its source from the module cache: nothing
// is fetched, so it builds offline), then each service from its
// directory.
func buildCommands(bin string) []goCommand {
	cmds := []goCommand{{dir: "cmd", args: []string{"build", "-o", filepath.Join(bin, "nats-server"), NATSServerModule}}}
	for _, b := range Binaries {
		if b == "nats-server" {
			continue
		}
		cmds = append(cmds, goCommand{dir: ".", args: []string{"build", "-o", filepath.Join(bin, b), "./" + b}})
	}
	return cmds
}

// Build makes the Binaries in binDir from the source tree at root (the
// directory of go.work): `go build` of nats-server (the version of
// cmd/go.mod) and of wallet-svc, shoe-svc, table-svc and the gateway,
// with the environment env added to each go command (GOPROXY=off: the
// rehearsal builds without the network). It needs the go command on PATH
// and the modules in the module cache (any build of the workspace puts
// them there); the Go build cache makes a second build quick.
func Build(ctx context.Context, root, binDir string, env ...string) error {
	bin, err := filepath.Abs(binDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	for _, c := range buildCommands(bin) {
		cmd := exec.CommandContext(ctx, "go", c.args...)
		cmd.Dir = filepath.Join(root, c.dir)
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cluster: go %s (in %s): %w\n%s", strings.Join(c.args, " "), c.dir, err, out.String())
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
