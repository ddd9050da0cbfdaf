// Package pubsub is a small in-process broker: publishers hand it values,
// and every subscriber sees all of them in one order, one call at a time.
//
// A subscriber is normally asynchronous: the broker gives it a goroutine
// and an unbounded queue, so a slow subscriber (a terminal, a pipe) never
// holds up a publisher. A synchronous subscriber is called inside Publish
// instead, for work that must be done before the publisher goes on, such
// as writing a log that crash recovery reads.
package pubsub

import (
	"context"
	"sync"
)

// LossyBacklog is how many values may wait for an asynchronous subscriber
// before PublishLossy drops values for it. Must-deliver values are never
// dropped, whatever the backlog.
const LossyBacklog = 256

// Broker delivers published values to its subscribers. The zero value is
// ready to use; a Broker must not be copied after first use.
type Broker[T any] struct {
	// mu is held through each publish, so every subscriber sees the
	// values in the same order, and a synchronous subscriber is never
	// called twice at once.
	mu     sync.Mutex
	subs   []*subscriber[T]
	closed bool
}

// NewBroker returns an empty broker.
func NewBroker[T any]() *Broker[T] { return &Broker[T]{} }

// Option configures a subscription.
type Option func(*options)

type options struct {
	sync     bool
	lossless bool
	at       func()
	idle     func()
}

// Lossless makes an asynchronous subscriber take lossy values too, however
// far behind it is: a face that shows streamed text as it arrives must
// show every piece, or its lines come out missing and joined wrongly. Its
// queue is then bounded only by what the publisher sends, which for text
// is the answer the coordinator holds whole anyway.
func Lossless() Option { return func(o *options) { o.lossless = true } }

// Sync makes a subscriber synchronous: it is called inside Publish, on the
// publisher's goroutine, serialised with every other publish. Publish
// returns only after it has handled the value. It must not publish,
// subscribe or cancel on the same broker, which would deadlock.
func Sync() Option { return func(o *options) { o.sync = true } }

// At calls fn while the subscriber is added, with no publish under way:
// everything published before fn is called went to the subscribers before
// this one, and everything published after goes to this one too. A
// subscriber that must join what was published before (a log written by a
// synchronous subscriber) with what comes next uses it to learn where the
// one ends and the other begins, with nothing lost or seen twice. fn must
// be quick and must not use the broker. It is not called when the broker
// is closed, since nothing is subscribed then.
func At(fn func()) Option { return func(o *options) { o.at = fn } }

// Batched lets an asynchronous subscriber hold what fn is given (lines
// for a socket, say) and send it all at once: the broker calls flush
// whenever the subscriber's queue runs empty, before it releases a Flush
// waiting on the subscriber, and before the subscription ends by cancel
// or Close. A burst of values (64 child agents' events at once) then
// costs the subscriber one write, where it cost one a value; a value that
// arrives alone is flushed at once, with no timer to wait for. flush runs
// on the subscriber's goroutine, never beside fn. A subscription whose
// context ended drops what fn holds, as it drops what is queued.
func Batched(flush func()) Option { return func(o *options) { o.idle = flush } }

// Publish delivers v to every subscriber; it is never dropped.
func (b *Broker[T]) Publish(v T) { b.publish(v, false) }

// PublishLossy delivers v to every subscriber that is keeping up, and
// drops it for an asynchronous subscriber with more than LossyBacklog
// values waiting. It suits values a later one supersedes, like streamed
// text whose full form follows.
func (b *Broker[T]) PublishLossy(v T) { b.publish(v, true) }

func (b *Broker[T]) publish(v T, lossy bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		if s.sync {
			s.fn(v)
			continue
		}
		s.push(item[T]{v: v}, lossy)
	}
}

// Subscribe calls fn with every value published from now on, in publish
// order and never two calls at once, until ctx ends or cancel is called.
// When ctx ends, values still waiting for fn are dropped. cancel delivers
// what was published before it was called, then returns once fn will not
// be called again; so replacing one subscriber with another (cancel the
// old, subscribe the new) loses nothing and never overlaps. cancel may be
// called more than once, but not from fn itself.
func (b *Broker[T]) Subscribe(ctx context.Context, fn func(T), opts ...Option) (cancel func()) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &subscriber[T]{fn: fn, sync: o.sync, lossless: o.lossless, idle: o.idle}
	if !s.sync {
		// Made before the subscriber is in the broker, where a publish on
		// another goroutine may push to it at once.
		s.wake = make(chan struct{}, 1)
		s.quit = make(chan struct{})
		s.done = make(chan struct{})
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return func() {}
	}
	b.subs = append(b.subs, s)
	if o.at != nil {
		o.at()
	}
	b.mu.Unlock()
	if s.sync {
		stopWatch := context.AfterFunc(ctx, func() { b.remove(s) })
		return func() {
			stopWatch()
			b.remove(s)
		}
	}
	go s.run(ctx, b)
	return func() {
		// Removed first, so nothing arrives after the queue is drained.
		b.remove(s)
		s.stop()
	}
}

