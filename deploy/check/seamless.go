package check

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// CheckSeamless: a container running -wallet-mode=seamless (wallet-svc
// calling the operator's wallet, components/seamless-wallet) starts and
// is fenced:
//   - its -operator-url, once $(VAR) is resolved from the container's env
//     or the ConfigMaps of its envFrom, is https, or plain http to a
//     loopback host: wallet-svc's adapter refuses any other at start;
//   - its -operator-secret-file is in a directory mounted from a Secret,
//     and when that Secret is in the render it has the file's key;
//   - an egress NetworkPolicy selects its pod, and every other pod of the
//     render, so that only it reaches the operator.
func CheckSeamless(r Render) []string {
	var out []string
	ws := r.Workloads()
	for _, w := range ws {
		for _, c := range Containers(w.Spec) {
			if mode, _ := Arg(c.Args, "wallet-mode"); mode != "seamless" {
				continue
			}
			at := w.Ref + " container " + c.Name
			out = append(out, operatorURLProblems(r, at, c)...)
			out = append(out, secretFileProblems(r, at, w.Spec, c)...)
			for _, o := range ws {
				if !egressRestricted(r, o) {
					who := "another pod"
					if o.Ref == w.Ref {
						who = "its pod"
					}
					out = append(out, fmt.Sprintf("%s: seamless, but no egress NetworkPolicy selects %s (%s): components/seamless-wallet's egress.yaml", at, who, o.Ref))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func operatorURLProblems(r Render, at string, c *corev1.Container) []string {
	raw, ok := Arg(c.Args, "operator-url")
	if !ok {
		return []string{at + ": seamless without -operator-url"}
	}
	if name, isRef := strings.CutPrefix(raw, "$("); isRef && strings.HasSuffix(name, ")") {
		name = strings.TrimSuffix(name, ")")
		v, found := envValue(r, c, name)
		if !found {
			return []string{fmt.Sprintf("%s: -operator-url=%s: %s is in neither its env nor a ConfigMap of its envFrom", at, raw, name)}
		}
		raw = v
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return []string{fmt.Sprintf("%s: operator URL %q is not an absolute URL", at, raw)}
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return []string{fmt.Sprintf("%s: operator URL %q is plain http to a non-loopback host, which wallet-svc refuses at start", at, raw)}
	}
	return []string{fmt.Sprintf("%s: operator URL %q is not http(s)", at, raw)}
}

// envValue is the value of the environment variable name in c: its env
// (a literal value), else a ConfigMap of its envFrom in the render.
func envValue(r Render, c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom == nil {
			return e.Value, true
		}
	}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		if o, ok := r.Find("ConfigMap", ef.ConfigMapRef.Name); ok {
			if v, ok := o.Value.(*corev1.ConfigMap).Data[strings.TrimPrefix(name, ef.Prefix)]; ok && strings.HasPrefix(name, ef.Prefix) {
				return v, true
			}
		}
	}
	return "", false
}

// loopback is the opwallet adapter's rule: localhost or a loopback IP.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func secretFileProblems(r Render, at string, ps *corev1.PodSpec, c *corev1.Container) []string {
	file, ok := Arg(c.Args, "operator-secret-file")
	if !ok {
		return []string{at + ": seamless without -operator-secret-file (a Secret mounted as a file)"}
	}
	dir, key := path.Split(file)
	dir = path.Clean(dir)
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) != dir {
			continue
		}
		i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || ps.Volumes[i].Secret == nil {
			return []string{fmt.Sprintf("%s: -operator-secret-file=%s: %s is not mounted from a Secret", at, file, dir)}
		}
		name := ps.Volumes[i].Secret.SecretName
		if o, ok := r.Find("Secret", name); ok {
			s := o.Value.(*corev1.Secret)
			if _, ok := s.Data[key]; !ok {
				if _, ok := s.StringData[key]; !ok {
					return []string{fmt.Sprintf("%s: -operator-secret-file=%s: Secret %s has no key %s", at, file, name, key)}
				}
			}
		}
		return nil
	}
	return []string{fmt.Sprintf("%s: -operator-secret-file=%s: no volume is mounted at %s", at, file, dir)}
}

// egressRestricted: some NetworkPolicy of the render with an Egress
// policy type selects the workload's pods.
func egressRestricted(r Render, w Workload) bool {
	for _, o := range r.Kind("NetworkPolicy") {
		np := o.Value.(*networkingv1.NetworkPolicy)
		if slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) && Selects(&np.Spec.PodSelector, w.Labels) {
			return true
		}
	}
	return false
}
