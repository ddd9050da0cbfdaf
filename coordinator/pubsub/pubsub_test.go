package pubsub

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder collects what a subscriber was called with.
type recorder struct {
	mu  sync.Mutex
	got []int
}

func (r *recorder) add(v int) {
	r.mu.Lock()
	r.got = append(r.got, v)
	r.mu.Unlock()
}

func (r *recorder) values() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.got...)
}

func wantSequence(t *testing.T, got []int, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("got %d values, want %d", len(got), n)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("value %d is %d: out of order", i, v)
		}
	}
}

func TestEverySubscriberSeesPublishOrder(t *testing.T) {
	b := NewBroker[int]()
	var async, sync recorder
	cancelA := b.Subscribe(context.Background(), async.add)
	cancelS := b.Subscribe(context.Background(), sync.add, Sync())
	for i := 0; i < 1000; i++ {
		b.Publish(i)
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantSequence(t, async.values(), 1000)
	wantSequence(t, sync.values(), 1000)
	cancelA()
	cancelS()
}

func TestSyncSubscriberRunsInsidePublish(t *testing.T) {
	b := NewBroker[int]()
	var seen atomic.Int64
	defer b.Subscribe(context.Background(), func(v int) { seen.Store(int64(v)) }, Sync())()
	for i := 1; i <= 10; i++ {
		b.Publish(i)
		if got := seen.Load(); got != int64(i) {
			t.Fatalf("after Publish(%d) the subscriber had seen %d", i, got)
		}
	}
}

func TestLossyDropsOnlyLossyValuesOfASlowSubscriber(t *testing.T) {
	b := NewBroker[int]()
	release := make(chan struct{})
	var slow, fast recorder
	cancelSlow := b.Subscribe(context.Background(), func(v int) {
		<-release
		slow.add(v)
	})
	cancelFast := b.Subscribe(context.Background(), fast.add, Sync())
	// The slow subscriber holds the first value while everything else
	// queues: must-deliver values beyond the backlog still queue, lossy
	// ones are dropped.
	b.Publish(-1)
	for i := 0; i < LossyBacklog; i++ {
		b.Publish(i)
	}
	for i := 0; i < 100; i++ {
		b.PublishLossy(1000 + i)
	}
	b.Publish(2000)
	close(release)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := slow.values()
	if len(got) != LossyBacklog+2 || got[len(got)-1] != 2000 {
		t.Fatalf("slow subscriber got %d values ending %v, want the %d must-deliver ones", len(got), got[len(got)-3:], LossyBacklog+2)
	}
	for _, v := range got {
		if v >= 1000 && v < 2000 {
			t.Fatalf("a lossy value (%d) reached the subscriber that was behind", v)
		}
	}
	if n := len(fast.values()); n != LossyBacklog+102 {
		t.Fatalf("the subscriber keeping up got %d values, want all %d", n, LossyBacklog+102)
	}
	cancelSlow()
	cancelFast()
}

func TestLossyDeliversWhenKeepingUp(t *testing.T) {
	b := NewBroker[int]()
	var r recorder
	cancel := b.Subscribe(context.Background(), r.add)
	for i := 0; i < 100; i++ {
		b.PublishLossy(i)
	}
	cancel()
	wantSequence(t, r.values(), 100)
}

func TestCancelDrainsThenStops(t *testing.T) {
	b := NewBroker[int]()
	var r recorder
	cancel := b.Subscribe(context.Background(), func(v int) {
		time.Sleep(time.Millisecond) // fall behind
		r.add(v)
	})
	for i := 0; i < 50; i++ {
		b.Publish(i)
	}
	cancel()
	wantSequence(t, r.values(), 50)
	b.Publish(50)
	cancel() // a second cancel is harmless
	if n := len(r.values()); n != 50 {
		t.Fatalf("called %d times after cancel", n-50)
	}
}

func TestSwitchingSubscribersLosesNothingAndNeverOverlaps(t *testing.T) {
	b := NewBroker[int]()
	var active atomic.Int32
	var overlap atomic.Bool
	var mu sync.Mutex
	var got []int
	face := func(v int) {
		if active.Add(1) > 1 {
			overlap.Store(true)
		}
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
		active.Add(-1)
	}
	cancel := b.Subscribe(context.Background(), face)
	for i := 0; i < 300; i++ {
		if i%100 == 99 {
			cancel()
			cancel = b.Subscribe(context.Background(), face)
		}
		b.Publish(i)
	}
	cancel()
	if overlap.Load() {
		t.Fatal("the old and the new subscriber ran at once")
	}
	wantSequence(t, got, 300)
}

func TestContextEndsSubscription(t *testing.T) {
	b := NewBroker[int]()
	ctx, stop := context.WithCancel(context.Background())
	var r, s recorder
	cancel := b.Subscribe(ctx, r.add)
	cancelSync := b.Subscribe(ctx, s.add, Sync())
	b.Publish(0)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop()
	deadline := time.Now().Add(2 * time.Second)
	for {
		b.mu.Lock()
		n := len(b.subs)
		b.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions left after their context ended", n)
		}
		time.Sleep(time.Millisecond)
	}
	b.Publish(1)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.values()) != 1 || len(s.values()) != 1 {
		t.Fatalf("got %v and %v after the context ended, want [0]", r.values(), s.values())
	}
	cancel()
	cancelSync()
}

