package a2a

import (
	"encoding/json"
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

// Card is the Agent Card of the plugin's agent, advertising rpcURL: the
// name, description and skills of the agent (one skill named after the
// agent when it has none), its schemas in the SchemaExtensionURI extension,
// streaming on, push notifications off.
func (p *Plugin) Card(rpcURL string) *a2a.AgentCard {
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
	if len(ag.InputSchema) > 0 {
		in = append(in, mimeJSON)
	}
	if len(ag.OutputSchema) > 0 || ag.Output.Format == core.FormatJSON {
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
	params := map[string]any{}
	if len(ag.InputSchema) > 0 {
		params["inputSchema"] = json.RawMessage(ag.InputSchema)
	}
	if len(ag.OutputSchema) > 0 {
		params["outputSchema"] = json.RawMessage(ag.OutputSchema)
	}
	if len(params) > 0 {
		card.Capabilities.Extensions = []a2a.AgentExtension{{URI: SchemaExtensionURI, Description: "the agent's input and output JSON Schemas", Params: params}}
	}
	for _, s := range ag.Skills {
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

// serveCard serves GET CardPath. A URL given as a path is advertised on the
// scheme and host of this request.
func (p *Plugin) serveCard(w http.ResponseWriter, r *http.Request) {
	if p.closed.Load() || p.agent == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the A2A endpoint is not running", http.StatusServiceUnavailable)
		return
	}
	rpcURL := p.opts.URL
	if rpcURL[0] == '/' {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		rpcURL = scheme + "://" + r.Host + rpcURL
	}
	w.Header().Set("Content-Type", "application/json")
	if p.opts.SpecVersion == SpecV1 {
		_ = json.NewEncoder(w).Encode(v1Card(p.Card(rpcURL)))
		return
	}
	_ = json.NewEncoder(w).Encode(p.Card(rpcURL))
}
