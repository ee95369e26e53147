package a2ui

// ComponentType says which component a Spec renders.
type ComponentType string

// The component types.
const (
	Text     ComponentType = "text"
	Markdown ComponentType = "markdown"
	Card     ComponentType = "card"
	Form     ComponentType = "form"
	Progress ComponentType = "progress"
	Error    ComponentType = "error"
	File     ComponentType = "file"
)

// Spec is one A2UI component. Progress is a pointer so that 0 (started) is
// written and "no progress" is left out.
type Spec struct {
	Type     ComponentType  `json:"type"`
	Content  string         `json:"content,omitempty"`
	Fields   []Field        `json:"fields,omitempty"`
	Progress *float64       `json:"progress,omitempty"`
	Message  string         `json:"message,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Field is one input of a Form.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Label    string `json:"label"`
	Required bool   `json:"required,omitempty"`
}
