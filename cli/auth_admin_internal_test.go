package cli

import (
	"testing"

	"github.com/breadai/bread/core"
)

// TestAuthAdmin covers each strategy's run-ownership options: ownership
// false, admins by subject, adminClaims on a string, a []string (the
// trusted strategy's groups) and a []any (a JWT's list claim).
func TestAuthAdmin(t *testing.T) {
	off := false
	cases := []struct {
		name   string
		common authCommon
		id     core.AuthIdentity
		want   bool
	}{
		{"no option", authCommon{}, core.AuthIdentity{Subject: "alice"}, false},
		{"ownership false", authCommon{Ownership: &off}, core.AuthIdentity{Subject: "alice"}, true},
		{"an admin subject", authCommon{Admins: []string{"ops"}}, core.AuthIdentity{Subject: "ops"}, true},
		{"another subject", authCommon{Admins: []string{"ops"}}, core.AuthIdentity{Subject: "alice"}, false},
		{"a string claim", authCommon{AdminClaims: map[string]string{"role": "ops"}}, core.AuthIdentity{Subject: "a", Claims: map[string]any{"role": "ops"}}, true},
		{"another value", authCommon{AdminClaims: map[string]string{"role": "ops"}}, core.AuthIdentity{Subject: "a", Claims: map[string]any{"role": "dev"}}, false},
		{"a []string claim", authCommon{AdminClaims: map[string]string{"groups": "ops"}}, core.AuthIdentity{Subject: "a", Claims: map[string]any{"groups": []string{"dev", "ops"}}}, true},
		{"a []any claim", authCommon{AdminClaims: map[string]string{"roles": "ops"}}, core.AuthIdentity{Subject: "a", Claims: map[string]any{"roles": []any{"ops"}}}, true},
		{"a list without it", authCommon{AdminClaims: map[string]string{"groups": "ops"}}, core.AuthIdentity{Subject: "a", Claims: map[string]any{"groups": []string{"dev"}}}, false},
	}
	for _, c := range cases {
		if got := c.common.admin(&c.id); got != c.want {
			t.Errorf("%s: admin = %v, want %v", c.name, got, c.want)
		}
	}
}
