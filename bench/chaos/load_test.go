package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// tracker is what the clients saw, for the checker and the report.
type tracker struct {
	mu       sync.Mutex
	started  map[string]string // run id → kind, as a client learned it
	outcomes map[string]int    // client-side outcomes by name
	answers  map[string]*answer
	tails    []*tail
}

// answer is the bot's view of one checkpoint.
type answer struct {
	runID    string
	accepted int  // resumes that started (human:resumed first)
	ended    bool // a resume stream reached the run's end
	gone     bool // CHECKPOINT_NOT_FOUND before any accepted resume
}

// tail is one passive follower of a run, reconnecting with Last-Event-ID.
type tail struct {
	runID      string
	startedAt  time.Time
	endedAt    time.Time
	reconnects int
}

func newTracker() *tracker {
	return &tracker{started: map[string]string{}, outcomes: map[string]int{}, answers: map[string]*answer{}}
}

func (tr *tracker) count(name string) {
	tr.mu.Lock()
	tr.outcomes[name]++
	tr.mu.Unlock()
}

func (tr *tracker) saw(runID, kind string) {
	tr.mu.Lock()
	if _, ok := tr.started[runID]; !ok {
		tr.started[runID] = kind
	}
	tr.mu.Unlock()
}

// load drives the cluster: workers pick a kind of request at random; every
// goroutine it starts is waited for by wg.
type load struct {
	c    *cluster
	tr   *tracker
	seed uint64
	wg   sync.WaitGroup // tails
	bots sync.WaitGroup // resumes
	// settle outlives the load: the bot keeps answering and tails keep
	// following until the checker starts.
	settle context.Context
}

// pick returns the base URL of a replica that is up, other than avoid if
// possible.
func (l *load) pick(rng *rand.Rand, avoid string) string {
	var up []string
	for _, r := range l.c.reps {
		if r.up() && r.base != avoid {
			up = append(up, r.base)
		}
	}
	if len(up) == 0 {
		return l.c.reps[rng.IntN(len(l.c.reps))].base
	}
	return up[rng.IntN(len(up))]
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, ResponseHeaderTimeout: 20 * time.Second}}

func (l *load) worker(ctx context.Context, i int) {
	rng := rand.New(rand.NewPCG(l.seed, uint64(i)+1))
	for n := 0; ctx.Err() == nil; n++ {
		switch k := rng.IntN(100); {
		case k < 20:
			l.run(ctx, rng, "stream", "/agents/streamer/run", `{"input":"hi"}`)
		case k < 30:
			l.run(ctx, rng, "pipeline", "/pipelines/fan/run", `{"input":"hi"}`)
		case k < 40:
			l.run(ctx, rng, "supervisor", "/agents/boss/run", `{"input":"hi"}`)
		case k < 55:
			agent := "retrier"
			if rng.IntN(2) == 0 {
				agent = "failer"
			}
			l.background(ctx, rng, agent)
		case k < 75:
			l.run(ctx, rng, "asker", "/agents/asker/run", `{"input":"publish"}`)
		default:
			p := policies[rng.IntN(len(policies))]
			body := fmt.Sprintf(`{"input":"again","session":{"id":"chaos-%s-%d"}}`, p, rng.IntN(2))
			l.run(ctx, rng, "chat_"+p, "/agents/chat_"+p+"/run", body)
		}
		// A short think time keeps the load steady rather than flooding.
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(50+rng.IntN(200)) * time.Millisecond):
		}
	}
}

// frames reads CrumbFrame lines; heartbeats (empty lines) refresh last.
type frames struct {
	sc   *bufio.Scanner
	body io.Closer
}

func openStream(ctx context.Context, method, url, body string, header map[string]string) (*frames, *http.Response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &frames{sc: sc, body: resp.Body}, resp, nil
}

func (f *frames) next() (core.Frame, bool) {
	for f.sc.Scan() {
		if len(f.sc.Bytes()) == 0 {
			continue
		}
		fr, err := protocol.DecodeCrumbFrame(f.sc.Bytes())
		if err != nil {
			return core.Frame{}, false
		}
		return fr, true
	}
	return core.Frame{}, false
}

func terminal(c core.Crumb) bool {
	switch c.CrumbType() {
	case core.TypeAgentRunEnd, core.TypeAgentError:
		return true
	}
	return false
}

