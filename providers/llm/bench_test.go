package llm

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/breadai/bread/core"
)

const benchChunks = 2000

// memTransport serves the same bytes for every request from memory, so a
// benchmark measures parsing and mapping, not the network.
type memTransport struct {
	body        []byte
	contentType string
}

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {m.contentType}}, Body: nopCloser{bytes.NewReader(m.body)}, Request: r}, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func benchStream(b *testing.B, m core.LanguageModel) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for ev, err := range m.Stream(context.Background(), core.ModelRequest{}) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Type == core.EventTextDelta {
				n++
			}
		}
		if n != benchChunks {
			b.Fatalf("%d deltas, want %d", n, benchChunks)
		}
	}
	b.StopTimer()
	perChunk := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / benchChunks
	b.ReportMetric(perChunk, "ns/chunk")
}

func client(body []byte, ct string) *http.Client {
	return &http.Client{Transport: memTransport{body: body, contentType: ct}}
}

func BenchmarkOpenAIStream(b *testing.B) {
	var buf bytes.Buffer
	for i := range benchChunks {
		fmt.Fprintf(&buf, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
	}
	buf.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	m, _ := NewOpenAI(OpenAIOptions{ClientOptions: ClientOptions{APIKey: "k", HTTPClient: client(buf.Bytes(), "text/event-stream")}})("gpt-4o")
	benchStream(b, m)
}

func BenchmarkAnthropicStream(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"c\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
	buf.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range benchChunks {
		fmt.Fprintf(&buf, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok%d \"}}\n\n", i)
	}
	buf.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2000}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	m, _ := NewAnthropic(AnthropicOptions{ClientOptions: ClientOptions{APIKey: "k", HTTPClient: client(buf.Bytes(), "text/event-stream")}})("claude")
	benchStream(b, m)
}

func BenchmarkGeminiStream(b *testing.B) {
	var buf bytes.Buffer
	for i := range benchChunks {
		fmt.Fprintf(&buf, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"tok%d \"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n", i)
	}
	buf.WriteString("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}]}\r\n\r\n")
	m, _ := NewGoogle(GoogleOptions{ClientOptions: ClientOptions{APIKey: "k", HTTPClient: client(buf.Bytes(), "text/event-stream")}})("gemini")
	benchStream(b, m)
}

func BenchmarkBedrockStream(b *testing.B) {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	frame := func(event, payload string) {
		msg := eventstream.Message{Payload: []byte(payload)}
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		msg.Headers.Set(":event-type", eventstream.StringValue(event))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		_ = enc.Encode(&buf, msg)
	}
	frame("messageStart", `{"role":"assistant"}`)
	for i := range benchChunks {
		frame("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":"tok%d "}}`, i))
	}
	frame("contentBlockStop", `{"contentBlockIndex":0}`)
	frame("messageStop", `{"stopReason":"end_turn"}`)
	frame("metadata", `{"usage":{"inputTokens":1,"outputTokens":2000,"totalTokens":2001},"metrics":{"latencyMs":1}}`)
	m, _ := NewBedrock(BedrockOptions{ClientOptions: ClientOptions{BaseURL: "http://bedrock.test", HTTPClient: client(buf.Bytes(), "application/vnd.amazon.eventstream"), Getenv: env(map[string]string{"AWS_REGION": "us-east-1"})}, Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})("model")
	benchStream(b, m)
}

func BenchmarkCohereStream(b *testing.B) {
	var buf bytes.Buffer
	for i := range benchChunks {
		fmt.Fprintf(&buf, "event: content-delta\ndata: {\"type\":\"content-delta\",\"index\":0,\"delta\":{\"message\":{\"content\":{\"text\":\"tok%d \"}}}}\n\n", i)
	}
	buf.WriteString("event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{\"finish_reason\":\"COMPLETE\",\"usage\":{\"tokens\":{\"input_tokens\":1,\"output_tokens\":2000}}}}\n\n")
	m, _ := NewCohere(CohereOptions{ClientOptions{APIKey: "k", HTTPClient: client(buf.Bytes(), "text/event-stream")}})("command")
	benchStream(b, m)
}
