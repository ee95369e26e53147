package examplestest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// tab is one headless Chromium tab for a console test: its steps, each
// bounded, and the errors the page logged.
type tab struct {
	t     *testing.T
	ctx   context.Context
	shots string
	mu    sync.Mutex
	errs  []string
}

// openTab starts Chromium for t, closed when the test ends.
func openTab(t *testing.T, chrome string) *tab {
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				tb.errs = append(tb.errs, "console."+string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			tb.errs = append(tb.errs, "exception: "+msg)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				tb.errs = append(tb.errs, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	tb.ctx = ctx
	tb.shots = os.Getenv("BREAD_CONSOLE_SCREENSHOTS")
	if tb.shots == "" {
		tb.shots = filepath.Join(os.TempDir(), "bread-console-screenshots")
	}
	if err := os.MkdirAll(tb.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return tb
}

// run does one step's actions within two minutes, failing the test with
// the page's text when one fails.
func (tb *tab) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		text, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		_ = chromedp.Do(tb.ctx, tb.shot("failed-"+strings.ReplaceAll(step, " ", "-")))
		tb.t.Fatalf("%s: %v\npage:\n%s", step, err, text)
	}
}

// until waits for a JavaScript condition, naming it when it times out.
func (tb *tab) until(what, expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(40*time.Second))(ctx, tg); err != nil {
			return fmt.Errorf("waiting for %s (%s): %w", what, expr, err)
		}
		return nil
	})
}

// js evaluates expr for its effects.
func (tb *tab) js(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void](expr)(ctx, tg)
		var undef error = chromedp.ErrJSUndefined
		if errors.Is(err, undef) {
			return nil
		}
		return err
	})
}

// value evaluates expr to a string.
func (tb *tab) value(expr string) string {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		tb.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// shot saves the page as name.png.
func (tb *tab) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tb.shots, name+".png"), png, 0o644)
	})
}

// noErrors fails the test for every error the page logged.
func (tb *tab) noErrors() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.errs) > 0 {
		tb.t.Errorf("the console logged errors:\n%s", strings.Join(tb.errs, "\n"))
	}
}

