// Command stamp prints the build information buildinfo reads, for
// TestLinkerStamp.
package main

import (
	"fmt"

	"github.com/chemmy/chemmy/services/kit/buildinfo"
)

func main() {
	i := buildinfo.Get()
	fmt.Println(i.Version, i.Revision)
}
