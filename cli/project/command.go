package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// commandTool runs a program per call: the JSON arguments on stdin, the
// result on stdout (JSON, or else the trimmed text). A non-zero exit, any
// output on stderr, or the timeout is a TOOL_ERROR carrying stderr.
//
// The program sees a small environment, not the server's: PATH, HOME, LANG,
// TMPDIR, the tool's `env:`, and the credentials it declares (resolved
// through the run's credential provider, so Vault works too).
type commandTool struct {
	argv        []string
	dir         string
	env         map[string]string
	timeout     time.Duration
	credentials []string
}

const maxToolOutput = 4 << 20

func (c commandTool) execute(ctx context.Context, args json.RawMessage, tc core.ToolContext) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Dir = c.dir
	cmd.Stdin = bytes.NewReader(args)
	env := []string{}
	for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range c.env {
		env = append(env, k+"="+v)
	}
	for _, name := range c.credentials {
		v, err := tc.Credentials.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		env = append(env, name+"="+v)
	}
	env = append(env, "BREAD_AGENT_ID="+tc.AgentID, "BREAD_RUN_ID="+tc.RunID, "BREAD_SESSION_ID="+tc.SessionID)
	cmd.Env = env
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxToolOutput, 64<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	name := c.argv[0]
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, core.Errorf(core.CodeToolError, "command %s timed out after %s", name, c.timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, &core.BreadError{Code: core.CodeToolError, Message: "command " + name + " exited with " + exit.ProcessState.String() + stderrSuffix(stderr.String()), Context: map[string]any{"exitCode": exit.ExitCode()}}
		}
		return nil, core.Errorf(core.CodeToolError, "command %s could not run: %v", name, err)
	case stderr.Len() > 0:
		return nil, &core.BreadError{Code: core.CodeToolError, Message: "command " + name + " wrote to stderr" + stderrSuffix(stderr.String())}
	case stdout.truncated:
		return nil, core.Errorf(core.CodeToolError, "command %s wrote more than %d bytes", name, maxToolOutput)
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if json.Valid(out) && len(out) > 0 {
		return json.RawMessage(out), nil
	}
	return string(out), nil
}

func stderrSuffix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + s
}

// limitedBuffer keeps at most max bytes and notes what it dropped.
type limitedBuffer struct {
	bytes.Buffer
	max       int
	truncated bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.truncated = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