func TestFlushWaitsForSlowSubscribers(t *testing.T) {
	b := NewBroker[int]()
	var handled atomic.Int32
	for range 3 {
		defer b.Subscribe(context.Background(), func(int) {
			time.Sleep(2 * time.Millisecond)
			handled.Add(1)
		})()
	}
	for i := 0; i < 20; i++ {
		b.Publish(i)
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 60 {
		t.Fatalf("Flush returned after %d of 60 calls", n)
	}
}

func TestFlushGivesUpWithItsContext(t *testing.T) {
	b := NewBroker[int]()
	release := make(chan struct{})
	cancel := b.Subscribe(context.Background(), func(int) { <-release })
	b.Publish(0)
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if err := b.Flush(ctx); err == nil {
		t.Fatal("Flush returned nil while a subscriber was stuck")
	}
	close(release)
	cancel()
}

func TestFlushWithoutSubscribers(t *testing.T) {
	var b Broker[string]
	b.Publish("nobody listens")
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCloseDrainsAndEndsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	b := NewBroker[int]()
	var rs [4]recorder
	var cancels []func()
	for i := range rs {
		cancels = append(cancels, b.Subscribe(context.Background(), func(v int) {
			time.Sleep(100 * time.Microsecond)
			rs[i].add(v)
		}))
	}
	for i := 0; i < 100; i++ {
		b.Publish(i)
	}
	b.Close()
	for i := range rs {
		wantSequence(t, rs[i].values(), 100)
	}
	b.Publish(100)
	late := b.Subscribe(context.Background(), func(int) { t.Error("a subscriber of a closed broker was called") })
	b.Publish(101)
	late()
	for _, c := range cancels {
		c() // cancelling after Close is harmless
	}
	waitGoroutines(t, before)
}

func TestNoGoroutineLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	b := NewBroker[int]()
	ctx, stop := context.WithCancel(context.Background())
	for i := 0; i < 20; i++ {
		cancel := b.Subscribe(context.Background(), func(int) {})
		b.Subscribe(ctx, func(int) {})
		b.Subscribe(ctx, func(int) {}, Sync())
		b.Publish(i)
		cancel()
	}
	stop()
	waitGoroutines(t, before)
}

