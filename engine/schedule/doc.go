// Package schedule is the timetable of agent runs (bread.yaml
// `schedules:`): a Schedule's spec parsed and checked (Parse, Check), the
// schedules as a job queue fires them and their next ticks (Timetable),
// the run id each tick derives (RunID), and the work of a tick, which
// starts a background run through a Starter.
//
// The engine builds a Timetable at Start from Config.Schedules and hands
// it its own Starter; `bread build` and `bread schedules` call Check and
// Infos without an engine. If you run agents, set Config.Schedules and
// read Instance.Schedules; you do not need this package. It depends on
// package core alone, never on the engine.
package schedule
