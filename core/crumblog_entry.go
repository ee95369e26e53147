package core

import "encoding/json"

// UnmarshalJSON reads an entry whose crumb is in its wire form, so stores and
// transports can decode entries without knowing crumb types.
func (e *CrumbLogEntry) UnmarshalJSON(b []byte) error {
	type plain CrumbLogEntry
	var w struct {
		plain
		Crumb json.RawMessage `json:"crumb"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = CrumbLogEntry(w.plain)
	if len(w.Crumb) == 0 || string(w.Crumb) == "null" {
		e.Crumb = nil
		return nil
	}
	c, err := DecodeCrumb(w.Crumb)
	if err != nil {
		return err
	}
	e.Crumb = c
	return nil
}
