package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/auth/bearer"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/breadai/bread/core"
)

// BedrockOptions configure the Amazon Bedrock Converse adapter (provider
// "amazon-bedrock").
type BedrockOptions struct {
	// BaseURL overrides the regional endpoint; HTTPClient, Headers and
	// Getenv as for every provider. APIKey is a Bedrock API key (bearer
	// token), otherwise read from AWS_BEARER_TOKEN_BEDROCK.
	ClientOptions
	// Region defaults to AWS_REGION, then AWS_DEFAULT_REGION.
	Region string
	// Credentials sign requests with SigV4. Nil uses AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when set, and the default
	// AWS credential chain (profiles, SSO, IMDS) otherwise.
	Credentials aws.CredentialsProvider
}

// NewBedrock returns the factory for models on Amazon Bedrock, called
// through the Converse API so every model family shares one request shape.
func NewBedrock(opts BedrockOptions) core.ProviderFactory {
	return perModel(func(modelID string) (core.LanguageModel, error) {
		const name = "amazon-bedrock"
		if strings.TrimSpace(modelID) == "" {
			return nil, configError(core.CodeInvalidConfig, name, "a model id is required")
		}
		region := opts.Region
		if region == "" {
			region = opts.Getenv.first("AWS_REGION", "AWS_DEFAULT_REGION")
		}
		if region == "" {
			return nil, configError(core.CodeInvalidConfig, name, "no region: set AWS_REGION or the Region option")
		}
		// The SDK leaves an error response's body open on the event-stream
		// operation; buffer and close such bodies so no connection leaks.
		hc := *opts.httpClient()
		if hc.Transport == nil {
			hc.Transport = http.DefaultTransport
		}
		hc.Transport = bufferErrorBodies{base: hc.Transport}
		o := bedrockruntime.Options{
			Region:     region,
			HTTPClient: &hc,
			// bread's retry policy decides; the SDK makes one attempt.
			Retryer: aws.NopRetryer{},
		}
		if opts.BaseURL != "" {
			o.BaseEndpoint = aws.String(opts.BaseURL)
		} else if u := opts.Getenv.first("AWS_BEDROCK_BASE_URL"); u != "" {
			o.BaseEndpoint = aws.String(u)
		}
		var secrets []string
		token := opts.APIKey
		if token == "" {
			token = opts.Getenv.first("AWS_BEARER_TOKEN_BEDROCK")
		}
		switch {
		case token != "":
			o.BearerAuthTokenProvider = bearer.StaticTokenProvider{Token: bearer.Token{Value: token}}
			o.AuthSchemePreference = []string{"httpBearerAuth"}
			secrets = append(secrets, token)
		case opts.Credentials != nil:
			o.Credentials = opts.Credentials
		case opts.Getenv.first("AWS_ACCESS_KEY_ID") != "" && opts.Getenv.first("AWS_SECRET_ACCESS_KEY") != "":
			id, secret := opts.Getenv.first("AWS_ACCESS_KEY_ID"), opts.Getenv.first("AWS_SECRET_ACCESS_KEY")
			o.Credentials = credentials.NewStaticCredentialsProvider(id, secret, opts.Getenv.first("AWS_SESSION_TOKEN"))
			secrets = append(secrets, secret)
		default:
			cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(region))
			if err != nil {
				return nil, &core.BreadError{Code: core.CodeProviderAuth, Message: name + ": no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or the Credentials option", Context: map[string]any{"provider": name}, Cause: err}
			}
			o.Credentials = cfg.Credentials
		}
		if len(opts.Headers) > 0 {
			for k, v := range opts.Headers {
				o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue(k, v))
			}
		}
		return &bedrockModel{modelID: modelID, client: bedrockruntime.New(o), secrets: secrets, creds: o.Credentials}, nil
	})
}

type bedrockModel struct {
	modelID string
	client  *bedrockruntime.Client
	secrets []string
	creds   aws.CredentialsProvider
}

// redactions returns every secret an error message must not carry,
// including the signing key of injected credentials.
func (m *bedrockModel) redactions(ctx context.Context) []string {
	out := m.secrets
	if m.creds != nil {
		if c, err := m.creds.Retrieve(context.WithoutCancel(ctx)); err == nil {
			out = append(append([]string(nil), out...), c.SecretAccessKey, c.SessionToken)
		}
	}
	return out
}

// bufferErrorBodies reads a failed response's body into memory (up to
// 1 MiB) and closes the connection's body at once.
type bufferErrorBodies struct{ base http.RoundTripper }

