package project_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server/project"
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
	if len(p.Config.Server.CORSOrigins) != 2 || p.Config.Server.CORSMaxAge != 5*time.Minute {
		t.Errorf("cors %v %v", p.Config.Server.CORSOrigins, p.Config.Server.CORSMaxAge)
	}
	for _, tt := range []struct{ yaml, loc string }{
		{"store: memory\nserver:\n  cors:\n    origins: [\"https://app.example/path\"]\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  cors:\n    origins: [\"app.example\"]\n", "bread.yaml:4"},
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
	} {
		_, err := project.Load(writeProject(t, map[string]string{"bread.yaml": tt.yaml}), env(nil))
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.HasPrefix(err.Error(), tt.loc) {
			t.Errorf("%q: %v, want INVALID_CONFIG at %s", tt.yaml, err, tt.loc)
		}
	}
}
