package console_test

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The console's text colours meet WCAG 2.x AA contrast (4.5:1 for normal
// text) against the backgrounds they are drawn on: the palette is the
// :root custom properties of console.css, read from the file itself so a
// change of colour is checked.
func TestTextContrastMeetsWCAGAA(t *testing.T) {
	css, err := os.ReadFile("static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	colors := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z-]+):\s*#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b`).FindAllStringSubmatch(string(css), -1) {
		hex := m[2]
		if len(hex) == 3 { // #abc is #aabbcc
			hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
		}
		colors[m[1]] = "#" + hex
	}
	// Text colour on background, as the stylesheet uses them: body text
	// and dimmed text (reasoning, labels) on the page and on cards, links
	// and statuses, and the accent button's label.
	pairs := [][2]string{
		{"fg", "bg"}, {"fg", "card"},
		{"muted", "bg"}, {"muted", "card"},
		{"accent", "bg"}, {"accent", "card"}, {"accent-fg", "accent"},
		{"ok", "bg"}, {"ok", "card"}, {"bad", "bg"}, {"bad", "card"}, {"warn", "bg"}, {"warn", "card"},
		// A run comparison's diff: text added and removed, on their marks.
		{"fg", "ins-bg"}, {"fg", "del-bg"}, {"muted", "ins-bg"}, {"muted", "del-bg"},
	}
	check(t, colors, pairs, 4.5)
	// The waterfall's bars are graphics, not text: WCAG 1.4.11 asks 3:1
	// against what they are drawn on (a card, or a hovered row).
	colors["row-hover"] = "#f4f1ea"
	var bars [][2]string
	for _, c := range []string{"wf-run", "wf-model", "wf-tool", "wf-sub", "wf-step", "wf-wait", "bad", "warn"} {
		bars = append(bars, [2]string{c, "card"}, [2]string{c, "row-hover"})
	}
	check(t, colors, bars, 3)
}

func check(t *testing.T, colors map[string]string, pairs [][2]string, min float64) {
	t.Helper()
	for _, p := range pairs {
		fg, bg := colors[p[0]], colors[p[1]]
		if fg == "" || bg == "" {
			t.Fatalf("console.css has no --%s or --%s: the palette moved, update this test", p[0], p[1])
		}
		if r := contrast(fg, bg); r < min {
			t.Errorf("--%s (%s) on --%s (%s): contrast %.2f:1, want at least %.1f:1", p[0], fg, p[1], bg, r, min)
		}
	}
}

// contrast is the WCAG contrast ratio of two #rrggbb colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(hex string) float64 {
	channel := func(s string) float64 {
		v, _ := strconv.ParseUint(s, 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*channel(hex[1:3]) + 0.7152*channel(hex[3:5]) + 0.0722*channel(hex[5:7])
}
