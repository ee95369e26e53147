package lmtest_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/lmtest"
	"github.com/breadai/bread/core/modeltest"
)

// The scripted model plays each scenario's canonical events.
func TestScriptedModel(t *testing.T) {
	lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		return modeltest.New(modeltest.Turn{Events: s.Events(), Err: s.Err(), Block: s.Stall})
	})
}
