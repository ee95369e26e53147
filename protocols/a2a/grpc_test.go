package a2a_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine"
	a2ap "github.com/breadai/bread/protocols/a2a"
	"github.com/breadai/bread/server"
)

// grpcStack serves the plugin, its gRPC binding on, with the bread
// server's own listener (server.Serve: h2c beside HTTP/1.1).
type grpcStack struct {
	in   *engine.Instance
	base string // http://127.0.0.1:port
	addr string // 127.0.0.1:port
}

func newGRPCStack(t *testing.T, store core.BreadStore, opts a2ap.Options, srvOpts server.Options, agents ...*core.Agent) *grpcStack {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Agent, opts.URL = "assistant", "/a2a"
	p, err := a2ap.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	in, err := engine.New(engine.Config{Store: store, Bus: stream.New(stream.Options{}), Agents: agents, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	srv, err := server.New(in, srvOpts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	addr := ln.Addr().String()
	return &grpcStack{in: in, base: "http://" + addr, addr: addr}
}

// grpcUser puts X-User in a gRPC call's metadata, as headerAuth reads it.
type grpcUser string

func (u grpcUser) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"x-user": string(u)}, nil
}

func (grpcUser) RequireTransportSecurity() bool { return false }

// grpcClient is a2a-go's client over its gRPC transport (plaintext, to
// the card's GRPC interface), as user ("" sends no identity); calls counts
// the gRPC calls it makes.
func grpcClient(t *testing.T, card *a2a.AgentCard, user string, calls *atomic.Int32) *a2aclient.Client {
	t.Helper()
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, o ...grpc.CallOption) error {
			calls.Add(1)
			return invoker(ctx, method, req, reply, cc, o...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, o ...grpc.CallOption) (grpc.ClientStream, error) {
			calls.Add(1)
			return streamer(ctx, desc, cc, method, o...)
		}),
	}
	if user != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(grpcUser(user)))
	}
	c, err := a2aclient.NewFromCard(t.Context(), card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}),
		a2aclient.WithGRPCTransport(opts...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func grpcCode(err error) codes.Code { return status.Code(err) }

// TestGRPCBinding drives the gRPC binding with a2a-go's official client
// over plaintext HTTP/2 to the bread server's listener: send, get, a
// stream slower than the body deadline, a subscription and a cancel, the
// same task read over JSON-RPC; with auth, another identity cannot read
// the task, no identity is UNAUTHENTICATED, a refused grant
// PERMISSION_DENIED; a stopped instance UNAVAILABLE.
func TestGRPCBinding(t *testing.T) {
	const bodyRead = 300 * time.Millisecond
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		reached := make(chan struct{})
		agent := scripted("assistant",
			modeltest.Text("Hel", "lo"),
			modeltest.Slow(modeltest.Text("slow", "ly"), 2*bodyRead), // the stream outlives the body deadline
			modeltest.Block(reached, "work"))
		auth := &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
			return (action == a2ap.ActionCard || action == a2ap.ActionRPC) && id.Subject != "intruder"
		}}
		s := newGRPCStack(t, open(t), a2ap.Options{GRPC: true}, server.Options{Auth: auth, BodyReadTimeout: bodyRead}, agent)
		card, err := agentcard.NewResolver(userClient("ann")).Resolve(t.Context(), s.base)
		if err != nil {
			t.Fatal(err)
		}
		want := []a2a.AgentInterface{{Transport: a2a.TransportProtocolJSONRPC, URL: s.base + "/a2a"}, {Transport: a2a.TransportProtocolGRPC, URL: s.addr}}
		if !slices.Equal(card.AdditionalInterfaces, want) || card.PreferredTransport != a2a.TransportProtocolJSONRPC {
			t.Fatalf("card interfaces = %s %+v, want %+v", card.PreferredTransport, card.AdditionalInterfaces, want)
		}
		var calls atomic.Int32
		ann := grpcClient(t, card, "ann", &calls)
		annRPC, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(userClient("ann")))
		if err != nil {
			t.Fatal(err)
		}

		res, err := ann.SendMessage(t.Context(), textMessage("hi"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "Hello" {
			t.Fatalf("SendMessage = %+v", task)
		}
		got, err := ann.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		sameTask(t, "GetTask over gRPC", task, got)
		if got, err = annRPC.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
		sameTask(t, "tasks/get over JSON-RPC", task, got)

		evs, err := collect(t, ann.SendStreamingMessage(t.Context(), textMessage("slowly")))
		if err != nil {
			t.Fatal(err)
		}
		if k := strings.Join(kinds(evs), " "); k != "task:working artifact:slow artifact:ly status:completed:final" {
			t.Fatalf("SendStreamingMessage events = %s", k)
		}
		streamed := folded(t, evs)
		if got, err = annRPC.GetTask(t.Context(), &a2a.TaskQueryParams{ID: streamed.ID}); err != nil {
			t.Fatal(err)
		}
		sameTask(t, "the streamed task over JSON-RPC", streamed, got)

		// A working task: subscribed to over gRPC, cancelled over gRPC,
		// both streams ending canceled.
		live := make(chan a2a.Event, 64)
		go func() {
			defer close(live)
			for ev, err := range ann.SendStreamingMessage(t.Context(), textMessage("work")) {
				if err != nil {
					return
				}
				live <- ev
			}
		}()
		working := next(t, live).(*a2a.Task)
		next(t, live) // the artifact
		<-reached
		sub := make(chan a2a.Event, 64)
		go func() {
			defer close(sub)
			for ev, err := range ann.ResubscribeToTask(t.Context(), &a2a.TaskIDParams{ID: working.ID}) {
				if err != nil {
					return
				}
				sub <- ev
			}
		}()
		if ev := next(t, sub).(*a2a.Task); ev.ID != working.ID || ev.Status.State != a2a.TaskStateWorking {
			t.Fatalf("TaskSubscription first event = %+v", ev)
		}
		if a := next(t, sub).(*a2a.TaskArtifactUpdateEvent); a.Artifact.Parts[0].(a2a.TextPart).Text != "work" {
			t.Fatalf("TaskSubscription artifact = %+v", a)
		}
		canceled, err := ann.CancelTask(t.Context(), &a2a.TaskIDParams{ID: working.ID})
		if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("CancelTask = %+v, %v", canceled, err)
		}
		for _, c := range []<-chan a2a.Event{live, sub} {
			if st := next(t, c).(*a2a.TaskStatusUpdateEvent); st.Status.State != a2a.TaskStateCanceled || !st.Final {
				t.Fatalf("final status = %+v", st)
			}
		}
		if n := calls.Load(); n != 6 {
			t.Fatalf("%d gRPC calls, want 6: the client did not use the gRPC binding throughout", n)
		}

		// Another identity: as if the task did not exist.
		bob := grpcClient(t, card, "bob", &calls)
		if _, err := bob.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); grpcCode(err) != codes.NotFound {
			t.Fatalf("bob reads ann's task: %v, want NotFound", err)
		}
		if _, err := bob.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID}); grpcCode(err) != codes.NotFound {
			t.Fatalf("bob cancels ann's task: %v, want NotFound", err)
		}
		// No identity: server.auth's 401 before the gRPC server, read by
		// the client as UNAUTHENTICATED; the grant refused: 403,
		// PERMISSION_DENIED.
		if _, err := grpcClient(t, card, "", &calls).GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); grpcCode(err) != codes.Unauthenticated {
			t.Fatalf("no identity: %v, want Unauthenticated", err)
		}
		if _, err := collect(t, grpcClient(t, card, "", &calls).SendStreamingMessage(t.Context(), textMessage("hi"))); grpcCode(err) != codes.Unauthenticated {
			t.Fatalf("no identity, streaming: %v, want Unauthenticated", err)
		}
		if _, err := grpcClient(t, card, "intruder", &calls).GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); grpcCode(err) != codes.PermissionDenied {
			t.Fatalf("intruder: %v, want PermissionDenied", err)
		}

		// The instance stops (the plugin closes): UNAVAILABLE, as JSON-RPC
		// answers 503.
		if err := s.in.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := ann.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID}); grpcCode(err) != codes.Unavailable {
			t.Fatalf("after Stop: %v, want Unavailable", err)
		}
	})
}