// run streams one foreground run, answers the humans it asks, and, when
// its stream is cut before the end, follows it from another replica.
func (l *load) run(ctx context.Context, rng *rand.Rand, kind, path, body string) {
	base := l.pick(rng, "")
	f, resp, err := openStream(ctx, "POST", base+path, body, nil)
	if err != nil {
		l.tr.count(kind + ": connection failed")
		return
	}
	defer f.body.Close()
	if resp.StatusCode != http.StatusOK {
		l.tr.count(kind + ": HTTP " + strconv.Itoa(resp.StatusCode))
		return
	}
	top, ended := "", false
	var last core.Crumb
	for {
		fr, ok := f.next()
		if !ok {
			break
		}
		// The server closes a stream after its end: what ended it is its
		// last frame (a composition's last run's end, or a suspension).
		ended = false
		b := fr.Crumb.Base()
		if top == "" && b.RunID != "" {
			top = b.RunID
			l.tr.saw(top, kind)
			if rng.IntN(3) == 0 {
				l.follow(top, l.pick(rng, base), rng.Uint64())
			}
		}
		if b.RunID != top && b.RunID != "" {
			l.tr.saw(b.RunID, kind+"/inner")
		}
		switch c := fr.Crumb.(type) {
		case *core.HumanRequired:
			l.ask(c, rng.Uint64())
			ended = true
		case *core.AgentError, *core.AgentRunEnd:
			ended = true
		}
		last = fr.Crumb
	}
	if ended {
		switch c := last.(type) {
		case *core.HumanRequired:
			l.tr.count(kind + ": suspended")
		case *core.AgentError:
			l.tr.count(kind + ": " + c.Error.Code)
		default:
			l.tr.count(kind + ": completed")
		}
		return
	}
	if top == "" {
		l.tr.count(kind + ": no run")
		return
	}
	// Cut (its replica died or drained): another replica follows it.
	l.tr.count(kind + ": cut")
	l.follow(top, l.pick(rng, base), rng.Uint64())
}

// background starts a detached run of agent.
func (l *load) background(ctx context.Context, rng *rand.Rand, agent string) {
	req, _ := http.NewRequestWithContext(ctx, "POST", l.pick(rng, "")+"/agents/"+agent+"/run", strings.NewReader(`{"input":"job"}`))
	req.Header.Set("Prefer", "respond-async")
	resp, err := client.Do(req)
	if err != nil {
		l.tr.count("background: connection failed")
		return
	}
	defer resp.Body.Close()
	var d core.Detached
	if resp.StatusCode != http.StatusAccepted || json.NewDecoder(resp.Body).Decode(&d) != nil {
		l.tr.count("background: HTTP " + strconv.Itoa(resp.StatusCode))
		return
	}
	l.tr.saw(d.RunID, "background:"+agent)
	l.tr.count("background: accepted")
	if rng.IntN(3) == 0 {
		l.follow(d.RunID, l.pick(rng, ""), rng.Uint64())
	}
}

// follow tails runID passively until its end, reconnecting with
// Last-Event-ID on another replica whenever the stream is cut or goes
// silent for three heartbeats.
func (l *load) follow(runID, base string, seed uint64) {
	t := &tail{runID: runID, startedAt: time.Now()}
	l.tr.mu.Lock()
	l.tr.tails = append(l.tr.tails, t)
	l.tr.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		rng := rand.New(rand.NewPCG(seed, 7))
		last := int64(0)
		for l.settle.Err() == nil {
			ctx, cancel := context.WithCancel(l.settle)
			// A watchdog cuts a stream that goes silent (its replica
			// paused): heartbeats keep a live one busy. It starts with the
			// request: a replica paused before it answers is as silent.
			alive := make(chan struct{}, 1)
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-alive:
					case <-time.After(3 * heartbeat):
						cancel()
						return
					}
				}
			}()
			f, resp, err := openStream(ctx, "GET", base+"/runs/"+runID+"/stream", "", map[string]string{"Last-Event-ID": strconv.FormatInt(last, 10)})
			if err == nil && resp.StatusCode == 200 {
				for f.sc.Scan() {
					select {
					case alive <- struct{}{}:
					default:
					}
					if len(f.sc.Bytes()) == 0 {
						continue
					}
					fr, err := protocol.DecodeCrumbFrame(f.sc.Bytes())
					if err != nil {
						break
					}
					last = max(last, fr.Seq)
					if hr, ok := fr.Crumb.(*core.HumanRequired); ok && fr.Crumb.Base().RunID == runID {
						l.ask(hr, rng.Uint64())
					}
					if terminal(fr.Crumb) && fr.Crumb.Base().RunID == runID {
						l.tr.mu.Lock()
						t.endedAt = time.Now()
						l.tr.mu.Unlock()
						cancel()
						f.body.Close()
						return
					}
				}
				f.body.Close()
			} else if err == nil {
				resp.Body.Close()
			}
			cancel()
			l.tr.mu.Lock()
			t.reconnects++
			l.tr.mu.Unlock()
			select {
			case <-l.settle.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			base = l.pick(rng, base)
		}
	}()
}

