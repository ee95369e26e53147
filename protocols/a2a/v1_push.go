package a2a

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"
)

// v1PushConfig is a v1.0 TaskPushNotificationConfig: the config's fields
// flat beside its task id. The authentication has one scheme in v1.0;
// v0.3's list (schemes) is read too.
type v1PushConfig struct {
	ID             string         `json:"id,omitempty"`
	TaskID         string         `json:"taskId"`
	URL            string         `json:"url"`
	Token          string         `json:"token,omitempty"`
	Authentication *v1PushAuth    `json:"authentication,omitempty"`
	Tenant         string         `json:"tenant,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

type v1PushAuth struct {
	Scheme      string   `json:"scheme"`
	Schemes     []string `json:"schemes,omitempty"`
	Credentials string   `json:"credentials,omitempty"`
}

// config is c in a2a-go's shape.
func (c *v1PushConfig) config() a2a.PushConfig {
	out := a2a.PushConfig{ID: c.ID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		schemes := a.Schemes
		if a.Scheme != "" {
			schemes = append([]string{a.Scheme}, schemes...)
		}
		out.Auth = &a2a.PushAuthInfo{Schemes: schemes, Credentials: a.Credentials}
	}
	return out
}

// v1Push is a2a-go's task config in the v1.0 shape.
func v1Push(c *a2a.TaskPushConfig) map[string]any {
	out := map[string]any{"id": c.Config.ID, "taskId": string(c.TaskID), "url": c.Config.URL}
	if c.Config.Token != "" {
		out["token"] = c.Config.Token
	}
	if a := c.Config.Auth; a != nil && len(a.Schemes) > 0 {
		auth := map[string]any{"scheme": a.Schemes[0]}
		if a.Credentials != "" {
			auth["credentials"] = a.Credentials
		}
		out["authentication"] = auth
	}
	return out
}

// pushCall runs the v1.0 push notification config methods through the
// handler's v0.3 ones, so both versions keep one set of configs per task.
func (h v1) pushCall(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if h.h.p.push == nil {
		return nil, a2a.ErrPushNotificationNotSupported
	}
	var p struct {
		v1PushConfig
		PageSize  *int   `json:"pageSize"`
		PageToken string `json:"pageToken"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		return nil, fmt.Errorf("params: %v: %w", err, a2a.ErrInvalidParams)
	}
	task := a2a.TaskID(p.TaskID)
	switch method {
	case "CreateTaskPushNotificationConfig":
		c, err := h.h.OnSetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: task, Config: p.config()})
		if err != nil {
			return nil, err
		}
		return v1Push(c), nil
	case "GetTaskPushNotificationConfig":
		if p.ID == "" {
			return nil, invalidParams("id is required: the config to read")
		}
		c, err := h.h.OnGetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task, ConfigID: p.ID})
		if err != nil {
			return nil, err
		}
		return v1Push(c), nil
	case "ListTaskPushNotificationConfigs":
		if p.PageToken != "" {
			// A task keeps at most maxPushConfigs: one page holds them all.
			return nil, invalidParams("pageToken is not a token this server issued")
		}
		cs, err := h.h.OnListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task})
		if err != nil {
			return nil, err
		}
		out := make([]any, len(cs))
		for i, c := range cs {
			out[i] = v1Push(c)
		}
		return map[string]any{"configs": out, "nextPageToken": ""}, nil
	default: // DeleteTaskPushNotificationConfig
		if p.ID == "" {
			return nil, invalidParams("id is required: the config to delete")
		}
		if err := h.h.OnDeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task, ConfigID: p.ID}); err != nil {
			return nil, err
		}
		return map[string]any{}, nil
	}
}