// compareProject is hello-world with two agents of its own. tuned answers
// its first run after a tool call and its second with other words and
// tokens (its transcript plays in sequence): two runs to compare. flaky
// greets on its first eval run and not on its second: an eval history
// whose pass rate moves.
func compareProject(t *testing.T) string {
	dir := copyExample(t, "hello-world")
	files := map[string]string{
		"bread.yaml":              "entrypoints: [echo, tuned, flaky]\nstore: {type: sqlite, path: ./bread.db}\n",
		"agents/tuned/agent.yaml": "description: Explains bread, better each time.\nmodel: {provider: replay, model: transcripts/tuned.jsonl#sequence}\ninputSchema: {type: string}\n",
		"agents/tuned/prompt.md":  "Explain.",
		"agents/tuned/tools/lookup.yaml": "description: Look a word up.\ntype: command\ncommand: [cat]\ntimeout: 10s\n" +
			"inputSchema: {type: object, properties: {q: {type: string}}, required: [q]}\n",
		"transcripts/tuned.jsonl": `{"call":0,"type":"tool-call","toolCallId":"c1","toolName":"tool_lookup","input":{"q":"yeast"}}
{"call":0,"type":"finish","finishReason":"tool-calls","usage":{"inputTokens":20,"outputTokens":6,"totalTokens":26}}
{"call":1,"type":"text-delta","delta":"Sourdough rises because yeast makes gas. It takes hours."}
{"call":1,"type":"finish","finishReason":"stop","usage":{"inputTokens":40,"outputTokens":12,"totalTokens":52}}
{"call":2,"type":"text-delta","delta":"Sourdough rises because wild yeast and bacteria make gas. Keep it warm."}
{"call":2,"type":"finish","finishReason":"stop","usage":{"inputTokens":30,"outputTokens":15,"totalTokens":45}}
`,
		"agents/flaky/agent.yaml":             "description: Greets, or not.\nmodel: {provider: replay, model: transcripts/flaky.jsonl#sequence}\ninputSchema: {type: string}\n",
		"agents/flaky/prompt.md":              "Greet.",
		"agents/flaky/evals/greets.eval.yaml": "cases:\n  - name: greets back\n    input: hi\n    scorers:\n      - {type: contains, expected: Hello}\n",
		"transcripts/flaky.jsonl": `{"call":0,"type":"text-delta","delta":"Hello there."}
{"call":0,"type":"finish","finishReason":"stop"}
{"call":1,"type":"text-delta","delta":"Go away."}
{"call":1,"type":"finish","finishReason":"stop"}
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestConsoleCompareAndEvalHistory drives the console's two views beside
// the run: two runs of one agent compared side by side (picked on their
// session's page, kept by the URL across a reload, reached from a run's
// page, driven with the keyboard, at 360 px), and an agent's eval history
// (a pass-rate chart over time, a past run's cases marked where they
// changed). The page must log no error. Screenshots: compare-*.png and
// eval-*.png beside TestConsoleInBrowser's.
func TestConsoleCompareAndEvalHistory(t *testing.T) {
	chrome := needChromium(t)
	t.Parallel()
	base := startDev(t, compareProject(t), nil).URL
	tb := openTab(t, chrome)
	const badge = `document.querySelector('.status .badge').textContent`
	// rowOf is the text of the comparison's row named label.
	rowOf := func(label string) string {
		return `[...document.querySelectorAll('table.cmp tbody tr')].find(r => r.querySelector('th').textContent.includes('` + label + `'))`
	}

	tb.run("two runs of tuned",
		chromedp.Navigate(base+"/#/agents/tuned"),
		chromedp.WaitVisible(chromedp.CSS(`form.schema textarea`)),
		chromedp.SendKeys(chromedp.CSS(`form.schema textarea`), "why does sourdough rise?"),
		chromedp.Click(chromedp.CSS(`form.schema button[type=submit]`)),
		tb.until("the first answer", badge+` === 'completed' && document.querySelector('.chat').innerText.includes('It takes hours.')`),
		tb.until("the composer", `document.querySelector('section.composer form.schema textarea') !== null`),
		chromedp.SendKeys(chromedp.CSS(`section.composer form.schema textarea`), "and better?"),
		chromedp.Click(chromedp.CSS(`section.composer form.schema button[type=submit]`)),
		tb.until("the second answer", `document.querySelectorAll('.chat .turn').length === 2 && `+badge+` === 'completed' && document.querySelector('.chat').innerText.includes('Keep it warm.')`))

	tb.run("pick both on the session's page",
		chromedp.Click(chromedp.CSS(`main a[href^="#/sessions/"]`)),
		tb.until("the session's runs", `document.querySelectorAll('.usage tbody tr').length === 2`),
		tb.until("compare disabled before two are picked", `[...document.querySelectorAll('.usage button')].find(b => b.textContent === 'Compare the two picked runs').disabled`),
		chromedp.Click(chromedp.CSS(`.usage input[aria-label="Pick run 1 to compare"]`)),
		chromedp.Click(chromedp.CSS(`.usage input[aria-label="Pick run 2 to compare"]`)),
		tb.js(`[...document.querySelectorAll('.usage button')].find(b => b.textContent === 'Compare the two picked runs').click()`),
		tb.until("the comparison", `location.hash.startsWith('#/compare/') && document.querySelector('table.cmp') !== null && document.querySelector('.diff') !== null`),
		// The first run called a tool and the model twice; the second
		// answered at once, in other words, with other tokens.
		tb.until("the differences marked", rowOf("Output")+`.classList.contains('differs') && `+rowOf("Input")+`.classList.contains('differs') &&
			`+rowOf("Tool calls")+`.classList.contains('differs') && `+rowOf("Model calls")+`.classList.contains('differs') && `+rowOf("Tokens")+`.classList.contains('differs') &&
			!`+rowOf("Agent")+`.classList.contains('differs') && !`+rowOf("Status")+`.classList.contains('differs') && `+rowOf("Status")+`.innerText.includes('completed')`),
		tb.until("the figures", rowOf("Tokens")+`.innerText.includes('78 tokens (60 in, 18 out)') && `+rowOf("Tokens")+`.innerText.includes('45 tokens (30 in, 15 out)') && `+rowOf("Model calls")+`.innerText.includes('2') && `+rowOf("Tool calls")+`.innerText.includes('1: tool_lookup')`),
		tb.until("the output's words diffed", `[...document.querySelectorAll('.diff ins')].some(e => e.textContent.trim() === 'wild') && [...document.querySelectorAll('.diff del')].some(e => e.textContent.trim() === 'It takes hours.') && [...document.querySelectorAll('.diff ins')].some(e => e.textContent.trim() === 'Keep it warm.')`),
		tb.until("the tool call only in A", `[...document.querySelectorAll('.diff-list li.del')].some(li => li.textContent.includes('tool_lookup {"q":"yeast"}'))`),
		tb.until("the crumb sequences", `[...document.querySelectorAll('.diff-list li.del')].some(li => li.textContent.includes('tool:result'))`),
		tb.shot("compare"))
	hash := tb.value(`location.hash`)
	ids := strings.Split(strings.TrimPrefix(hash, "#/compare/"), "/")
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("the comparison's URL: %q", hash)
	}
	first, second := ids[0], ids[1]

	tb.run("a reload keeps the comparison",
		chromedp.Reload(),
		tb.until("the same comparison", `location.hash === '`+hash+`' && document.querySelector('#cmp-a').value === '`+first+`' && `+rowOf("Output")+` && `+rowOf("Output")+`.classList.contains('differs') && document.querySelector('.diff ins') !== null`))

	tb.run("swapped with the keyboard",
		chromedp.Focus(chromedp.CSS(`#cmp-a`)),
		tb.js(`document.querySelector('#cmp-a').select()`),
		chromedp.SendKeys(chromedp.CSS(`#cmp-a`), second),
		chromedp.Focus(chromedp.CSS(`#cmp-b`)),
		tb.js(`document.querySelector('#cmp-b').select()`),
		chromedp.SendKeys(chromedp.CSS(`#cmp-b`), first+"\r"),
		tb.until("B and A swapped", `location.hash === '#/compare/`+second+`/`+first+`' && `+rowOf("Tokens")+` && `+rowOf("Tokens")+`.children[1].innerText.includes('45 tokens') && [...document.querySelectorAll('.diff del')].some(e => e.textContent.trim() === 'wild')`))

	tb.run("from a run's page",
		chromedp.Navigate(base+"/#/runs/"+first),
		tb.until("the run", badge+` === 'completed'`),
		chromedp.Click(chromedp.CSS(`.status a[href^="#/compare/"]`)),
		tb.until("its session's other run", `document.querySelector('a[href="#/compare/`+first+`/`+second+`"]') !== null`),
		chromedp.Focus(chromedp.CSS(`a[href="#/compare/`+first+`/`+second+`"]`)),
		chromedp.KeyEvent("\r"),
		tb.until("the comparison", `location.hash === '`+hash+`' && document.querySelector('table.cmp') !== null && document.querySelector('.diff') !== null`))

	tb.run("the comparison at 360 px",
		chromedp.EmulateViewport(360, 780),
		tb.until("no horizontal scroll", `document.documentElement.scrollWidth <= 360`),
		tb.shot("compare-narrow"),
		chromedp.EmulateViewport(1280, 900))

	tb.run("two eval runs of flaky",
		chromedp.Navigate(base+"/#/evals/flaky"),
		tb.until("no history yet", `document.body.innerText.includes('No past eval runs.')`),
		chromedp.Click(chromedp.CSS(`button[aria-label="Run the evals of flaky"]`)),
		tb.until("the first run, kept", `document.body.innerText.includes('1 / 1 passed') && document.querySelectorAll('.eval-history tbody tr').length === 1`),
		chromedp.Click(chromedp.CSS(`button[aria-label="Run the evals of flaky"]`)),
		tb.until("the second run, kept", `document.body.innerText.includes('0 / 1 passed') && document.querySelectorAll('.eval-history tbody tr').length === 2`),
		tb.until("the pass rate charted over time", `document.querySelectorAll('.eval-history svg.chart a .dot').length === 2 && document.querySelectorAll('.eval-history svg.chart .dot.failed').length === 1 && document.querySelector('.eval-history svg.chart polyline') !== null`),
		tb.shot("eval-history"))

	tb.run("a past run's cases, from the chart with the keyboard",
		chromedp.Focus(chromedp.CSS(`.eval-history svg.chart a:last-of-type`)),
		chromedp.KeyEvent("\r"),
		tb.until("its cases, against the run before", `location.hash.startsWith('#/evals/flaky/') && document.body.innerText.includes('0 / 1 passed') && document.querySelector('tr.differs td.fail') !== null && document.querySelector('tr.differs').innerText.includes('was pass') && document.body.innerText.includes('contains: "Hello" not in "Go away."')`),
		tb.shot("eval-run"),
		chromedp.Reload(),
		tb.until("the same run after a reload", `document.querySelector('tr.differs td.fail') !== null && document.body.innerText.includes('Eval run of flaky')`),
		chromedp.EmulateViewport(360, 780),
		tb.until("no horizontal scroll at 360 px", `document.documentElement.scrollWidth <= 360`),
		chromedp.EmulateViewport(1280, 900),
		chromedp.Click(chromedp.CSS(`main a[href="#/evals/flaky"]`)),
		tb.until("back to the history", `document.querySelectorAll('.eval-history tbody tr').length === 2`))

	// A chief delegating to two supervisors at once, each delegating in
	// turn: the second supervisor's delegation starts first. The slots
	// alone would hang it under the oldest open delegation, the first
	// supervisor's; its start's parentRunId puts it under its own.
	tb.run("the waterfall nests a run under the parent its start names",
		chromedp.Navigate(base+"/"),
		tb.until("the console", `document.querySelectorAll('article.card').length === 3`),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			got, err := chromedp.Evaluate[string](`(async () => {
			const { Waterfall } = await import('/console/waterfall.js');
			const w = new Waterfall();
			const ts = Date.now();
			const c = (type, runId, agentId, extra) => w.add(Object.assign({ type, runId, agentId, timestamp: ts }, extra));
			c('agent:run:start', 'top', 'chief', { input: 'go' });
			c('tool:call', 'top', 'chief', { toolCallId: 'd1', toolName: 'core_delegate', args: {} });
			c('tool:call', 'top', 'chief', { toolCallId: 'd2', toolName: 'core_delegate', args: {} });
			c('agent:run:start', 's1', 'boss', { input: 'a', parentRunId: 'top' });
			c('tool:call', 's1', 'boss', { toolCallId: 't1', toolName: 'core_delegate', args: {} });
			c('agent:run:start', 's2', 'boss', { input: 'b', parentRunId: 'top' });
			c('tool:call', 's2', 'boss', { toolCallId: 't2', toolName: 'core_delegate', args: {} });
			c('agent:run:start', 'w2', 'worker', { input: 'for s2', parentRunId: 's2' });
			c('agent:run:start', 'w1', 'worker', { input: 'for s1', parentRunId: 's1' });
			const under = (run, parentRun, tool) => w.runs.get(run).run.parent === w.runs.get(parentRun).tools.get(tool);
			const ok = under('s1', 'top', 'd1') && under('s2', 'top', 'd2') && under('w2', 's2', 't2') && under('w1', 's1', 't1');
			w.dispose();
			const where = (run) => { const p = w.runs.get(run).run.parent; return p ? p.kind + ' ' + (p.toolCallId || p.runId || p.label) : 'top'; };
			return ok ? 'nested by parentRunId' : 'w2 under ' + where('w2') + ', w1 under ' + where('w1');
		})()`, func(p *runtime.EvaluateParams) { yes := true; p.AwaitPromise = &yes })(ctx, tg)
			if err == nil && got != "nested by parentRunId" {
				err = fmt.Errorf("the delegations' runs: %s", got)
			}
			return err
		}))

	tb.noErrors()
}
