package pubsub

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// batches is a Batched subscriber that holds values until flush and keeps
// each flush's values as one batch.
type batches struct {
	mu      sync.Mutex
	held    []int
	batches [][]int
}

func (b *batches) add(v int) { b.held = append(b.held, v) } // on the subscriber's goroutine only

func (b *batches) flush() {
	if len(b.held) == 0 {
		return
	}
	b.mu.Lock()
	b.batches = append(b.batches, b.held)
	b.mu.Unlock()
	b.held = nil
}

func (b *batches) sent() [][]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.batches)
}

// Values published while the subscriber is busy are sent together once its
// queue is empty; a value published alone is sent at once, with no timer.
func TestBatchedSendsABurstTogetherAndALoneValueAtOnce(t *testing.T) {
	b := NewBroker[int]()
	var got batches
	busy := make(chan struct{})
	first := true
	cancel := b.Subscribe(context.Background(), func(v int) {
		if first {
			first = false
			<-busy // the burst queues up behind the first value
		}
		got.add(v)
	}, Batched(got.flush))
	defer cancel()
	for i := range 100 {
		b.Publish(i)
	}
	close(busy)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent := got.sent()
	var all []int
	for _, s := range sent {
		all = append(all, s...)
	}
	wantSequence(t, all, 100)
	if len(sent) != 1 {
		t.Fatalf("a burst of 100 values was sent in %d batches, want 1: %v", len(sent), sent)
	}
	// One value alone is sent without waiting for another (or Flush).
	b.Publish(100)
	deadline := time.Now().Add(10 * time.Second)
	for len(got.sent()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("a lone value was held and never sent")
		}
		time.Sleep(time.Millisecond)
	}
	if s := got.sent(); !slices.Equal(s[1], []int{100}) {
		t.Fatalf("the lone value's batch is %v", s[1])
	}
}

// Flush returns only once what a Batched subscriber held is sent, and
// cancel and Close send what it holds before they return.
func TestBatchedHeldValuesAreSentBeforeFlushCancelAndClose(t *testing.T) {
	for _, end := range []string{"flush", "cancel", "close"} {
		t.Run(end, func(t *testing.T) {
			b := NewBroker[int]()
			var got batches
			release := make(chan struct{})
			first := true
			cancel := b.Subscribe(context.Background(), func(v int) {
				if first {
					first = false
					<-release
				}
				got.add(v)
			}, Batched(got.flush))
			for i := range 10 {
				b.Publish(i)
			}
			close(release)
			switch end {
			case "flush":
				if err := b.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				defer cancel()
			case "cancel":
				cancel()
			case "close":
				b.Close()
			}
			var all []int
			for _, s := range got.sent() {
				all = append(all, s...)
			}
			wantSequence(t, all, 10)
		})
	}
}
