// Command releasetool prepares the modules of the bread workspace for
// publication, the way go-cloud's releasehelper does. In development every
// go.mod requires its siblings at v0.0.0 and replaces them with their
// directories; a published go.mod must require them at the released version
// and replace nothing.
//
// The workspace is the modules of go.work's use directives; siblings are the
// modules under -prefix (github.com/breadai/bread).
//
//	releasetool [-C root] [-prefix path] command [arguments]
//
// Commands:
//
//	list                  each module: its directory (. for the root) and path
//	tags VERSION          each module's tag for VERSION: core/v0.2.0, ...
//	rewrite VERSION       in every go.mod, set sibling requires to VERSION and
//	                      drop sibling replaces (other replaces stay)
//	verify VERSION        fail if a go.mod still replaces a sibling or
//	                      requires one at another version than VERSION
//	modproxy DIR VERSION  write every module at VERSION, rewritten, into DIR as
//	                      a GOPROXY file tree (GOPROXY=file://DIR): its
//	                      git-tracked files as they are in the work tree
//	verifyproxy DIR VERSION
//	                      fail unless DIR publishes every module at VERSION
//	                      with a go.mod that verify would pass
//	cleancache VERSION    remove VERSION of every module from the module cache
//	                      (after a check against a modproxy tree)
//	imports DIR...        the modules providing the sibling packages that the
//	                      Go files under DIR import, one per line
//	replaces [-check]     in every go.mod, require (at v0.0.0) each sibling
//	                      its Go files import, and write exactly one replace
//	                      per sibling in its module graph (what go mod tidy
//	                      needs outside the workspace), with a relative path;
//	                      -check writes nothing and fails if a go.mod differs
//	tidyorder             each module's directory, every module after the
//	                      siblings it needs: the order for go mod tidy
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const usage = `usage: releasetool [-C root] [-prefix path] command [arguments]

commands:
  list                  print each module: directory (. for the root) and path
  tags VERSION          print each module's tag for VERSION
  rewrite VERSION       set sibling requires to VERSION, drop sibling replaces, in every go.mod
  verify VERSION        fail if a go.mod still replaces a sibling or requires one not at VERSION
  modproxy DIR VERSION  write every module at VERSION, rewritten, into DIR as a GOPROXY file tree
  verifyproxy DIR VERSION
                        fail unless DIR publishes every module at VERSION with a go.mod verify passes
  cleancache VERSION    remove VERSION of every module from the module cache (go env GOMODCACHE)
  imports DIR...        print the modules providing the sibling packages imported under DIR
  replaces [-check]     write each go.mod's sibling requires and replaces (-check: fail if one differs)
  tidyorder             print each module's directory, after those of the siblings it needs

flags:
`

func main() {
	log := func(err error) {
		fmt.Fprintln(os.Stderr, "releasetool:", err)
		os.Exit(1)
	}
	fl := flag.NewFlagSet("releasetool", flag.ContinueOnError)
	rootFlag := fl.String("C", "", "workspace root holding go.work (default: the closest one above the working directory)")
	prefix := fl.String("prefix", "github.com/breadai/bread", "module path prefix of sibling modules")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	args := fl.Args()
	if len(args) == 0 {
		fl.Usage()
		os.Exit(2)
	}
	nargs := map[string]int{"list": 0, "tags": 1, "rewrite": 1, "verify": 1, "modproxy": 2, "verifyproxy": 2, "cleancache": 1, "imports": -1, "replaces": 0, "tidyorder": 0}
	want, known := nargs[args[0]]
	if args[0] == "replaces" && len(args) == 2 && args[1] == "-check" {
		want = 1
	}
	if !known || (want >= 0 && len(args)-1 != want) || (want < 0 && len(args) < 2) {
		fl.Usage()
		os.Exit(2)
	}
	root, err := findRoot(*rootFlag)
	if err != nil {
		log(err)
	}
	ws, err := LoadWorkspace(root, *prefix)
	if err != nil {
		log(err)
	}
	if err := run(ws, args[0], args[1:]); err != nil {
		log(err)
	}
}

func run(ws *Workspace, cmd string, args []string) error {
	switch cmd {
	case "list":
		for _, m := range ws.Modules {
			fmt.Printf("%s\t%s\n", dirOrDot(m.Dir), m.Path)
		}
	case "tags":
		if err := ws.checkVersion(args[0]); err != nil {
			return err
		}
		for _, m := range ws.Modules {
			if why := ws.VCSPathMismatch(m); why != "" {
				fmt.Fprintln(os.Stderr, "warning:", why)
			}
			fmt.Println(m.TagPrefix() + args[0])
		}
	case "rewrite":
		return ws.RewriteAll(args[0])
	case "verify":
		if err := ws.checkVersion(args[0]); err != nil {
			return err
		}
		var all []string
		for _, m := range ws.Modules {
			probs, err := ws.Problems(m, args[0])
			if err != nil {
				return err
			}
			all = append(all, probs...)
		}
		if len(all) > 0 {
			return fmt.Errorf("not publishable at %s:\n  %s", args[0], strings.Join(all, "\n  "))
		}
	case "modproxy":
		dir, err := filepath.Abs(args[0])
		if err != nil {
			return err
		}
		return ws.WriteProxy(dir, args[1])
	case "verifyproxy":
		return ws.VerifyProxy(args[0], args[1])
	case "cleancache":
		if err := ws.checkVersion(args[0]); err != nil {
			return err
		}
		return ws.CleanCache("", args[0])
	case "imports":
		mods, err := ws.ImportedModules(args...)
		if err != nil {
			return err
		}
		for _, m := range mods {
			fmt.Println(m)
		}
	case "replaces":
		if len(args) == 0 {
			return ws.WriteSiblings()
		}
		drift, err := ws.SiblingDrift()
		if err != nil {
			return err
		}
		if len(drift) > 0 {
			return fmt.Errorf("sibling requires or replaces are not what `releasetool replaces` writes:\n  %s\nrun `make replaces` (then `make tidy`) to fix them", strings.Join(drift, "\n  "))
		}
	case "tidyorder":
		order, err := ws.TidyOrder()
		if err != nil {
			return err
		}
		for _, m := range order {
			fmt.Println(dirOrDot(m.Dir))
		}
	}
	return nil
}
