package llm

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"github.com/breadai/bread/core"
	"google.golang.org/genai"
)

// GoogleOptions configure the Gemini API adapter (provider "google"). The
// key comes from GOOGLE_GENERATIVE_AI_API_KEY, then GEMINI_API_KEY, then
// GOOGLE_API_KEY; the endpoint from GOOGLE_GENERATIVE_AI_BASE_URL.
type GoogleOptions struct {
	ClientOptions
	// APIVersion overrides the SDK's default (v1beta).
	APIVersion string
}

// VertexOptions configure the Vertex AI adapter (provider
// "google-vertex"): the same Gemini models and wire format, served per
// Google Cloud project and region with OAuth credentials.
type VertexOptions struct {
	ClientOptions
	// Project and Location default to GOOGLE_VERTEX_PROJECT (then
	// GOOGLE_CLOUD_PROJECT) and GOOGLE_VERTEX_LOCATION (then
	// GOOGLE_CLOUD_LOCATION, then us-central1).
	Project  string
	Location string
	// TokenProvider supplies OAuth access tokens. Nil uses Application
	// Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, the
	// metadata server). Tests inject a static one.
	TokenProvider auth.TokenProvider
	// APIKey (or GOOGLE_VERTEX_API_KEY) selects Vertex express mode instead
	// of OAuth.
	APIVersion string
}

// NewGoogle returns the factory for the Gemini API.
func NewGoogle(opts GoogleOptions) core.ProviderFactory {
	return perModel(func(modelID string) (core.LanguageModel, error) {
		const name = "google"
		if strings.TrimSpace(modelID) == "" {
			return nil, configError(core.CodeInvalidConfig, name, "a model id is required")
		}
		key := opts.APIKey
		if key == "" {
			key = opts.Getenv.first("GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
		}
		if key == "" {
			return nil, configError(core.CodeProviderAuth, name, "no API key: set GOOGLE_GENERATIVE_AI_API_KEY (or GEMINI_API_KEY) or the APIKey option")
		}
		base := opts.BaseURL
		if base == "" {
			base = opts.Getenv.first("GOOGLE_GENERATIVE_AI_BASE_URL")
		}
		cc := &genai.ClientConfig{
			APIKey:      key,
			Backend:     genai.BackendGeminiAPI,
			HTTPClient:  opts.httpClient(),
			HTTPOptions: genaiHTTPOptions(base, opts.APIVersion, opts.Headers),
		}
		return newGeminiModel(name, modelID, cc, key)
	})
}

// NewVertex returns the factory for Gemini models on Vertex AI.
func NewVertex(opts VertexOptions) core.ProviderFactory {
	return perModel(func(modelID string) (core.LanguageModel, error) {
		const name = "google-vertex"
		if strings.TrimSpace(modelID) == "" {
			return nil, configError(core.CodeInvalidConfig, name, "a model id is required")
		}
		base := opts.BaseURL
		if base == "" {
			base = opts.Getenv.first("GOOGLE_VERTEX_BASE_URL")
		}
		key := opts.APIKey
		if key == "" {
			key = opts.Getenv.first("GOOGLE_VERTEX_API_KEY")
		}
		cc := &genai.ClientConfig{Backend: genai.BackendVertexAI, HTTPOptions: genaiHTTPOptions(base, opts.APIVersion, opts.Headers)}
		if key != "" {
			cc.APIKey = key
			cc.HTTPClient = opts.httpClient()
			return newGeminiModel(name, modelID, cc, key)
		}
		cc.Project = opts.Project
		if cc.Project == "" {
			cc.Project = opts.Getenv.first("GOOGLE_VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT")
		}
		cc.Location = opts.Location
		if cc.Location == "" {
			cc.Location = opts.Getenv.first("GOOGLE_VERTEX_LOCATION", "GOOGLE_CLOUD_LOCATION")
		}
		if cc.Location == "" {
			cc.Location = "us-central1"
		}
		if cc.Project == "" {
			return nil, configError(core.CodeInvalidConfig, name, "no project: set GOOGLE_VERTEX_PROJECT or the Project option")
		}
		tp := opts.TokenProvider
		if tp == nil {
			creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
			if err != nil {
				return nil, &core.BreadError{Code: core.CodeProviderAuth, Message: name + ": no Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS, run gcloud auth application-default login, or pass a TokenProvider", Context: map[string]any{"provider": name}, Cause: err}
			}
			tp = creds
		}
		// The SDK leaves authentication to a caller-supplied client, so the
		// bearer token is added by a transport around the caller's one.
		hc := *opts.httpClient()
		base2 := hc.Transport
		if base2 == nil {
			base2 = http.DefaultTransport
		}
		hc.Transport = &bearerTransport{base: base2, tokens: tp}
		cc.HTTPClient = &hc
		return newGeminiModel(name, modelID, cc, "")
	})
}

// bearerTransport adds an OAuth access token to each request.
type bearerTransport struct {
	base   http.RoundTripper
	tokens auth.TokenProvider
}

func (t *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := t.tokens.Token(r.Context())
	if err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &core.BreadError{Code: core.CodeProviderAuth, Message: "google-vertex: could not get an access token", Cause: err}
	}
	r = r.Clone(r.Context())
	typ := tok.Type
	if typ == "" {
		typ = "Bearer"
	}
	r.Header.Set("Authorization", typ+" "+tok.Value)
	return t.base.RoundTrip(r)
}

