// Package cli is the bread command line: serve a project (dev, start),
// check it (build), talk to an agent (chat, invoke), run its evals, manage
// sessions and providers, and scaffold a new project (init).
//
// cmd/bread is a one-line main over Main. A Go program that needs compiled
// tools, agents, hooks, plugins, custom stores or output formats calls Main
// with Options and gets the same commands:
//
//	func main() {
//		os.Exit(cli.Main(cli.Options{
//			Tools:   map[string][]core.Tool{"writer": {search}},
//			Plugins: []core.BreadPlugin{metrics{}},
//		}))
//	}
//
// The CLI is the one place that imports every adapter: it maps the names in
// bread.yaml (store: sqlite, bus: redis, listeners: [stdout], providers:
// [anthropic], ...) to their constructors. An unknown name lists the known
// ones.
package cli
