// Package llm adapts 21 model vendors to bread's model port,
// core.LanguageModel, and gathers them in one core.ProviderRegistry.
//
// Six API families cover the 21 providers:
//
//   - OpenAI Chat Completions (openai-go): openai, azure and every vendor that
//     speaks the same API (mistral, groq, xai, deepseek, togetherai,
//     fireworks, deepinfra, cerebras, perplexity, baseten, ollama,
//     openrouter, lmstudio, openai-compatible);
//   - Anthropic Messages (anthropic-sdk-go): anthropic;
//   - Gemini generateContent (google.golang.org/genai): google and
//     google-vertex;
//   - Bedrock ConverseStream (aws-sdk-go-v2): amazon-bedrock;
//   - Cohere v2 chat (a small hand-written SSE client): cohere.
//
// Every adapter streams: a call yields text and reasoning deltas, streamed
// tool-call arguments (tool-input-start, -delta, -end, then a complete
// tool-call), generated files, and exactly one finish event with the finish
// reason and token usage. Errors are *core.BreadError with the codes
// PROVIDER_AUTH, RATE_LIMITED (Context["retryAfter"] in seconds),
// CONTEXT_TOO_LONG and PROVIDER_ERROR; an API key never appears in them. SDK
// retries are off: bread's own retry policy decides what to retry.
//
// Keys and base URLs come from each vendor's usual environment variables,
// read when a factory is called (never at import), through an injectable
// Getenv so tests need no process environment.
package llm