func (b bufferErrorBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil || resp.StatusCode < 300 || resp.Body == nil {
		return resp, err
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// Stream implements core.LanguageModel.
func (m *bedrockModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		in, err := m.input(req)
		if err != nil {
			yield(core.ModelEvent{}, err)
			return
		}
		// The event stream reader runs on its own goroutine; cancelling
		// this context and closing the stream stop it however we leave.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out, err := m.client.ConverseStream(ctx, in)
		if err != nil {
			yield(core.ModelEvent{}, m.mapError(ctx, err))
			return
		}
		stream := out.GetStream()
		defer stream.Close()

		var (
			calls    toolCallBuffer
			blocks   = map[int32]*pendingCall{}
			usage    core.Usage
			reason   core.FinishReason
			stopped  bool
			metadata bool
		)
		for ev := range stream.Events() {
			switch e := ev.(type) {
			case *types.ConverseStreamOutputMemberContentBlockStart:
				if tu, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
					idx := aws.ToInt32(e.Value.ContentBlockIndex)
					c, _ := calls.start(int64(idx), aws.ToString(tu.Value.ToolUseId), aws.ToString(tu.Value.Name))
					blocks[idx] = c
					if !yield(core.ModelEvent{Type: core.EventToolInputStart, ToolCallID: c.id, ToolName: c.name}, nil) {
						return
					}
				}
			case *types.ConverseStreamOutputMemberContentBlockDelta:
				switch d := e.Value.Delta.(type) {
				case *types.ContentBlockDeltaMemberText:
					if d.Value != "" && !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: d.Value}, nil) {
						return
					}
				case *types.ContentBlockDeltaMemberReasoningContent:
					if t, ok := d.Value.(*types.ReasoningContentBlockDeltaMemberText); ok && t.Value != "" {
						if !yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: t.Value}, nil) {
							return
						}
					}
				case *types.ContentBlockDeltaMemberToolUse:
					c := blocks[aws.ToInt32(e.Value.ContentBlockIndex)]
					if c == nil || d.Value.Input == nil || *d.Value.Input == "" {
						continue
					}
					c.args.WriteString(*d.Value.Input)
					if !yield(core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: c.id, ToolName: c.name, Delta: *d.Value.Input}, nil) {
						return
					}
				}
			case *types.ConverseStreamOutputMemberContentBlockStop:
				if c := blocks[aws.ToInt32(e.Value.ContentBlockIndex)]; c != nil && !c.ended {
					end, call := c.endEvents()
					if !yield(end, nil) || !yield(call, nil) {
						return
					}
				}
			case *types.ConverseStreamOutputMemberMessageStop:
				stopped = true
				reason = bedrockFinishReason(e.Value.StopReason)
			case *types.ConverseStreamOutputMemberMetadata:
				metadata = true
				if u := e.Value.Usage; u != nil {
					usage = core.Usage{InputTokens: int64(aws.ToInt32(u.InputTokens)), OutputTokens: int64(aws.ToInt32(u.OutputTokens)), TotalTokens: int64(aws.ToInt32(u.TotalTokens))}
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(core.ModelEvent{}, m.mapError(ctx, err))
			return
		}
		// messageStop then metadata close a complete stream; without
		// messageStop the connection was cut.
		if !stopped {
			if ctx.Err() != nil {
				yield(core.ModelEvent{}, ctx.Err())
				return
			}
			yield(core.ModelEvent{}, streamCut("amazon-bedrock", nil))
			return
		}
		_ = metadata
		if !calls.flush(yield) {
			return
		}
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: reason, Usage: usage}, nil)
	}
}

func bedrockFinishReason(r types.StopReason) core.FinishReason {
	switch r {
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		return core.FinishStop
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		return core.FinishLength
	case types.StopReasonToolUse:
		return core.FinishToolCalls
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return core.FinishContentFilter
	default:
		return core.FinishOther
	}
}

func (m *bedrockModel) mapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f := httpFailure{provider: "amazon-bedrock"}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		f.status = re.HTTPStatusCode()
		f.header = re.Response.Header
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		f.vendor, f.text = ae.ErrorCode(), ae.ErrorMessage()
		if f.status == 0 {
			// An exception inside the event stream has no status of its
			// own; give the throttling and validation ones theirs.
			switch ae.ErrorCode() {
			case "ThrottlingException", "throttlingException":
				f.status = http.StatusTooManyRequests
			case "ValidationException", "validationException":
				f.status = http.StatusBadRequest
			}
		}
		return f.breadError(m.redactions(ctx)...)
	}
	if f.status != 0 {
		f.text = err.Error()
		return f.breadError(m.redactions(ctx)...)
	}
	return streamCut("amazon-bedrock", err, m.redactions(ctx)...)
}

