package decisions

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// scriptedModel answers each call with the next scripted text (or error)
// and records the requests.
type scriptedModel struct {
	answers []string
	err     error
	reqs    []core.ModelRequest
}

func (m *scriptedModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	m.reqs = append(m.reqs, req)
	return func(yield func(core.ModelEvent, error) bool) {
		if m.err != nil {
			yield(core.ModelEvent{}, m.err)
			return
		}
		text := m.answers[0]
		m.answers = m.answers[1:]
		for _, chunk := range []string{text[:len(text)/2], text[len(text)/2:]} {
			if !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: chunk}, nil) {
				return
			}
		}
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: core.FinishStop}, nil)
	}
}

var triage = Question{Prompt: "Which team handles this ticket?", Options: []string{"billing", "tech", "sales"}, Input: map[string]string{"subject": "Refund please"}}

func code(err error) string {
	var be *core.BreadError
	if errors.As(err, &be) {
		return be.Code
	}
	return ""
}

func TestModelDeciderConstrainsTheModelToTheOptions(t *testing.T) {
	m := &scriptedModel{answers: []string{`{"choice":"billing","confidence":0.93,"reason":"a refund"}`}}
	dec, err := NewModelDecider(m, ModelOptions{}).Decide(context.Background(), triage)
	if err != nil {
		t.Fatal(err)
	}
	if dec != (Decision{Choice: "billing", Confidence: 0.93, Reason: "a refund"}) {
		t.Errorf("decision %+v", dec)
	}
	req := m.reqs[0]
	var schema struct {
		Properties struct {
			Choice struct {
				Enum []string `json:"enum"`
			} `json:"choice"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Output.Schema, &schema); err != nil || strings.Join(schema.Properties.Choice.Enum, ",") != "billing,tech,sales" {
		t.Errorf("schema %s", req.Output.Schema)
	}
	if *req.Settings.Temperature != 0 {
		t.Errorf("temperature %v", *req.Settings.Temperature)
	}
	if u := req.Messages[0].Parts[0].Text; !strings.Contains(u, "Refund please") || !strings.Contains(u, "- tech") {
		t.Errorf("prompt %q", u)
	}
}

func TestModelDeciderRetriesOnceThenFails(t *testing.T) {
	m := &scriptedModel{answers: []string{`{"choice":"legal"}`, "tech"}}
	dec, err := NewModelDecider(m, ModelOptions{}).Decide(context.Background(), triage)
	if err != nil || dec.Choice != "tech" || len(m.reqs) != 2 {
		t.Fatalf("decision %+v, err %v, calls %d", dec, err, len(m.reqs))
	}
	if len(m.reqs[1].Messages) != 3 {
		t.Errorf("the retry must show the model its invalid answer: %+v", m.reqs[1].Messages)
	}

	m = &scriptedModel{answers: []string{`{"choice":"legal"}`, "no idea"}}
	_, err = NewModelDecider(m, ModelOptions{}).Decide(context.Background(), triage)
	if code(err) != CodeDecisionInvalid || len(m.reqs) != 2 {
		t.Fatalf("err %v after %d calls", err, len(m.reqs))
	}

	m = &scriptedModel{err: &core.BreadError{Code: core.CodeRateLimited}}
	if _, err := NewModelDecider(m, ModelOptions{}).Decide(context.Background(), triage); code(err) != core.CodeRateLimited {
		t.Fatalf("model errors pass through: %v", err)
	}
}

func TestQuestionValidation(t *testing.T) {
	m := &scriptedModel{}
	for _, q := range []Question{{Prompt: "x"}, {Options: []string{"a", "a"}}, {Options: []string{"a", " "}}} {
		if _, err := NewModelDecider(m, ModelOptions{}).Decide(context.Background(), q); code(err) != core.CodeValidationError {
			t.Errorf("%+v: %v", q, err)
		}
	}
	if len(m.reqs) != 0 {
		t.Error("an invalid question reached the model")
	}
}

func TestRegistry(t *testing.T) {
	reg := Registry{
		"yes-no": DeciderFunc(func(context.Context, Question) (Decision, error) { return Decision{Choice: "yes"}, nil }),
		"rogue":  DeciderFunc(func(context.Context, Question) (Decision, error) { return Decision{Choice: "maybe"}, nil }),
	}
	yn := Question{Prompt: "Ship it?", Options: []string{"yes", "no"}}
	if d, err := reg.Decide(context.Background(), "yes-no", yn); err != nil || d.Choice != "yes" {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := reg.Decide(context.Background(), "rogue", yn); code(err) != CodeDecisionInvalid {
		t.Errorf("rogue decider: %v", err)
	}
	_, err := reg.Decide(context.Background(), "nope", yn)
	if code(err) != CodeDeciderNotFound || !strings.Contains(err.Error(), "rogue, yes-no") {
		t.Errorf("unknown decider: %v", err)
	}
}

func TestHTTPDecider(t *testing.T) {
	// The handler of a timed-out request may still run when the next one
	// arrives: each decodes into its own map, and the last kept is shared
	// under a lock.
	var mu sync.Mutex
	var got map[string]any
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = body
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(401)
			return
		}
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"choice":"tech","confidence":0.7}`))
		case "/outside":
			_, _ = w.Write([]byte(`{"choice":"legal","confidence":0.7}`))
		case "/garbage":
			_, _ = w.Write([]byte(`<html>`))
		case "/busy":
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(429)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			w.WriteHeader(500)
		}
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	opts := HTTPOptions{Client: srv.Client(), Headers: map[string]string{"Authorization": "Bearer k"}, Timeout: 200 * time.Millisecond}

	dec, err := NewHTTPDecider(srv.URL+"/ok", opts).Decide(context.Background(), triage)
	if err != nil || dec.Choice != "tech" || dec.Confidence != 0.7 {
		t.Fatalf("%+v %v", dec, err)
	}
	mu.Lock()
	body := got
	mu.Unlock()
	if body["prompt"] != triage.Prompt || len(body["options"].([]any)) != 3 || body["input"].(map[string]any)["subject"] != "Refund please" {
		t.Errorf("request body %v", body)
	}
	for path, want := range map[string]string{
		"/outside": CodeDecisionInvalid, "/garbage": CodeDecisionInvalid, "/busy": core.CodeRateLimited,
		"/fail": core.CodeProviderError, "/slow": CodeDecisionTimeout,
	} {
		if _, err := NewHTTPDecider(srv.URL+path, opts).Decide(context.Background(), triage); code(err) != want {
			t.Errorf("%s: %v, want %s", path, err, want)
		}
	}
	noAuth := opts
	noAuth.Headers = nil
	if _, err := NewHTTPDecider(srv.URL+"/ok", noAuth).Decide(context.Background(), triage); code(err) != core.CodeProviderAuth {
		t.Errorf("401: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewHTTPDecider(srv.URL+"/slow", opts).Decide(ctx, triage); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
