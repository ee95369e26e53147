package schedule_test

import (
	"testing"
	"time"

	"github.com/breadai/bread/engine/schedule"
)

// FuzzParseSchedule holds Parse to an answer for any spec and zone
// a bread.yaml may hold: a schedule, or an error, never a panic; and a
// schedule whose next tick never goes back in time.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range [][2]string{
		{"@every 1s", ""}, {"@every 90m", ""}, {"0 3 * * *", "Europe/Rome"}, {"*/5 * * * *", ""},
		{"@daily", "America/New_York"}, {"61 * * * *", ""}, {"@every -1s", ""}, {"", ""}, {"* * * * *", "Mars/Olympus"},
		{"0 0 30 2 *", ""}, {"@every 1000000h", ""},
	} {
		f.Add(s[0], s[1])
	}
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec, zone string) {
		s, err := schedule.Parse(spec, zone)
		if err != nil {
			return
		}
		if next := s.Next(start); !next.IsZero() && next.Before(start) {
			t.Fatalf("%q in %q: next tick %v before %v", spec, zone, next, start)
		}
	})
}
