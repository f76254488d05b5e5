package natsauth

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	"github.com/nats-io/nats-server/v2/server"
)

// k8sConf is the Kubernetes NATS configuration, relative to this package.
const k8sConf = "../../../deploy/k8s/base/nats/nats.conf"

// TestK8sConfGrantsPermissions: deploy/k8s/base/nats/nats.conf grants
// each user exactly Permissions(user), no more and no less, and has no
// user besides Users. The file is parsed with the NATS server's own
// parser; its users are told apart by their nkey variables
// ($TABLE_SVC_NKEY for table-svc, ...), whose placeholder values come
// from nkeys.conf beside it.
func TestK8sConfGrantsPermissions(t *testing.T) {
	if _, err := os.Stat(k8sConf); err != nil {
		t.Fatalf("the Kubernetes NATS configuration is part of the repository: %v", err)
	}
	t.Setenv("POD_NAME", "nats-0") // the server_name variable, set by Kubernetes
	nkeys, err := conf.ParseFile(filepath.Join(filepath.Dir(k8sConf), "nkeys.conf"))
	if err != nil {
		t.Fatal(err)
	}
	userOfKey := map[string]string{}
	for _, u := range Users {
		v, ok := nkeys[nkeyVar(u)].(string)
		if !ok {
			t.Fatalf("nkeys.conf has no %s for %s", nkeyVar(u), u)
		}
		userOfKey[v] = u
	}
	c, err := conf.ParseFile(k8sConf)
	if err != nil {
		t.Fatal(err)
	}
	authz, _ := c["authorization"].(map[string]any)
	entries, _ := authz["users"].([]any)
	seen := map[string]bool{}
	for i, e := range entries {
		entry, _ := e.(map[string]any)
		key, _ := entry["nkey"].(string)
		user, ok := userOfKey[key]
		if !ok {
			t.Errorf("user %d of nats.conf: nkey %q is none of $%s", i, key, strings.Join(mapSlice(Users, nkeyVar), ", $"))
			continue
		}
		if seen[user] {
			t.Errorf("%s is listed twice", user)
		}
		seen[user] = true
		for k := range entry {
			if k != "nkey" && k != "permissions" {
				t.Errorf("%s: unexpected setting %q", user, k)
			}
		}
		got, err := confPermissions(entry["permissions"])
		if err != nil {
			t.Errorf("%s: %v", user, err)
			continue
		}
		want := normalize(Permissions(user))
		if !equalPermissions(got, want) {
			t.Errorf("%s: nats.conf grants\n  %s\nnatsauth.Permissions grants\n  %s", user, got, want)
		}
	}
	for _, u := range Users {
		if !seen[u] {
			t.Errorf("nats.conf has no user %s", u)
		}
	}
}

// nkeyVar is the variable of user's public nkey: TABLE_SVC_NKEY.
func nkeyVar(user string) string {
	return strings.ToUpper(strings.ReplaceAll(user, "-", "_")) + "_NKEY"
}

func mapSlice(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// perms is a user's permissions as sorted subject lists.
type perms struct {
	pubAllow, pubDeny, subAllow, subDeny []string
}

func (p perms) String() string {
	return fmt.Sprintf("publish allow %q deny %q; subscribe allow %q deny %q", p.pubAllow, p.pubDeny, p.subAllow, p.subDeny)
}

func equalPermissions(a, b perms) bool {
	return slices.Equal(a.pubAllow, b.pubAllow) && slices.Equal(a.pubDeny, b.pubDeny) &&
		slices.Equal(a.subAllow, b.subAllow) && slices.Equal(a.subDeny, b.subDeny)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func normalize(p *server.Permissions) perms {
	var out perms
	if p.Publish != nil {
		out.pubAllow, out.pubDeny = sorted(p.Publish.Allow), sorted(p.Publish.Deny)
	}
	if p.Subscribe != nil {
		out.subAllow, out.subDeny = sorted(p.Subscribe.Allow), sorted(p.Subscribe.Deny)
	}
	return out
}

// confPermissions reads a permissions block: publish and subscribe, each
// a subject, a list of subjects (both meaning allow), or a map with allow
// and deny. Anything else (responses, other keys) is an error: natsauth
// grants nothing of the kind.
func confPermissions(v any) (perms, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return perms{}, fmt.Errorf("permissions is %T, not a map", v)
	}
	var out perms
	for k, v := range m {
		allow, deny, err := confSubjects(v)
		if err != nil {
			return perms{}, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "publish":
			out.pubAllow, out.pubDeny = allow, deny
		case "subscribe":
			out.subAllow, out.subDeny = allow, deny
		default:
			return perms{}, fmt.Errorf("unexpected permission %q", k)
		}
	}
	return out, nil
}

func confSubjects(v any) (allow, deny []string, err error) {
	switch v := v.(type) {
	case string, []any:
		allow, err = confList(v)
		return sorted(allow), nil, err
	case map[string]any:
		for k, l := range v {
			s, err := confList(l)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", k, err)
			}
			switch k {
			case "allow":
				allow = sorted(s)
			case "deny":
				deny = sorted(s)
			default:
				return nil, nil, fmt.Errorf("unexpected key %q", k)
			}
		}
		return allow, deny, nil
	}
	return nil, nil, fmt.Errorf("a %T, not subjects", v)
}

func confList(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("subject %v is a %T", e, e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %T, not a subject list", v)
}
