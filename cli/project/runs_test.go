package project_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
)

func TestRunsLease(t *testing.T) {
	p, err := project.Load(writeProject(t, map[string]string{"bread.yaml": "store: memory\nruns: {lease: 2s}\n"}), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.Config.RunLease != 2*time.Second {
		t.Errorf("lease %v", p.Config.RunLease)
	}
	for _, tt := range []struct{ yaml, loc string }{
		{"store: memory\nruns:\n  lease: soon\n", "bread.yaml:3"},
		{"store: memory\nruns:\n  lease: 10ms\n", "bread.yaml:3"},
		{"store: memory\nruns:\n  leese: 1s\n", "bread.yaml:3"},
	} {
		_, err := project.Load(writeProject(t, map[string]string{"bread.yaml": tt.yaml}), env(nil))
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.HasPrefix(err.Error(), tt.loc) {
			t.Errorf("%q: %v, want INVALID_CONFIG at %s", tt.yaml, err, tt.loc)
		}
	}
}

func TestMisspelledPermissionNamesFileAndLine(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"bread.yaml":                    "store: memory\n",
		"agents/pub/agent.yaml":         "model: {provider: p, model: m}\npermissions:\n  ask: [\"tool:publsh\"]\n",
		"agents/pub/tools/publish.yaml": "type: command\ncommand: [\"true\"]\n",
		"agents/ok/agent.yaml":          "model: {provider: p, model: m}\npermissions:\n  deny: [\"tool:*\", \"plugin:mcp_client/x\"]\n",
		"agents/ok/tools/x.yaml":        "type: command\ncommand: [\"true\"]\n",
	})
	_, err := project.Load(dir, env(nil))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeInvalidPermission || !strings.HasPrefix(err.Error(), "agents/pub/agent.yaml:3") || !strings.Contains(err.Error(), "publish") {
		t.Fatalf("got %v, want INVALID_PERMISSION at agents/pub/agent.yaml:3 naming publish", err)
	}
}

func TestServerCORS(t *testing.T) {
	p, err := project.Load(writeProject(t, map[string]string{"bread.yaml": "store: memory\nserver:\n  cors: {origins: [\"https://app.example\", \"*\"], maxAge: 5m}\n"}), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Config.Server.CORSOrigins) != 2 || p.Config.Server.CORSMaxAge != 5*time.Minute || p.Config.Server.AllowCrossOrigin {
		t.Errorf("cors %v %v, allowCrossOrigin %v", p.Config.Server.CORSOrigins, p.Config.Server.CORSMaxAge, p.Config.Server.AllowCrossOrigin)
	}
	p, err = project.Load(writeProject(t, map[string]string{"bread.yaml": "store: memory\nserver: {allowCrossOrigin: true, maxConnections: 100}\n"}), env(nil))
	if err != nil || !p.Config.Server.AllowCrossOrigin || p.Config.Server.MaxConnections != 100 {
		t.Fatalf("allowCrossOrigin: true, maxConnections: 100: %v", err)
	}
	for _, tt := range []struct{ yaml, loc string }{
		{"store: memory\nserver:\n  cors:\n    origins: [\"https://app.example/path\"]\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  cors:\n    origins: [\"app.example\"]\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  cors:\n    origins: [\"https://app.example#top\"]\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  allowCrossOrigin: maybe\n", "bread.yaml:3"},
		{"store: memory\nserver:\n  maxConnections: -1\n", "bread.yaml:3"},
		{"store: memory\nserver:\n  cors:\n    maxAge: soon\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  cors:\n    origin: [\"https://a\"]\n", "bread.yaml:4"},
	} {
		_, err := project.Load(writeProject(t, map[string]string{"bread.yaml": tt.yaml}), env(nil))
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.HasPrefix(err.Error(), tt.loc) {
			t.Errorf("%q: %v, want INVALID_CONFIG at %s", tt.yaml, err, tt.loc)
		}
	}
}

