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
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
