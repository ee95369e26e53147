package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// defaultJudge is the llmJudge model when neither BREAD_EVAL_MODEL nor the
// scorer names one.
const defaultJudge = "openai/gpt-4o-mini"

// cmdEval runs the project's eval suites (those under path, if given),
// printing progress as cases finish and a summary table, and exits non-zero
// when any case fails. When the project's store keeps an eval history
// (core.EvalRunStore), each agent's run is saved there, as POST
// /agents/{id}/evals saves it, so the console charts CI's runs too.
func cmdEval(ctx context.Context, a *app, args []string) int {
	if len(args) > 1 {
		return a.usageError("eval", fmt.Errorf("at most one path"))
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	suites := a.project.Evals
	if len(args) == 1 {
		scope, err := filepath.Abs(args[0])
		if err != nil {
			return a.fail(err)
		}
		var kept []*project.EvalSuite
		for _, s := range suites {
			if full := filepath.Join(a.project.Dir, s.File); full == scope || strings.HasPrefix(full, scope+string(filepath.Separator)) {
				kept = append(kept, s)
			}
		}
		suites = kept
	}
	if len(suites) == 0 {
		fmt.Fprintln(a.stderr, "bread: no eval suites found (agents/<id>/evals/*.eval.yaml)")
		return ExitFailure
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))
	ev := a.evaluator(inst)

	type row struct {
		suite, typ    string
		passed, total int
	}
	var rows []row
	failed := 0
	start := time.Now()
	byAgent := map[string][]core.EvalResult{}
	var agents []string
	for _, s := range suites {
		r := row{suite: s.File, typ: s.Type, total: len(s.Cases)}
		for _, c := range s.Cases {
			res := ev.Case(ctx, s, c)
			if _, ok := byAgent[s.AgentID]; !ok {
				agents = append(agents, s.AgentID)
			}
			byAgent[s.AgentID] = append(byAgent[s.AgentID], res)
			mark := "✓"
			if !res.Passed {
				mark = "✗"
				failed++
			} else {
				r.passed++
			}
			fmt.Fprintf(a.stderr, "%s %s › %s (%s)\n", mark, s.File, c.Name, (time.Duration(res.DurationMs) * time.Millisecond).Round(time.Millisecond))
			for _, p := range res.Problems {
				fmt.Fprintln(a.stderr, "    "+p)
			}
			if ctx.Err() != nil {
				return ExitFailure
			}
		}
		rows = append(rows, r)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tTYPE\tPASSED\tTOTAL")
	passed, total := 0, 0
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", r.suite, r.typ, r.passed, r.total)
		passed += r.passed
		total += r.total
	}
	fmt.Fprintf(tw, "all\t\t%d\t%d\n", passed, total)
	_ = tw.Flush()
	if st := inst.Storage(); st.Has(core.StoreEvalRuns) {
		for _, id := range agents {
			run := core.NewEvalRun(uuid.NewString(), id, start, byAgent[id])
			if err := st.SaveEvalRun(ctx, run); err != nil {
				fmt.Fprintf(a.stderr, "bread: the eval run of %s was not kept in the eval history: %v\n", id, core.Sanitize(err))
				continue
			}
			fmt.Fprintf(a.stderr, "kept in the eval history: %s, %d/%d passed (eval run %s)\n", id, run.Passed, run.Total, run.ID)
		}
	}
	if failed > 0 {
		return ExitFailure
	}
	return ExitOK
}

// evaluator runs eval cases on inst: custom scorers in the project
// directory, llmJudge scorers with the project's providers.
func (a *app) evaluator(inst *engine.Instance) project.Evaluator {
	j := evalJudge{a: a}
	return project.Evaluator{
		Dir: a.project.Dir,
		Run: func(ctx context.Context, agentID string, input any, opts core.RunOptions) (any, error) {
			res, err := inst.RunSync(ctx, agentID, input, opts)
			if err != nil {
				return nil, err
			}
			return res.Output, nil
		},
		Judge: j.llm,
	}
}

// evals is the server's POST /agents/{id}/evals: every case of the
// agent's suites.
func (a *app) evals(inst *engine.Instance) server.EvalFunc {
	return func(ctx context.Context, agentID string) ([]core.EvalResult, error) {
		var suites []*project.EvalSuite
		for _, s := range a.project.Evals {
			if s.AgentID == agentID {
				suites = append(suites, s)
			}
		}
		if len(suites) == 0 {
			return nil, &core.BreadError{Code: server.CodeEvalsNotFound, Message: "agent " + strconv.Quote(agentID) + " has no eval suite (agents/<id>/evals/*.eval.yaml)"}
		}
		return a.evaluator(inst).Suites(ctx, suites, nil), nil
	}
}

// evalJudge scores llmJudge scorers.
type evalJudge struct {
	a *app
}

// judgeModel resolves the judge: BREAD_EVAL_MODEL, then the scorer's
// model, then the default. Models are "provider/model" or
// "provider:model".
func (j evalJudge) judgeModel(sc project.Scorer) core.ModelRef {
	name := defaultJudge
	if v, ok := j.a.lookup("BREAD_EVAL_MODEL"); ok && v != "" {
		name = v
	} else if sc.Model != "" {
		name = sc.Model
	}
	provider, model, ok := strings.Cut(name, "/")
	if !ok {
		provider, model, _ = strings.Cut(name, ":")
	}
	return core.ModelRef{Provider: provider, Model: model}
}

var verdictSchema = json.RawMessage(`{"type":"object","properties":{"pass":{"type":"boolean"},"reason":{"type":"string"}},"required":["pass","reason"],"additionalProperties":false}`)

func (j evalJudge) llm(ctx context.Context, sc project.Scorer, out string) (bool, string) {
	ref := j.judgeModel(sc)
	providers, err := j.a.providers()
	if err != nil {
		return false, "llmJudge: " + err.Error()
	}
	m, err := core.ResolveModel(ref, providers)
	if err != nil {
		return false, "llmJudge: " + core.Sanitize(err).Error()
	}
	req := core.ModelRequest{
		System:   "You judge an AI agent's output. Answer with JSON {\"pass\": boolean, \"reason\": string}.",
		Messages: []core.Message{{Role: core.RoleUser, Parts: []core.Part{core.TextPart("Criterion: " + sc.Prompt + "\n\nOutput:\n" + out)}}},
		Output:   &core.OutputSpec{Name: "verdict", Schema: verdictSchema},
	}
	var b strings.Builder
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return false, "llmJudge (" + ref.String() + "): " + core.Sanitize(err).Error()
		}
		if ev.Type == core.EventTextDelta {
			b.WriteString(ev.Delta)
		}
	}
	var v struct {
		Pass   bool   `json:"pass"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(b.String())), &v); err != nil {
		return false, "llmJudge (" + ref.String() + "): the judge did not answer JSON"
	}
	return v.Pass, "llmJudge (" + ref.String() + "): " + v.Reason
}
