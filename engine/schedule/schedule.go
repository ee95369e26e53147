package schedule

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"github.com/breadai/bread/core"
)

// Schedule is an agent run on a timetable (bread.yaml `schedules:`). At each
// tick the agent runs in the background on Input, like a run started with
// Prefer: respond-async: it has a record, a stream, a webhook, and its
// agent's busy-session and onLost policies apply.
type Schedule struct {
	// Name identifies the schedule; it must be unique.
	Name string `json:"name"`
	// Spec is when it ticks, as written: a five-field cron expression
	// ("*/5 * * * *", "@daily") evaluated in TimeZone, or "@every <duration>"
	// (at least 1s), whose ticks are the whole multiples of the duration on
	// the clock, so every replica agrees on them.
	Spec string `json:"spec"`
	// TimeZone is the IANA zone cron fields are read in; empty is UTC.
	TimeZone string `json:"timeZone,omitempty"`
	AgentID  string `json:"agentId"`
	Input    any    `json:"input,omitempty"`
	// Session is the session every tick's run continues; empty starts a
	// new session per tick.
	Session string `json:"session,omitempty"`
	// Webhook, when set, is told how each tick's run ended.
	Webhook string `json:"webhook,omitempty"`
	// RunAs, when set, is the identity every tick's run is started as,
	// exactly as if that caller had started it: the run's starter
	// (core.RunRecord.StartedBy), the owner of the session a tick creates,
	// and, under the session ownership rule (core.Storage.OwnSessions),
	// Session must be that identity's. Nil runs as the operator (no
	// identity), who may continue only sessions no identity owns. Its
	// Subject is required; its Claims name the strategy ("bread.strategy")
	// and issuer ("iss") core.OwnerKey reads.
	RunAs *core.AuthIdentity `json:"runAs,omitempty"`

	when core.Schedule // set by Check
}

// Parse reads a Schedule's Spec in timeZone (empty: UTC): "@every
// <duration>" or a standard cron expression (five fields or a descriptor
// such as @hourly). A bad spec or zone is a VALIDATION_ERROR.
func Parse(spec, timeZone string) (core.Schedule, error) {
	if d, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every "); ok {
		every, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || every < time.Second {
			return nil, core.Errorf(core.CodeValidationError, "schedule %q: @every needs a duration of at least 1s", spec)
		}
		return core.Every(every), nil
	}
	loc := time.UTC
	if timeZone != "" {
		var err error
		if loc, err = time.LoadLocation(timeZone); err != nil {
			return nil, core.Errorf(core.CodeValidationError, "schedule %q: unknown time zone %q", spec, timeZone)
		}
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, core.Errorf(core.CodeValidationError, "schedule %q: %v", spec, err)
	}
	return inZone{s, loc}, nil
}

// inZone evaluates a cron schedule in a time zone.
type inZone struct {
	s   cron.Schedule
	loc *time.Location
}

func (z inZone) Next(t time.Time) time.Time { return z.s.Next(t.In(z.loc)) }

// Check checks schedules as the engine's Start does (a valid, unique name,
// a known agent, a valid session id, a spec and zone that parse) and
// returns them parsed; agentKnown says whether an agent id exists. A
// problem is INVALID_CONFIG.
func Check(schedules []Schedule, agentKnown func(id string) bool) ([]Schedule, error) {
	out := slices.Clone(schedules)
	seen := map[string]bool{}
	for i := range out {
		s := &out[i]
		switch {
		case s.Name == "" || !core.ValidID(s.Name):
			return nil, core.Errorf(core.CodeInvalidConfig, "schedule %d: a name of letters, digits, '_', '-' or '.' is required", i)
		case seen[s.Name]:
			return nil, core.Errorf(core.CodeInvalidConfig, "schedule %q is defined twice", s.Name)
		case !agentKnown(s.AgentID):
			return nil, core.Errorf(core.CodeInvalidConfig, "schedule %q: agent %q not found", s.Name, s.AgentID)
		case s.Session != "" && !core.ValidID(s.Session):
			return nil, core.Errorf(core.CodeInvalidConfig, "schedule %q: session %q is not a valid id", s.Name, s.Session)
		case s.RunAs != nil && s.RunAs.Subject == "":
			return nil, core.Errorf(core.CodeInvalidConfig, "schedule %q: runAs needs a subject", s.Name)
		}
		seen[s.Name] = true
		when, err := Parse(s.Spec, s.TimeZone)
		if err != nil {
			return nil, core.Errorf(core.CodeInvalidConfig, "%s", core.AsBreadError(err, core.CodeInvalidConfig).Message)
		}
		s.when = when
	}
	return out, nil
}

// Infos lists schedules checked by Check by name, with their next tick
// after now (zero for a schedule Check did not parse).
func Infos(schedules []Schedule, now time.Time) []core.ScheduleInfo {
	out := make([]core.ScheduleInfo, 0, len(schedules))
	for _, s := range schedules {
		info := core.ScheduleInfo{Name: s.Name, Spec: s.Spec, TimeZone: s.TimeZone, AgentID: s.AgentID, Session: s.Session, Owner: core.OwnerKey(s.RunAs)}
		if s.when != nil {
			info.Next = s.when.Next(now).UTC()
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b core.ScheduleInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// RunID is the run id of schedule name's tick at t: derived from the tick,
// so a tick handed out twice (a retried job, a leader failover) finds its
// run already there and starts nothing, and a client can find a tick's run
// without listing.
func RunID(name string, tick time.Time) string {
	return TickRunID(core.ScheduleTickKey(name, tick))
}

// TickRunID is the run id of the tick whose job key (core.ScheduleTickKey)
// is key; RunID(name, t) is TickRunID(core.ScheduleTickKey(name, t)).
func TickRunID(key string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("bread:schedule:"+key)).String()
}
