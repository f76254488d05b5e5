package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/chemmy/chemmy/services/kit/buildinfo"
)

// runVersion is `chemmy version`: this build's version, source revision
// and Go version (buildinfo; the same as its chemmy_build_info series),
// one per line:
//
//	chemmy v0.3.0
//	revision 9707cf8...
//	go go1.26.8 linux/amd64
func runVersion(args []string, w io.Writer) int {
	fs := flag.NewFlagSet("chemmy version", flag.ContinueOnError)
	fs.SetOutput(w)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(w, "usage: chemmy version")
		return 2
	}
	i := buildinfo.Get()
	rev := i.Revision
	if i.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(w, "chemmy %s\nrevision %s\ngo %s %s/%s\n", i.Version, rev, i.Go, runtime.GOOS, runtime.GOARCH)
	return 0
}
