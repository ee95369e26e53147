// Command bakery is the small MCP server of the mcp example: recipes over
// stdio, for the baker agent to call through the mcpclient plugin.
//
//	go build -o bin/bakery ./bakery   # from examples/mcp
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type recipeArgs struct {
	Name string `json:"name" jsonschema:"the bread, for example focaccia or baguette"`
}

// Recipe is a recipe for 500 g of flour.
type Recipe struct {
	Name       string `json:"name"`
	FlourGrams int    `json:"flourGrams"`
	WaterGrams int    `json:"waterGrams"`
	SaltGrams  int    `json:"saltGrams"`
	ProofHours int    `json:"proofHours"`
}

var recipes = map[string]Recipe{
	"focaccia": {Name: "focaccia", FlourGrams: 500, WaterGrams: 400, SaltGrams: 10, ProofHours: 18},
	"baguette": {Name: "baguette", FlourGrams: 500, WaterGrams: 350, SaltGrams: 10, ProofHours: 12},
}

type orderArgs struct {
	Bread string `json:"bread" jsonschema:"the bread to order"`
}

// loavesSchema is the question order asks the human through bread.
var loavesSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"loaves": map[string]any{"type": "integer", "minimum": 1, "description": "how many loaves"}},
	"required":   []any{"loaves"},
}

type scaleArgs struct {
	Grams  int     `json:"grams" jsonschema:"an amount in grams"`
	Factor float64 `json:"factor" jsonschema:"how many times the recipe"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "bakery", Version: "1"}, nil)
	// A camelCase name on purpose: bread offers it as bakery__get_recipe.
	mcp.AddTool(s, &mcp.Tool{Name: "getRecipe", Description: "The recipe of a bread, for 500 g of flour."},
		func(_ context.Context, _ *mcp.CallToolRequest, a recipeArgs) (*mcp.CallToolResult, Recipe, error) {
			r, ok := recipes[strings.ToLower(a.Name)]
			if !ok {
				return nil, Recipe{}, fmt.Errorf("the bakery has no recipe for %q", a.Name)
			}
			return nil, r, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "scale", Description: "Scales an amount in grams."},
		func(_ context.Context, _ *mcp.CallToolRequest, a scaleArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%.0f g", float64(a.Grams)*a.Factor)}}}, nil, nil
		})
	// order asks how many loaves before ordering (elicitation): bread
	// suspends the run with a human:required carrying loavesSchema, and
	// the answer posted to /resume comes back here.
	mcp.AddTool(s, &mcp.Tool{Name: "order", Description: "Orders loaves of a bread; asks how many."},
		func(_ context.Context, req *mcp.CallToolRequest, a orderArgs) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["loaves"]
			if !ok {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"loaves": &mcp.ElicitParams{Message: "How many loaves of " + a.Bread + "?", RequestedSchema: loavesSchema}},
				}, nil, nil
			}
			er, _ := resp.(*mcp.ElicitResult)
			if er == nil || er.Action != "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no order placed"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("ordered %v loaves of %s", er.Content["loaves"], a.Bread)}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
