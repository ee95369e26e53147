// Command bread serves, checks, runs and evaluates bread projects. See the
// cli package for the commands and for embedding them in a Go program.
package main

import (
	"os"

	"github.com/breadai/bread/cli"
)

func main() { os.Exit(cli.Main(cli.Options{})) }
