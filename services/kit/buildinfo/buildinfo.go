// Package buildinfo says which chemmy a binary is: its version, the
// source revision it was built from and the Go toolchain that built it,
// for `chemmy version` and the chemmy_build_info series every service
// exports.
//
// The version and revision come from the linker when the build stamps
// them (the Makefile and deploy/docker/Dockerfile do):
//
//	go build -ldflags "-X github.com/chemmy/chemmy/services/kit/buildinfo.version=v1.2.3 \
//	  -X github.com/chemmy/chemmy/services/kit/buildinfo.revision=$(git rev-parse HEAD)" ./cmd/chemmy
//
// else from runtime/debug.ReadBuildInfo: the main module's version
// ("(devel)" for a build from a source tree) and the VCS revision Go
// stamps when it builds with VCS information (not under
// -buildvcs=false). What is known by neither is "unknown".
package buildinfo

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Set with -ldflags "-X ...": see the package comment.
var version, revision string

// Unknown is the value of what the build did not record.
const Unknown = "unknown"

// Info describes a build.
type Info struct {
	// Version is the release ("v0.3.0", or a git describe), or "(devel)"
	// for a build from a source tree without a stamped version.
	Version string
	// Revision is the source revision (a git commit), Unknown when the
	// build recorded none; Modified says the tree had local changes (Go's
	// vcs.modified).
	Revision string
	Modified bool
	// Go is the Go toolchain's version (runtime.Version()).
	Go string
	// Path is the main package's import path ("" when unknown).
	Path string
}

// Get is this binary's build information.
func Get() Info {
	return fromBuildInfo(version, revision, debug.ReadBuildInfo)
}

func fromBuildInfo(version, revision string, read func() (*debug.BuildInfo, bool)) Info {
	i := Info{Version: version, Revision: revision, Go: runtime.Version()}
	if bi, ok := read(); ok {
		i.Path = bi.Path
		if i.Version == "" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Revision == "" {
					i.Revision = s.Value
				}
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
		if bi.GoVersion != "" {
			i.Go = bi.GoVersion
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	if i.Revision == "" {
		i.Revision = Unknown
	}
	return i
}

// Collector is the series chemmy_build_info{version,revision,go}, always
// 1: the build of the process, to join on or to see a roll-out progress
// (count by (version) (chemmy_build_info)).
func Collector() prometheus.Collector {
	i := Get()
	rev := i.Revision
	if i.Modified {
		rev += "+modified"
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "chemmy_build_info",
		Help:        "The build of this process: version, source revision and Go version (the value is always 1).",
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": rev, "go": i.Go},
	}, func() float64 { return 1 })
}