func genaiHTTPOptions(base, version string, headers map[string]string) genai.HTTPOptions {
	o := genai.HTTPOptions{BaseURL: base, APIVersion: version}
	if len(headers) > 0 {
		o.Headers = http.Header{}
		for k, v := range headers {
			o.Headers.Set(k, v)
		}
	}
	return o
}

type geminiModel struct {
	provider string
	modelID  string
	models   *genai.Models
	key      string
}

func newGeminiModel(provider, modelID string, cc *genai.ClientConfig, key string) (core.LanguageModel, error) {
	// NewClient does no I/O when credentials or a client are given.
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: provider + ": " + redact(err.Error(), key), Context: map[string]any{"provider": provider}}
	}
	return &geminiModel{provider: provider, modelID: modelID, models: client.Models, key: key}, nil
}

// Stream implements core.LanguageModel.
func (m *geminiModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		contents, cfg, err := m.request(req)
		if err != nil {
			yield(core.ModelEvent{}, err)
			return
		}
		var (
			usage     core.Usage
			reason    core.FinishReason
			finished  bool
			toolCalls int
		)
		for resp, err := range m.models.GenerateContentStream(ctx, m.modelID, contents, cfg) {
			if err != nil {
				yield(core.ModelEvent{}, m.mapError(ctx, err))
				return
			}
			if u := resp.UsageMetadata; u != nil {
				usage = core.Usage{InputTokens: int64(u.PromptTokenCount), OutputTokens: int64(u.CandidatesTokenCount + u.ThoughtsTokenCount), TotalTokens: int64(u.TotalTokenCount)}
			}
			if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" && len(resp.Candidates) == 0 {
				finished, reason = true, core.FinishContentFilter
				continue
			}
			if len(resp.Candidates) == 0 {
				continue
			}
			cand := resp.Candidates[0]
			if cand.Content != nil {
				for _, p := range cand.Content.Parts {
					if p == nil {
						continue
					}
					switch {
					case p.FunctionCall != nil:
						toolCalls++
						if !yieldWholeCall(yield, geminiCallID(p.FunctionCall, toolCalls), p.FunctionCall.Name, p.FunctionCall.Args) {
							return
						}
					case p.InlineData != nil:
						f := &core.GeneratedFile{MediaType: p.InlineData.MIMEType, Data: p.InlineData.Data, Name: p.InlineData.DisplayName}
						if !yield(core.ModelEvent{Type: core.EventFile, File: f}, nil) {
							return
						}
					case p.Text != "" && p.Thought:
						if !yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: p.Text}, nil) {
							return
						}
					case p.Text != "":
						if !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: p.Text}, nil) {
							return
						}
					}
				}
			}
			if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
				finished = true
				reason = geminiFinishReason(cand.FinishReason)
			}
		}
		if !finished {
			if ctx.Err() != nil {
				yield(core.ModelEvent{}, ctx.Err())
				return
			}
			yield(core.ModelEvent{}, streamCut(m.provider, nil))
			return
		}
		if reason == core.FinishStop && toolCalls > 0 {
			reason = core.FinishToolCalls
		}
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: reason, Usage: usage}, nil)
	}
}