// TestGRPCIsOptIn: without Options.GRPC the card lists no other interface
// and the service's routes are not served.
func TestGRPCIsOptIn(t *testing.T) {
	s := newGRPCStack(t, memory.New(), a2ap.Options{}, server.Options{}, scripted("assistant", modeltest.Text("hi")))
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.base)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.AdditionalInterfaces) != 0 {
		t.Fatalf("additionalInterfaces = %+v", card.AdditionalInterfaces)
	}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []a2a.AgentInterface{{Transport: a2a.TransportProtocolGRPC, URL: s.addr}},
		a2aclient.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	if _, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: "x"}); grpcCode(err) != codes.Unimplemented {
		t.Fatalf("GetTask without the binding: %v, want Unimplemented (HTTP 404)", err)
	}
}

// TestGRPCErrors: the A2A errors over gRPC, with the v1.0 bindings' codes.
func TestGRPCErrors(t *testing.T) {
	s := newGRPCStack(t, memory.New(), a2ap.Options{GRPC: true}, server.Options{}, scripted("assistant", modeltest.Text("done")))
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.base)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	c := grpcClient(t, card, "", &calls)
	res, err := c.SendMessage(t.Context(), textMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	done := res.(*a2a.Task)
	for _, tc := range []struct {
		name string
		err  error
		want codes.Code
	}{
		{"an unknown task", func() error { _, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: "nope"}); return err }(), codes.NotFound},
		{"cancel a finished task", func() error { _, err := c.CancelTask(t.Context(), &a2a.TaskIDParams{ID: done.ID}); return err }(), codes.FailedPrecondition},
		{"subscribe to a finished task", func() error {
			_, err := collect(t, c.ResubscribeToTask(t.Context(), &a2a.TaskIDParams{ID: done.ID}))
			return err
		}(), codes.Unimplemented},
		{"a message on a finished task", func() error {
			_, err := c.SendMessage(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, done, a2a.TextPart{Text: "more"})})
			return err
		}(), codes.InvalidArgument},
		{"push without push configured", func() error {
			_, err := c.GetTaskPushConfig(t.Context(), &a2a.GetTaskPushConfigParams{TaskID: done.ID})
			return err
		}(), codes.Unimplemented},
	} {
		if grpcCode(tc.err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.want)
		}
	}
}