func TestWebhooksConfig(t *testing.T) {
	p, err := project.Load(writeProject(t, map[string]string{"bread.yaml": "store: memory\nwebhooks: {secret: ${HOOK_SECRET}, allowHosts: [hooks.example.com], maxAttempts: 3, backoff: 2s}\n"}),
		env(map[string]string{"HOOK_SECRET": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	w := p.Config.Webhooks
	if w.Secret != "s3cret" || len(w.AllowHosts) != 1 || w.MaxAttempts != 3 || w.Backoff != 2*time.Second || w.AllowPrivateNetworks {
		t.Errorf("webhooks %+v", w)
	}
	for _, tt := range []struct{ yaml, loc string }{
		{"store: memory\nwebhooks:\n  backoff: soon\n", "bread.yaml:3"},
		{"store: memory\nwebhooks:\n  maxAttempts: -1\n", "bread.yaml:3"},
		{"store: memory\nwebhooks:\n  secrett: x\n", "bread.yaml:3"},
		{"store: memory\nwebhooks:\n  secret: x\n  secretCredential: Y\n", "bread.yaml:4"},
	} {
		_, err := project.Load(writeProject(t, map[string]string{"bread.yaml": tt.yaml}), env(nil))
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.HasPrefix(err.Error(), tt.loc) {
			t.Errorf("%q: %v, want INVALID_CONFIG at %s", tt.yaml, err, tt.loc)
		}
	}
}

func TestWorkersSchedulesAndOnLost(t *testing.T) {
	p, err := project.Load(writeProject(t, map[string]string{
		"bread.yaml": `store: memory
workers: {concurrency: 4, queue: reports, pollInterval: 200ms, rescueAfter: 2m}
schedules:
  - {name: nightly, cron: "0 3 * * *", timeZone: Europe/Rome, agent: a, input: {topic: sales}, webhook: "https://hooks.example.com/x"}
  - {name: often, every: 30s, agent: a, session: log}
`,
		"agents/a/agent.yaml": "model: {provider: p, model: m}\nonLost: {action: retry, maxAttempts: 4}\n",
		"agents/b/agent.yaml": "model: {provider: p, model: m}\nonLost: fail\n",
	}), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	w := p.Config.Workers
	if w == nil || w.Concurrency != 4 || w.Queue != "reports" || w.PollInterval != 200*time.Millisecond || w.RescueAfter != 2*time.Minute {
		t.Errorf("workers %+v", w)
	}
	s := p.Config.Schedules
	if len(s) != 2 || s[0].Name != "nightly" || s[0].Cron != "0 3 * * *" || s[0].TimeZone != "Europe/Rome" || s[0].Webhook == "" ||
		s[1].Every != 30*time.Second || s[1].Session != "log" {
		t.Errorf("schedules %+v", s)
	}
	if in, _ := s[0].Input.(map[string]any); in["topic"] != "sales" {
		t.Errorf("schedule input %#v", s[0].Input)
	}
	for _, a := range p.Agents {
		want := map[string]core.LostPolicy{"a": {Action: core.LostRetry, MaxAttempts: 4}, "b": {Action: core.LostFail}}[a.ID]
		if a.OnLost != want {
			t.Errorf("agent %s onLost %+v, want %+v", a.ID, a.OnLost, want)
		}
	}
	if p, err := project.Load(writeProject(t, map[string]string{"bread.yaml": "store: memory\n"}), env(nil)); err != nil || p.Config.Workers != nil {
		t.Errorf("no workers section: %+v, %v", p.Config.Workers, err)
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		loc   string
	}{
		{"typo in workers", map[string]string{"bread.yaml": "store: memory\nworkers:\n  concurency: 3\n"}, "bread.yaml:3"},
		{"negative concurrency", map[string]string{"bread.yaml": "store: memory\nworkers:\n  concurrency: -1\n"}, "bread.yaml:3"},
		{"bad poll interval", map[string]string{"bread.yaml": "store: memory\nworkers:\n  pollInterval: often\n"}, "bread.yaml:3"},
		{"cron and every", map[string]string{"bread.yaml": "store: memory\nschedules:\n  - {name: x, cron: \"* * * * *\", every: 1m, agent: a}\n"}, "bread.yaml:3"},
		{"neither cron nor every", map[string]string{"bread.yaml": "store: memory\nschedules:\n  - {name: x, agent: a}\n"}, "bread.yaml:3"},
		{"sub-second every", map[string]string{"bread.yaml": "store: memory\nschedules:\n  - {name: x, every: 10ms, agent: a}\n"}, "bread.yaml:3"},
		{"no agent", map[string]string{"bread.yaml": "store: memory\nschedules:\n  - {name: x, every: 1m}\n"}, "bread.yaml:3"},
		{"typo in a schedule", map[string]string{"bread.yaml": "store: memory\nschedules:\n  - {name: x, every: 1m, agnet: a}\n"}, "bread.yaml:3"},
		{"onLost typo", map[string]string{"bread.yaml": "store: memory\n", "agents/a/agent.yaml": "model: {provider: p, model: m}\nonLost: retyr\n"}, "agents/a/agent.yaml:2"},
		{"onLost attempts", map[string]string{"bread.yaml": "store: memory\n", "agents/a/agent.yaml": "model: {provider: p, model: m}\nonLost: {action: retry, maxAttempts: 0}\n"}, "agents/a/agent.yaml:2"},
		{"onLost field typo", map[string]string{"bread.yaml": "store: memory\n", "agents/a/agent.yaml": "model: {provider: p, model: m}\nonLost: {action: retry, maxAttempt: 2}\n"}, "agents/a/agent.yaml:2"},
	} {
		_, err := project.Load(writeProject(t, tt.files), env(nil))
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.HasPrefix(err.Error(), tt.loc) {
			t.Errorf("%s: %v, want INVALID_CONFIG at %s", tt.name, err, tt.loc)
		}
	}
}