// yieldWholeCall emits a tool call that arrived complete (Gemini, Bedrock
// sends of one piece) in the port's streamed shape: start, one delta with
// all arguments, end, call.
func yieldWholeCall(yield func(core.ModelEvent, error) bool, id, name string, args any) bool {
	input, err := json.Marshal(args)
	if err != nil || string(input) == "null" {
		input = []byte("{}")
	}
	return yield(core.ModelEvent{Type: core.EventToolInputStart, ToolCallID: id, ToolName: name}, nil) &&
		yield(core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: id, ToolName: name, Delta: string(input)}, nil) &&
		yield(core.ModelEvent{Type: core.EventToolInputEnd, ToolCallID: id, ToolName: name}, nil) &&
		yield(core.ModelEvent{Type: core.EventToolCall, ToolCallID: id, ToolName: name, Input: input}, nil)
}

// geminiCallID is the call's id; the Gemini API often sends none, so one is
// made up that is unique within the response.
func geminiCallID(fc *genai.FunctionCall, n int) string {
	if fc.ID != "" {
		return fc.ID
	}
	return "call_" + strconv.Itoa(n) + "_" + fc.Name
}

func geminiFinishReason(r genai.FinishReason) core.FinishReason {
	switch r {
	case genai.FinishReasonStop:
		return core.FinishStop
	case genai.FinishReasonMaxTokens:
		return core.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety:
		return core.FinishContentFilter
	case genai.FinishReasonMalformedFunctionCall:
		return core.FinishError
	default:
		return core.FinishOther
	}
}

func (m *geminiModel) mapError(ctx context.Context, err error) error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		f := httpFailure{provider: m.provider, status: apiErr.Code, vendor: apiErr.Status, text: apiErr.Message}
		if geminiDetailReason(apiErr.Details) == "API_KEY_INVALID" {
			// The Gemini API answers a bad key with 400 INVALID_ARGUMENT.
			f.status = http.StatusUnauthorized
		}
		be := f.breadError(m.key)
		if be.Code == core.CodeRateLimited {
			if d, ok := geminiRetryDelay(apiErr.Details); ok {
				be.Context["retryAfter"] = d.Seconds()
			}
		}
		return be
	}
	var pErr *genai.APIError
	if errors.As(err, &pErr) {
		return m.mapError(ctx, *pErr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return streamCut(m.provider, err, m.key)
}

// geminiDetailReason returns the reason of a google.rpc.ErrorInfo detail.
func geminiDetailReason(details []map[string]any) string {
	for _, d := range details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			r, _ := d["reason"].(string)
			return r
		}
	}
	return ""
}

// geminiRetryDelay reads google.rpc.RetryInfo's retryDelay ("37s") from an
// error's details.
func geminiRetryDelay(details []map[string]any) (time.Duration, bool) {
	for _, d := range details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.RetryInfo") {
			if s, ok := d["retryDelay"].(string); ok {
				if dur, err := time.ParseDuration(s); err == nil {
					return dur, true
				}
			}
		}
	}
	return 0, false
}

// skipThoughtSignature is the value Google documents for function calls
// replayed without the signature the model issued: bread's parts do not
// keep signatures, and Gemini 3 rejects a replayed call with none.
var skipThoughtSignature = []byte("skip_thought_signature_validator")