// waitGoroutines waits until no more goroutines run than before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left over:\n%s", runtime.NumGoroutine()-before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestManyPublishersNeverOverlapASubscriber: 64 goroutines publish at once;
// each subscriber, synchronous or not, is never in two calls at once, and
// sees each publisher's values in that publisher's order.
func TestManyPublishersNeverOverlapASubscriber(t *testing.T) {
	const publishers, each = 64, 200
	b := NewBroker[[2]int]()
	type sub struct {
		active, maxActive atomic.Int32
		calls             atomic.Int64
		last              [publishers]int // touched only by the subscriber's calls
		outOfOrder        atomic.Bool
	}
	subs := make([]*sub, 4)
	for i := range subs {
		s := &sub{}
		for p := range s.last {
			s.last[p] = -1
		}
		subs[i] = s
		var opts []Option
		if i == 0 {
			opts = append(opts, Sync())
		}
		defer b.Subscribe(context.Background(), func(v [2]int) {
			n := s.active.Add(1)
			for {
				m := s.maxActive.Load()
				if n <= m || s.maxActive.CompareAndSwap(m, n) {
					break
				}
			}
			if v[1] != s.last[v[0]]+1 {
				s.outOfOrder.Store(true)
			}
			s.last[v[0]] = v[1]
			s.calls.Add(1)
			s.active.Add(-1)
		}, opts...)()
	}
	var wg sync.WaitGroup
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				b.Publish([2]int{p, i})
			}
		}()
	}
	wg.Wait()
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, s := range subs {
		if m := s.maxActive.Load(); m != 1 {
			t.Errorf("subscriber %d had %d calls at once", i, m)
		}
		if n := s.calls.Load(); n != publishers*each {
			t.Errorf("subscriber %d got %d values, want %d", i, n, publishers*each)
		}
		if s.outOfOrder.Load() {
			t.Errorf("subscriber %d saw a publisher's values out of order", i)
		}
	}
}

// TestAtJoinsTheLogWithTheLiveStream: a subscriber added with At while
// values are published from several goroutines learns how many a
// synchronous log held at that instant, and receives exactly the ones
// after: the log's first n values followed by what it receives is the
// whole log, nothing lost, nothing twice.
func TestAtJoinsTheLogWithTheLiveStream(t *testing.T) {
	for round := 0; round < 20; round++ {
		b := NewBroker[int]()
		var log recorder
		cancelLog := b.Subscribe(context.Background(), log.add, Sync())
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 500 {
					b.Publish(int(next.Add(1) - 1))
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		var live recorder
		n := -1
		cancelLive := b.Subscribe(context.Background(), live.add, At(func() { n = len(log.got) }))
		wg.Wait()
		cancelLive()
		cancelLog()
		all := log.values()
		if n < 0 || n > len(all) {
			t.Fatalf("round %d: At saw %d values of %d", round, n, len(all))
		}
		joined := append(append([]int(nil), all[:n]...), live.values()...)
		if len(joined) != len(all) {
			t.Fatalf("round %d: joined %d values, the log has %d", round, len(joined), len(all))
		}
		for i := range all {
			if joined[i] != all[i] {
				t.Fatalf("round %d: value %d is %d in the join, %d in the log", round, i, joined[i], all[i])
			}
		}
	}
}

func TestAtIsNotCalledOnAClosedBroker(t *testing.T) {
	b := NewBroker[int]()
	b.Close()
	called := false
	b.Subscribe(context.Background(), func(int) {}, At(func() { called = true }))()
	if called {
		t.Fatal("At was called on a closed broker")
	}
}

// A Lossless subscriber far behind still gets every lossy value, in
// order, while a plain one beside it drops them.
func TestLosslessKeepsLossyValuesOfASlowSubscriber(t *testing.T) {
	b := NewBroker[int]()
	release := make(chan struct{})
	var all recorder
	cancel := b.Subscribe(context.Background(), func(v int) {
		<-release
		all.add(v)
	}, Lossless())
	b.Publish(-1)
	for i := 0; i < LossyBacklog+100; i++ {
		b.PublishLossy(i)
	}
	close(release)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := all.values()
	if len(got) != LossyBacklog+101 {
		t.Fatalf("the lossless subscriber got %d values, want %d", len(got), LossyBacklog+101)
	}
	for i, v := range got[1:] {
		if v != i {
			t.Fatalf("value %d is %d: out of order or lost", i, v)
		}
	}
	cancel()
}
