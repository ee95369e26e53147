package a2a

// WithoutTaskCache makes every read of a task replay its whole crumb log,
// as before the task cache: the benchmark's baseline.
func WithoutTaskCache(p *Plugin) { p.tasks = nil }