func (m *geminiModel) request(req core.ModelRequest) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	cfg := &genai.GenerateContentConfig{}
	system := req.System
	var contents []*genai.Content
	for _, msg := range req.Messages {
		if msg.Role == core.RoleSystem {
			for _, p := range msg.Parts {
				if p.Type == core.PartText {
					system = strings.TrimSpace(system + "\n\n" + p.Text)
				}
			}
			continue
		}
		role := genai.RoleUser
		if msg.Role == core.RoleAssistant {
			role = genai.RoleModel
		}
		var parts []*genai.Part
		for _, p := range msg.Parts {
			gp, err := m.part(p)
			if err != nil {
				return nil, nil, err
			}
			if gp != nil {
				parts = append(parts, gp)
			}
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			continue
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	if system != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: system}}}
	}
	if len(req.Tools) > 0 {
		var decls []*genai.FunctionDeclaration
		for _, t := range req.Tools {
			schema, err := schemaMap(t.InputSchema)
			if err != nil {
				return nil, nil, invalidRequest(m.provider, "tool %q has an invalid input schema: %v", t.Name, err)
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema})
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	if req.Output != nil {
		schema, err := schemaMap(req.Output.Schema)
		if err != nil {
			return nil, nil, invalidRequest(m.provider, "the output schema is invalid: %v", err)
		}
		cfg.ResponseMIMEType = "application/json"
		cfg.ResponseJsonSchema = schema
	}
	s := req.Settings
	if s.MaxOutputTokens != nil {
		cfg.MaxOutputTokens = int32(*s.MaxOutputTokens)
	}
	f32 := func(v *float64) *float32 {
		if v == nil {
			return nil
		}
		f := float32(*v)
		return &f
	}
	cfg.Temperature, cfg.TopP = f32(s.Temperature), f32(s.TopP)
	cfg.PresencePenalty, cfg.FrequencyPenalty = f32(s.PresencePenalty), f32(s.FrequencyPenalty)
	if s.TopK != nil {
		k := float32(*s.TopK)
		cfg.TopK = &k
	}
	if s.Seed != nil {
		seed := int32(*s.Seed)
		cfg.Seed = &seed
	}
	cfg.StopSequences = s.StopSequences
	if len(req.ProviderOptions) > 0 {
		// Vendor fields (thinkingConfig, safetySettings, responseModalities
		// ...) go into the request body as given.
		cfg.HTTPOptions = &genai.HTTPOptions{ExtraBody: map[string]any{"generationConfig": map[string]any{}}}
		gc := map[string]any{}
		for k, v := range req.ProviderOptions {
			if k == "safetySettings" || k == "toolConfig" || k == "cachedContent" || k == "labels" {
				cfg.HTTPOptions.ExtraBody[k] = v
			} else {
				gc[k] = v
			}
		}
		cfg.HTTPOptions.ExtraBody["generationConfig"] = gc
	}
	return contents, cfg, nil
}

func (m *geminiModel) part(p core.Part) (*genai.Part, error) {
	switch p.Type {
	case core.PartText:
		if p.Text == "" {
			return nil, nil
		}
		return &genai.Part{Text: p.Text}, nil
	case core.PartToolCall:
		args := map[string]any{}
		if len(strings.TrimSpace(string(p.Input))) > 0 {
			if err := json.Unmarshal(p.Input, &args); err != nil {
				return nil, invalidRequest(m.provider, "tool call %s has non-object input", p.ToolCallID)
			}
		}
		return &genai.Part{FunctionCall: &genai.FunctionCall{Name: p.ToolName, Args: args}, ThoughtSignature: skipThoughtSignature}, nil
	case core.PartToolResult:
		var v any
		if len(strings.TrimSpace(string(p.Output))) > 0 {
			if err := json.Unmarshal(p.Output, &v); err != nil {
				v = string(p.Output)
			}
		}
		resp, ok := v.(map[string]any)
		if !ok {
			resp = map[string]any{"output": v}
		}
		if p.IsError {
			resp = map[string]any{"error": v}
		}
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: p.ToolName, Response: resp}}, nil
	case core.PartFile:
		if len(p.Data) > 0 {
			return &genai.Part{InlineData: &genai.Blob{MIMEType: p.MediaType, Data: p.Data}}, nil
		}
		return &genai.Part{FileData: &genai.FileData{MIMEType: p.MediaType, FileURI: p.URL}}, nil
	}
	return nil, nil
}
