package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is the bread version from the build info: the main module's
// version when built as a module dependency (go install ...@v1.2.3), else
// "devel" plus the VCS revision (and "-dirty") when the build recorded it.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " " + rev
		if modified == "true" {
			v += "-dirty"
		}
	}
	return v
}

// cmdVersion prints the version.
func cmdVersion(ctx context.Context, a *app, args []string) int {
	if len(args) > 0 {
		return a.usageError("version", fmt.Errorf("version takes no arguments"))
	}
	fmt.Fprintln(a.stdout, "bread", version())
	return ExitOK
}