// ask answers a checkpoint once per checkpoint (whoever sees it first): at
// once, after a delay, or twice at the same time.
func (l *load) ask(hr *core.HumanRequired, seed uint64) {
	l.tr.mu.Lock()
	if _, ok := l.tr.answers[hr.CheckpointID]; ok {
		l.tr.mu.Unlock()
		return
	}
	a := &answer{runID: hr.RunID}
	l.tr.answers[hr.CheckpointID] = a
	l.tr.mu.Unlock()
	rng := rand.New(rand.NewPCG(seed, 11))
	copies, delay := 1, time.Duration(0)
	switch rng.IntN(4) {
	case 0:
		copies = 2
	case 1:
		delay = time.Duration(500+rng.IntN(3000)) * time.Millisecond
	}
	for c := range copies {
		l.bots.Add(1)
		go func() {
			defer l.bots.Done()
			l.resume(hr.CheckpointID, a, delay, rng.Uint64()+uint64(c))
		}()
	}
}

// resume POSTs the answer until a resume reaches the run's end or the
// checkpoint is gone; a refused (claimed) or cut resume is retried, as a
// client would.
func (l *load) resume(cpID string, a *answer, delay time.Duration, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 13))
	select {
	case <-l.settle.Done():
		return
	case <-time.After(delay):
	}
	for l.settle.Err() == nil {
		base := l.pick(rng, "")
		f, _, err := openStream(l.settle, "POST", base+"/resume/"+cpID, `{"response":{"ok":true}}`, nil)
		if err == nil {
			done := l.readResume(f, base, cpID, a)
			f.body.Close()
			if done {
				return
			}
		}
		select {
		case <-l.settle.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// waitsForRetry reads whether run runID's record waits on checkpoint cpID
// again (suspended on it after a lost resume).
func (l *load) waitsForRetry(base, runID, cpID string) bool {
	req, err := http.NewRequestWithContext(l.settle, "GET", base+"/runs/"+runID, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var rec core.RunRecord
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&rec) != nil {
		return false
	}
	return rec.Status == core.RunSuspended && rec.CheckpointID == cpID
}

// readResume reads one resume's stream; done when nothing is left to do.
// A resume that ends with RUN_LOST while its run waits for a retry on the
// same checkpoint (its replica was paused past its lease, another replica's
// sweeper put the run back to waiting, and the paused resume, fenced,
// stopped) is retried, as the run's record tells a client to: "waiting
// for a retry" is a suspended record, "ended" a final one.
func (l *load) readResume(f *frames, base, cpID string, a *answer) (done bool) {
	fr, ok := f.next()
	if !ok {
		return false
	}
	if ae, isErr := fr.Crumb.(*core.AgentError); isErr {
		switch ae.Error.Code {
		case core.CodeCheckpointNotFound:
			l.tr.mu.Lock()
			if a.accepted == 0 {
				a.gone = true
			}
			l.tr.mu.Unlock()
			l.tr.count("answer: CHECKPOINT_NOT_FOUND")
			return true
		case core.CodeCheckpointClaimed:
			l.tr.count("answer: CHECKPOINT_CLAIMED")
			return false
		}
		l.tr.count("answer: " + ae.Error.Code)
		return false
	}
	if fr.Crumb.CrumbType() != core.TypeHumanResumed {
		return false
	}
	l.tr.mu.Lock()
	a.accepted++
	l.tr.mu.Unlock()
	l.tr.count("answer: accepted")
	for {
		fr, ok := f.next()
		if !ok {
			l.tr.count("answer: cut")
			return false
		}
		if terminal(fr.Crumb) && fr.Crumb.Base().RunID == a.runID {
			if ae, ok := fr.Crumb.(*core.AgentError); ok && ae.Error.Code == core.CodeRunLost && l.waitsForRetry(base, a.runID, cpID) {
				l.tr.count("answer: resume lost, retried")
				return false
			}
			l.tr.mu.Lock()
			a.ended = true
			l.tr.mu.Unlock()
			return true
		}
		if hr, ok := fr.Crumb.(*core.HumanRequired); ok && hr.RunID == a.runID {
			return true // asks again: a new checkpoint, answered on its own
		}
	}
}
