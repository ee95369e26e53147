package storetest

import "testing"

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{" {\n\"a\" : 1 } ", `{"a":1}`, true},
		{`12345678901234567890`, `12345678901234567000`, false},
		{`1.0`, `1`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":null}`, `{}`, false},
		{`"x"`, `"x"`, true},
		{`{"a":1}`, `{"a":1`, false},
		{``, ``, false},
		{`{"a":1} {}`, `{"a":1}`, false},
	}
	for _, c := range cases {
		if got := jsonEqual([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("jsonEqual(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestCompact(t *testing.T) {
	cases := []struct{ in, want string }{
		{" {\n\"a\" : [ 1 , 2 ] } ", `{"a":[1,2]}`},
		{`{"z":1,"a":2}`, `{"z":1,"a":2}`},
		{`"<b>&</b>"`, `"<b>&</b>"`},
		{`not json`, `not json`},
	}
	for _, c := range cases {
		if got := string(compact([]byte(c.in))); got != c.want {
			t.Errorf("compact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