// Flush returns once every value published before the call has been
// handled by every subscriber, or with ctx's error when ctx ends first.
// It must not be called from a subscriber, which would wait for itself.
func (b *Broker[T]) Flush(ctx context.Context) error {
	b.mu.Lock()
	// Holding mu, no publish is under way: synchronous subscribers have
	// handled everything, and a marker queued now comes after every value
	// published before.
	var marks []chan struct{}
	for _, s := range b.subs {
		if s.sync {
			continue
		}
		m := make(chan struct{})
		s.push(item[T]{flushed: m}, false)
		marks = append(marks, m)
	}
	b.mu.Unlock()
	for _, m := range marks {
		select {
		case <-m:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close ends every subscription after it has handled what was published
// to it, and returns once no subscriber will be called again. Later
// publishes are dropped and later subscriptions never called.
func (b *Broker[T]) Close() {
	b.mu.Lock()
	subs := b.subs
	b.subs, b.closed = nil, true
	b.mu.Unlock()
	for _, s := range subs {
		if !s.sync {
			s.stop()
		}
	}
}

// remove takes s out of the broker; no publish reaches it afterwards.
func (b *Broker[T]) remove(s *subscriber[T]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.subs {
		if x == s {
			b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
			return
		}
	}
}

// item is one queued value, or a Flush marker to close once the values
// before it are handled.
type item[T any] struct {
	v       T
	flushed chan struct{}
}

type subscriber[T any] struct {
	fn       func(T)
	sync     bool
	lossless bool   // takes lossy values however far behind (Lossless)
	idle     func() // sends what fn holds (Batched); nil for most

	// For an asynchronous subscriber: its queue, the signal that the queue
	// grew, the request to stop once it is drained, and the sign that its
	// goroutine has exited.
	mu       sync.Mutex
	queue    []item[T]
	pending  int // values queued or being handled, markers not counted
	wake     chan struct{}
	quit     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// stop asks the goroutine to drain the queue and exit, and waits for it.
// The subscriber must be out of the broker already.
func (s *subscriber[T]) stop() {
	s.stopOnce.Do(func() { close(s.quit) })
	<-s.done
}

// push queues it, unless it is a lossy value and the subscriber is behind.
func (s *subscriber[T]) push(it item[T], lossy bool) {
	s.mu.Lock()
	if lossy && !s.lossless && s.pending >= LossyBacklog {
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, it)
	if it.flushed == nil {
		s.pending++
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

func (s *subscriber[T]) pop() (item[T], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return item[T]{}, false
	}
	it := s.queue[0]
	s.queue[0] = item[T]{} // let go of the value
	s.queue = s.queue[1:]
	if len(s.queue) == 0 {
		s.queue = nil // let go of the backing array
	}
	return it, true
}

// run is the subscriber's goroutine: it calls fn for each queued value
// until the subscription is cancelled (after draining) or ctx ends.
func (s *subscriber[T]) run(ctx context.Context, b *Broker[T]) {
	defer close(s.done)
	for {
		for {
			if ctx.Err() != nil {
				s.abandon(b)
				return
			}
			it, ok := s.pop()
			if !ok {
				break
			}
			s.handle(it)
		}
		s.flushHeld()
		select {
		case <-s.wake:
		case <-s.quit:
			// Nothing is pushed any more: handle what is left, then go.
			for it, ok := s.pop(); ok; it, ok = s.pop() {
				s.handle(it)
			}
			s.flushHeld()
			return
		case <-ctx.Done():
			s.abandon(b)
			return
		}
	}
}

func (s *subscriber[T]) handle(it item[T]) {
	if it.flushed != nil {
		// Handled means sent, for a subscriber that holds values.
		s.flushHeld()
		close(it.flushed)
		return
	}
	s.fn(it.v)
	s.mu.Lock()
	s.pending--
	s.mu.Unlock()
}

// flushHeld has a Batched subscriber send what it holds.
func (s *subscriber[T]) flushHeld() {
	if s.idle != nil {
		s.idle()
	}
}

// abandon ends a subscription whose context ended: it leaves the broker,
// drops the values still queued and releases any Flush waiting on it.
func (s *subscriber[T]) abandon(b *Broker[T]) {
	b.remove(s)
	for it, ok := s.pop(); ok; it, ok = s.pop() {
		if it.flushed != nil {
			close(it.flushed)
		}
	}
}
