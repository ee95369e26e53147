package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/breadai/bread/core"
)

// eventStreamBody encodes a .jsonl fixture (one event or exception per
// line) in AWS eventstream framing, as Bedrock sends ConverseStream.
func eventStreamBody(t testing.TB, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	sc := bufio.NewScanner(bytes.NewReader(fixture(t, name)))
	for sc.Scan() {
		var line struct {
			Event     string          `json:"event"`
			Exception string          `json:"exception"`
			Payload   json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		msg := eventstream.Message{Payload: line.Payload}
		if line.Exception != "" {
			msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
			msg.Headers.Set(":exception-type", eventstream.StringValue(line.Exception))
		} else {
			msg.Headers.Set(":message-type", eventstream.StringValue("event"))
			msg.Headers.Set(":event-type", eventstream.StringValue(line.Event))
		}
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		if err := enc.Encode(&buf, msg); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func eventStream(body []byte) reply {
	return reply{contentType: "application/vnd.amazon.eventstream", body: body}
}

const testAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

func bedrockModelFor(t *testing.T, fv *fakeVendor) core.LanguageModel {
	t.Helper()
	m, err := NewBedrock(BedrockOptions{
		ClientOptions: ClientOptions{BaseURL: fv.URL, HTTPClient: fv.client, Getenv: env(map[string]string{"AWS_REGION": "us-east-1"})},
		Credentials:   credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", testAWSSecret, ""),
	})("anthropic.claude-3-5-sonnet-20240620-v1:0")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBedrockStreamsTextAndSendsTheWholeRequest(t *testing.T) {
	fv := newFakeVendor(t, eventStream(eventStreamBody(t, "bedrock/text.jsonl")), false)
	req := fullRequest()
	req.Output = &core.OutputSpec{Name: "weather", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	evs, err := collect(t, bedrockModelFor(t, fv).Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, evs)
	if got := joined(evs, core.EventTextDelta); got != "Hello, world" {
		t.Errorf("text %q", got)
	}
	if fin := evs[len(evs)-1]; fin.FinishReason != core.FinishStop || fin.Usage != (core.Usage{InputTokens: 11, OutputTokens: 4, TotalTokens: 15}) {
		t.Errorf("finish %+v", fin)
	}
	r := fv.last(t)
	if r.Path != "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse-stream" {
		t.Errorf("path %s", r.Path)
	}
	if a := r.Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(a, "/us-east-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q", a)
	}
	body := r.json(t)
	ic := body["inferenceConfig"].(map[string]any)
	if ic["maxTokens"] != 256.0 || ic["stopSequences"].([]any)[0] != "END" {
		t.Errorf("inferenceConfig %v", ic)
	}
	if sys := body["system"].([]any)[0].(map[string]any); sys["text"] != "You are terse." {
		t.Errorf("system %v", sys)
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("%d messages: %s", len(msgs), r.Body)
	}
	img := msgs[0].(map[string]any)["content"].([]any)[1].(map[string]any)["image"].(map[string]any)
	if img["format"] != "png" {
		t.Errorf("image %v", img)
	}
	tu := msgs[1].(map[string]any)["content"].([]any)[1].(map[string]any)["toolUse"].(map[string]any)
	if tu["toolUseId"] != "call_1" || tu["input"].(map[string]any)["location"] != "Paris" {
		t.Errorf("toolUse %v", tu)
	}
	tr := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)["toolResult"].(map[string]any)
	if tr["toolUseId"] != "call_1" || tr["content"].([]any)[0].(map[string]any)["json"].(map[string]any)["temp"] != 21.0 {
		t.Errorf("toolResult %v", tr)
	}
	spec := body["toolConfig"].(map[string]any)["tools"].([]any)[0].(map[string]any)["toolSpec"].(map[string]any)
	if spec["name"] != "get_weather" || spec["inputSchema"].(map[string]any)["json"] == nil {
		t.Errorf("toolSpec %v", spec)
	}
	js := body["outputConfig"].(map[string]any)["textFormat"].(map[string]any)
	if js["type"] != "json_schema" || js["structure"].(map[string]any)["jsonSchema"].(map[string]any)["name"] != "weather" {
		t.Errorf("outputConfig %v", js)
	}
	if extra := body["additionalModelRequestFields"].(map[string]any); extra["top_k"] != 40.0 || extra["user"] != "u-1" {
		t.Errorf("additionalModelRequestFields %v", extra)
	}
}

func TestBedrockEvents(t *testing.T) {
	for _, tc := range []streamCase{
		{"bedrock/tool_use.jsonl", "Let me look.", "", map[string]string{"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q": `{"location":"Paris"}`, "tooluse_second": `{"tz":"Europe/Paris"}`}, core.FinishToolCalls},
		{"bedrock/reasoning.jsonl", "4", "Two plus two is four.", nil, core.FinishStop},
		{"bedrock/structured.jsonl", `{"city":"Paris","temp":21}`, "", nil, core.FinishStop},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			fv := newFakeVendor(t, eventStream(eventStreamBody(t, tc.fixture)), false)
			evs, err := collect(t, bedrockModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, evs)
		})
	}
}

func TestBedrockErrors(t *testing.T) {
	awsErr := func(status int, typ, msg string) reply {
		return reply{status: status, contentType: "application/json", header: map[string]string{"X-Amzn-Errortype": typ + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}, body: []byte(`{"message":"` + msg + `"}`)}
	}
	full := eventStreamBody(t, "bedrock/text.jsonl")
	for _, tc := range []struct {
		name string
		rep  reply
		code string
	}{
		{"403", awsErr(403, "AccessDeniedException", "The security token included in the request is invalid. "+testAWSSecret), core.CodeProviderAuth},
		{"429", func() reply {
			r := awsErr(429, "ThrottlingException", "Too many requests, please wait before trying again.")
			r.header["Retry-After"] = "3"
			return r
		}(), core.CodeRateLimited},
		{"context", awsErr(400, "ValidationException", "Input is too long for requested model."), core.CodeContextTooLong},
		{"500", awsErr(500, "InternalServerException", "The server encountered an internal error."), core.CodeProviderError},
		{"exception mid-stream", eventStream(eventStreamBody(t, "bedrock/throttled_midstream.jsonl")), core.CodeRateLimited},
		{"cut", reply{contentType: "application/vnd.amazon.eventstream", body: full, cutAfter: len(full) / 2}, core.CodeProviderError},
		{"ends early", eventStream(full[:len(full)/2]), core.CodeProviderError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFakeVendor(t, tc.rep, false)
			_, err := collect(t, bedrockModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
			be := wantCode(t, err, tc.code)
			if strings.Contains(be.Error(), testAWSSecret) {
				t.Errorf("secret leaked: %s", be.Error())
			}
			if tc.name == "429" && be.Context["retryAfter"] != 3.0 {
				t.Errorf("retryAfter %v", be.Context["retryAfter"])
			}
		})
	}
}

func TestBedrockBearerKeyAndEarlyStop(t *testing.T) {
	// Bedrock API keys are bearer tokens, which the SDK sends only over TLS.
	fv := newFakeVendor(t, eventStream(eventStreamBody(t, "bedrock/text.jsonl")), true)
	m, err := NewBedrock(BedrockOptions{ClientOptions: ClientOptions{BaseURL: fv.URL, HTTPClient: fv.client, Getenv: env(map[string]string{"AWS_REGION": "eu-west-1", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-abc"})}})("amazon.nova-pro-v1:0")
	if err != nil {
		t.Fatal(err)
	}
	consumeFirst(m.Stream(context.Background(), core.ModelRequest{}))
	if got := fv.last(t).Header.Get("Authorization"); got != "Bearer bedrock-api-key-abc" {
		t.Errorf("Authorization %q", got)
	}
	if n := fv.counter.open.Load(); n != 0 {
		t.Fatalf("%d bodies open", n)
	}
	if _, err := NewBedrock(BedrockOptions{ClientOptions: ClientOptions{Getenv: env(nil)}})("m"); err == nil {
		t.Error("no region must fail")
	}
	_ = aws.String
}
