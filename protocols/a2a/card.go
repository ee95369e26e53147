package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// SchemaExtensionURI names the card extension that carries the agent's
// input and output JSON Schemas (params "inputSchema" and "outputSchema"),
// which the A2A card has no field for.
const SchemaExtensionURI = "https://github.com/breadai/bread/protocols/a2a/schemas/v1"

// The MIME types of the parts this endpoint reads and writes.
const (
	mimeText = "text/plain"
	mimeJSON = "application/json"
)

// Card is the public Agent Card of the plugin's agent, advertising rpcURL:
// the name, description and skills of the agent (one skill named after the
// agent when it has none), its schemas in the SchemaExtensionURI extension,
// streaming on, push notifications when configured. With
// Options.ExtendedCard the skills and schemas are the extended card's
// (ExtendedCard) and the public one has the skill naming the agent only.
func (p *Plugin) Card(rpcURL string) *a2a.AgentCard {
	c := p.card(rpcURL, !p.opts.ExtendedCard)
	c.SupportsAuthenticatedExtendedCard = p.opts.ExtendedCard
	return c
}

// ExtendedCard is the authenticated extended Agent Card: the public card
// with the agent's skills and its input and output schemas.
func (p *Plugin) ExtendedCard(rpcURL string) *a2a.AgentCard {
	c := p.card(rpcURL, true)
	c.SupportsAuthenticatedExtendedCard = true
	return c
}

// card is the Agent Card, with the agent's skills and schemas when full.
func (p *Plugin) card(rpcURL string, full bool) *a2a.AgentCard {
	ag := p.agent
	name := p.opts.Name
	if name == "" {
		name = ag.ID
	}
	desc := p.opts.Description
	if desc == "" {
		desc = describe(ag)
	}
	in, out := []string{mimeText}, []string{mimeText}
	if len(ag.InputSchema) > 0 && full {
		in = append(in, mimeJSON)
	}
	if (len(ag.OutputSchema) > 0 || ag.Output.Format == core.FormatJSON) && full {
		out = append(out, mimeJSON)
	}
	card := &a2a.AgentCard{
		Name:               name,
		Description:        desc,
		URL:                rpcURL,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            p.opts.Version,
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: p.push != nil},
		DefaultInputModes:  in,
		DefaultOutputModes: out,
	}
	if p.opts.GRPC {
		card.AdditionalInterfaces = []a2a.AgentInterface{
			{Transport: a2a.TransportProtocolJSONRPC, URL: rpcURL},
			{Transport: a2a.TransportProtocolGRPC, URL: grpcTarget(rpcURL)},
		}
	}
	params := map[string]any{}
	if len(ag.InputSchema) > 0 {
		params["inputSchema"] = json.RawMessage(ag.InputSchema)
	}
	if len(ag.OutputSchema) > 0 {
		params["outputSchema"] = json.RawMessage(ag.OutputSchema)
	}
	if len(params) > 0 && full {
		card.Capabilities.Extensions = []a2a.AgentExtension{{URI: SchemaExtensionURI, Description: "the agent's input and output JSON Schemas", Params: params}}
	}
	for _, s := range ag.Skills {
		if !full {
			break
		}
		sn := s.Name
		if sn == "" {
			sn = s.ID
		}
		sd := s.Description
		if sd == "" {
			sd = sn
		}
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: s.ID, Name: sn, Description: sd, Tags: []string{}})
	}
	if len(card.Skills) == 0 {
		card.Skills = []a2a.AgentSkill{{ID: ag.ID, Name: name, Description: desc, Tags: []string{}}}
	}
	return card
}

// describe is an agent's description, else the first non-empty line of its
// prompt, else a generic one.
func describe(ag *core.Agent) string {
	if d := strings.TrimSpace(ag.Description); d != "" {
		return d
	}
	for line := range strings.Lines(ag.Prompt) {
		if l := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); l != "" {
			return l
		}
	}
	return "Agent " + ag.ID
}

// advertised is the url the card of a request advertises: a url given as
// a path is completed with the scheme and host the request came with.
func (p *Plugin) advertised(r *http.Request) string {
	u := p.opts.URL
	if u[0] != '/' {
		return u
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + u
}

// serveCard serves GET CardPath.
func (p *Plugin) serveCard(w http.ResponseWriter, r *http.Request) {
	if p.closed.Load() || p.agent == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the A2A endpoint is not running", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if p.opts.SpecVersion == SpecV1 {
		_ = json.NewEncoder(w).Encode(v1Card(p.Card(p.advertised(r))))
		return
	}
	_ = json.NewEncoder(w).Encode(p.Card(p.advertised(r)))
}

// errUnauthenticated refuses the extended card to a caller without an
// identity: HTTP 401 on every binding.
var errUnauthenticated = fmt.Errorf("UNAUTHENTICATED: the extended agent card is for authenticated callers: %w", a2a.ErrServerError)

// extendedCard is the extended card for the caller of ctx, or why not.
func (h *handler) extendedCard(ctx context.Context) (*a2a.AgentCard, error) {
	switch {
	case !h.p.opts.ExtendedCard && h.p.opts.SpecVersion == SpecV1:
		// v1.0: a card that does not declare it makes the method unsupported.
		return nil, fmt.Errorf("this agent declares no extended agent card: %w", a2a.ErrUnsupportedOperation)
	case !h.p.opts.ExtendedCard:
		return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
	case core.IdentityFrom(ctx) == nil:
		return nil, errUnauthenticated
	}
	return h.p.ExtendedCard(cardURLFrom(ctx, h.p.opts.URL)), nil
}

// OnGetExtendedAgentCard implements agent/getAuthenticatedExtendedCard.
func (h *handler) OnGetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	return h.extendedCard(ctx)
}

// extendedCard is GetExtendedAgentCard in the v1.0 shape.
func (h v1) extendedCard(ctx context.Context) (any, error) {
	c, err := h.h.extendedCard(ctx)
	if err != nil {
		return nil, err
	}
	return v1Card(c), nil
}
