package interrupts

import (
	"sync"
	"testing"
)

func TestPopOrdersByPriorityThenArrival(t *testing.T) {
	q := NewQueue()
	q.Push(Interrupt{Kind: Normal, Text: "n1"})
	q.Push(Interrupt{Kind: Internal, Text: "i1"})
	q.Push(Interrupt{Kind: Urgent, Text: "u1"})
	q.Push(Interrupt{Kind: Normal, Text: "n2"})
	q.Push(Interrupt{Kind: HardStop, Text: "h1"})
	var got []string
	for {
		it, ok := q.Pop()
		if !ok {
			break
		}
		got = append(got, it.Text)
	}
	want := []string{"h1", "u1", "n1", "n2", "i1"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestPopAtMostLeavesLesserKinds(t *testing.T) {
	q := NewQueue()
	q.Push(Interrupt{Kind: Normal, Text: "n"})
	if _, ok := q.PopAtMost(Urgent); ok {
		t.Fatal("PopAtMost(Urgent) returned a normal message")
	}
	q.Push(Interrupt{Kind: Urgent, Text: "u"})
	it, ok := q.PopAtMost(Urgent)
	if !ok || it.Text != "u" {
		t.Fatalf("PopAtMost(Urgent) = %+v, %v", it, ok)
	}
	if q.Len() != 1 {
		t.Fatalf("Len = %d, want 1", q.Len())
	}
}

func TestConcurrentProducers(t *testing.T) {
	q := NewQueue()
	var wg sync.WaitGroup
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				q.Push(Interrupt{Kind: Kind(i % 4)})
			}
		}()
	}
	wg.Wait()
	n := 0
	last := HardStop
	for {
		it, ok := q.Pop()
		if !ok {
			break
		}
		if it.Kind < last {
			t.Fatalf("kind %v popped after %v", it.Kind, last)
		}
		last = it.Kind
		n++
	}
	if n != 800 {
		t.Fatalf("popped %d, want 800", n)
	}
}
