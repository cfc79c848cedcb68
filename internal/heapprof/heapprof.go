// Package heapprof writes a heap profile at the peak of a process's heap:
// a goroutine samples the live heap and, each time it is at least 10 %
// above the largest seen so far, rewrites the profile, so the file ends up
// describing (within a sampling interval) what held the memory at the
// peak rather than at exit.
package heapprof

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// Start samples the heap every interval (default 200 ms) and writes the
// profile to path at each new peak; stop writes it once more if the heap
// grew since, and stops.
func Start(path string, interval time.Duration) (stop func() error, err error) {
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	var werr error
	var mu sync.Mutex
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		metrics.Read(sample)
		v := sample[0].Value.Uint64()
		if v < peak+peak/10 {
			return
		}
		peak = v
		runtime.GC() // the profile shows the heap as of the last GC
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && werr == nil {
			werr = err
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				check()
			}
		}
	}()
	return func() error {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return werr
	}, nil
}
