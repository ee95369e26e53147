package core

// KnowledgeConfig turns on an agent's knowledge graph: the core_kg_store,
// core_kg_query and core_kg_forget tools, and with AutoInject the session's
// recent facts in the system prompt, bounded by MaxTokens (default 2000,
// counted as 4 bytes a token).
type KnowledgeConfig struct {
	AutoInject bool `json:"autoInject,omitempty"`
	MaxTokens  int  `json:"maxTokens,omitempty"`
}