func (m *bedrockModel) input(req core.ModelRequest) (*bedrockruntime.ConverseStreamInput, error) {
	in := &bedrockruntime.ConverseStreamInput{ModelId: aws.String(m.modelID)}
	if req.System != "" {
		in.System = append(in.System, &types.SystemContentBlockMemberText{Value: req.System})
	}
	for _, msg := range req.Messages {
		if msg.Role == core.RoleSystem {
			for _, p := range msg.Parts {
				if p.Type == core.PartText && p.Text != "" {
					in.System = append(in.System, &types.SystemContentBlockMemberText{Value: p.Text})
				}
			}
			continue
		}
		role := types.ConversationRoleUser
		if msg.Role == core.RoleAssistant {
			role = types.ConversationRoleAssistant
		}
		var blocks []types.ContentBlock
		for _, p := range msg.Parts {
			b, err := bedrockBlock(p)
			if err != nil {
				return nil, err
			}
			if b != nil {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == role {
			in.Messages[n-1].Content = append(in.Messages[n-1].Content, blocks...)
			continue
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: blocks})
	}
	if len(req.Tools) > 0 {
		tc := &types.ToolConfiguration{}
		for _, t := range req.Tools {
			schema, err := schemaMap(t.InputSchema)
			if err != nil {
				return nil, invalidRequest("amazon-bedrock", "tool %q has an invalid input schema: %v", t.Name, err)
			}
			spec := types.ToolSpecification{Name: aws.String(t.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)}}
			if t.Description != "" {
				spec.Description = aws.String(t.Description)
			}
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
		in.ToolConfig = tc
	}
	if req.Output != nil {
		if _, err := schemaMap(req.Output.Schema); err != nil {
			return nil, invalidRequest("amazon-bedrock", "the output schema is invalid: %v", err)
		}
		def := types.JsonSchemaDefinition{Schema: aws.String(string(req.Output.Schema)), Name: aws.String(outputName(req.Output))}
		if req.Output.Description != "" {
			def.Description = aws.String(req.Output.Description)
		}
		in.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema, Structure: &types.OutputFormatStructureMemberJsonSchema{Value: def}}}
	}
	s := req.Settings
	ic := &types.InferenceConfiguration{StopSequences: s.StopSequences}
	if s.MaxOutputTokens != nil {
		ic.MaxTokens = aws.Int32(int32(*s.MaxOutputTokens))
	}
	if s.Temperature != nil {
		ic.Temperature = aws.Float32(float32(*s.Temperature))
	}
	if s.TopP != nil {
		ic.TopP = aws.Float32(float32(*s.TopP))
	}
	if ic.MaxTokens != nil || ic.Temperature != nil || ic.TopP != nil || len(ic.StopSequences) > 0 {
		in.InferenceConfig = ic
	}
	extra := map[string]any{}
	if s.TopK != nil {
		// Converse has no top_k; the model families that take one read it
		// from the additional fields.
		extra["top_k"] = *s.TopK
	}
	for k, v := range req.ProviderOptions {
		extra[k] = v
	}
	if len(extra) > 0 {
		in.AdditionalModelRequestFields = document.NewLazyDocument(extra)
	}
	return in, nil
}

func bedrockBlock(p core.Part) (types.ContentBlock, error) {
	switch p.Type {
	case core.PartText:
		if p.Text == "" {
			return nil, nil
		}
		return &types.ContentBlockMemberText{Value: p.Text}, nil
	case core.PartToolCall:
		var input any = map[string]any{}
		if len(strings.TrimSpace(string(p.Input))) > 0 {
			if err := json.Unmarshal(p.Input, &input); err != nil {
				return nil, invalidRequest("amazon-bedrock", "tool call %s has invalid input", p.ToolCallID)
			}
		}
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(p.ToolCallID), Name: aws.String(p.ToolName), Input: document.NewLazyDocument(input)}}, nil
	case core.PartToolResult:
		var content types.ToolResultContentBlock
		var v any
		if err := json.Unmarshal(p.Output, &v); err == nil {
			if _, isObj := v.(map[string]any); isObj {
				content = &types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(v)}
			}
		}
		if content == nil {
			content = &types.ToolResultContentBlockMemberText{Value: toolResultText(p.Output)}
		}
		tr := types.ToolResultBlock{ToolUseId: aws.String(p.ToolCallID), Content: []types.ToolResultContentBlock{content}}
		if p.IsError {
			tr.Status = types.ToolResultStatusError
		}
		return &types.ContentBlockMemberToolResult{Value: tr}, nil
	case core.PartFile:
		if len(p.Data) == 0 {
			return nil, invalidRequest("amazon-bedrock", "files must carry their data: Converse takes bytes or S3 locations, not URLs")
		}
		if isImage(p.MediaType) {
			return &types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormat(strings.TrimPrefix(p.MediaType, "image/")), Source: &types.ImageSourceMemberBytes{Value: p.Data}}}, nil
		}
		format, ok := bedrockDocFormats[p.MediaType]
		if !ok {
			return nil, invalidRequest("amazon-bedrock", "files of type %q are not supported", p.MediaType)
		}
		name := p.Filename
		if name == "" {
			name = "document"
		}
		// Bedrock allows only letters, digits, spaces, hyphens, parentheses
		// and brackets in document names.
		name = strings.Map(func(r rune) rune {
			if r == '.' || r == '_' {
				return '-'
			}
			return r
		}, name)
		return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: format, Name: aws.String(name), Source: &types.DocumentSourceMemberBytes{Value: p.Data}}}, nil
	}
	return nil, nil
}

var bedrockDocFormats = map[string]types.DocumentFormat{
	"application/pdf":    types.DocumentFormatPdf,
	"text/csv":           types.DocumentFormatCsv,
	"application/msword": types.DocumentFormatDoc,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": types.DocumentFormatDocx,
	"application/vnd.ms-excel": types.DocumentFormatXls,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": types.DocumentFormatXlsx,
	"text/html":     types.DocumentFormatHtml,
	"text/plain":    types.DocumentFormatTxt,
	"text/markdown": types.DocumentFormatMd,
}
