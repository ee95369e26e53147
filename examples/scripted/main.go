// Command scripted runs one agent on a scripted model and prints every crumb
// as it passes the choke point: a tool call, its result, and a streamed
// answer. It needs no network and no API key.
//
//	go run ./examples/scripted
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

type weatherArgs struct {
	City string `json:"city" validate:"required"`
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	model := modeltest.New(
		modeltest.ToolCall("tool_weather", weatherArgs{City: "Rome"}),
		modeltest.Text("It is ", "sunny in Rome, ", "a fine day for bread."),
	)
	weather := typed.DefineTool("weather", "Current weather for a city.",
		func(_ context.Context, a weatherArgs, _ core.ToolContext) (map[string]string, error) {
			return map[string]string{"city": a.City, "sky": "sunny"}, nil
		})
	in, err := engine.New(engine.Config{
		Store:     memory.New(),
		Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{
			ID:     "forecaster",
			Model:  core.ModelRef{Provider: "scripted", Model: "demo"},
			Prompt: "You tell the weather.",
			Tools:  []core.Tool{weather},
		}},
	})
	if err != nil {
		return err
	}
	if err := in.Start(ctx); err != nil {
		return err
	}
	defer in.Stop(ctx)

	enc := json.NewEncoder(os.Stdout)
	for c, err := range in.Run(ctx, "forecaster", "What is the weather in Rome?", core.RunOptions{}) {
		if err := enc.Encode(c); err != nil {
			return err
		}
		if err != nil {
			return fmt.Errorf("run failed: %w", err)
		}
	}
	return nil
}
