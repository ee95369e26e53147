package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/breadai/bread/core"
)

func TestEnvCredentialsMissing(t *testing.T) {
	_, err := core.EnvCredentials().Get(context.Background(), "BREAD_TEST_DEFINITELY_UNSET")
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeCredentialUnavailable {
		t.Fatalf("got %v", err)
	}
}
