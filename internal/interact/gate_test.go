package interact

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestGate: up to max slots are taken at once; past them a request waits
// its turn, first come first served, and one whose deadline passes first
// gets none; while one waits, the oldest holder past its grace is cut
// off, once, and a holder within its grace is not; with nobody waiting
// nobody is cut.
func TestGate(t *testing.T) {
	g := newGate(2, 200*time.Millisecond)
	var cuts [4]atomic.Int32
	cut := func(i int) func() { return func() { cuts[i].Add(1) } }
	far := time.Now().Add(time.Hour)
	a, ok1 := g.take(far, cut(0))
	b, ok2 := g.take(far, cut(1))
	if !ok1 || !ok2 {
		t.Fatal("a slot within max not taken")
	}
	if len(a.buf) != MaxBody+1 {
		t.Fatalf("a slot's buffer holds %d bytes, want MaxBody+1", len(a.buf))
	}
	time.Sleep(300 * time.Millisecond)
	if cuts[0].Load()+cuts[1].Load() != 0 {
		t.Fatal("a holder was cut off with nobody waiting")
	}
	// A third waits past its deadline: none comes (the holders are past
	// their grace, so the oldest is cut off to make room, but it has not
	// given its slot back yet).
	if _, ok := g.take(time.Now().Add(100*time.Millisecond), cut(2)); ok {
		t.Fatal("a slot beyond max taken at once")
	}
	if cuts[0].Load() != 1 || cuts[1].Load() != 0 {
		t.Fatalf("cut off %d and %d times, want the oldest once", cuts[0].Load(), cuts[1].Load())
	}
	// Two wait, in order; a's slot goes to the first, b's to the second.
	got := make(chan int, 2)
	for i := 2; i < 4; i++ {
		go func() {
			if _, ok := g.take(far, cut(i)); ok {
				got <- i
			}
		}()
		time.Sleep(50 * time.Millisecond)
	}
	if cuts[1].Load() != 1 {
		t.Fatalf("b, past its grace with a second waiting, cut off %d times, want once", cuts[1].Load())
	}
	if cuts[0].Load() != 1 {
		t.Fatal("a was cut off again")
	}
	g.give(a)
	if first := <-got; first != 2 {
		t.Fatalf("the second waiting got the first slot")
	}
	g.give(b)
	if second := <-got; second != 3 {
		t.Fatalf("got %d", second)
	}
	if !g.wasCut(a) || !g.wasCut(b) {
		t.Fatal("a cut slot does not say so")
	}
}
