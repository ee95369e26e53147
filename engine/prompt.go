package engine

import (
	"context"
	"strings"

	"github.com/breadai/bread/core"
)

// systemPrompt assembles a run's system prompt: the agent's prompt, the
// knowledge context (when auto-injected), the active skills, the summary of
// loadable skills, and the supervisor's roster and loop sections when those
// features are on.
func (r *run) systemPrompt(ctx context.Context) (string, error) {
	a := r.agent
	sections := []string{strings.TrimSpace(a.Prompt)}
	if kc := a.Knowledge; kc != nil && kc.AutoInject {
		if r.in.store.Has(core.StoreKnowledge) {
			text, err := knowledgeContext(ctx, r.in.store, a.ID, r.sessionID, kc.MaxTokens)
			if err != nil {
				return "", err
			}
			sections = append(sections, text)
		}
	}
	for _, s := range r.activeSkills() {
		sections = append(sections, skillPrompt(s))
	}
	if len(a.Skills) > 0 {
		sections = append(sections, skillsSummary(a.Skills))
	}
	if a.Supervisor != nil {
		sections = append(sections, supervisorSummary(a.Supervisor))
	}
	if a.Loop != nil {
		sections = append(sections, loopSummary(a.Loop))
	}
	client, err := r.clientPrompt(ctx)
	if err != nil {
		return "", err
	}
	sections = append(sections, client)
	var b strings.Builder
	for _, s := range sections {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	return b.String(), nil
}
