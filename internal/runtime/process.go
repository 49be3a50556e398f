package runtime

import "time"

// processOnce runs one pass: up to th.pace.perTask records per task, with stream-time
// punctuation after each record, ending early between two records at the pass's deadline or
// when the runtime stops (pace.go); between two records a waiting interactive query gets the
// store lock. It returns the number of records processed. Java: TaskExecutor.process.
func (th *thread) processOnce() (int, error) {
	th.beginPass()
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	p := &th.pace
	total := 0
	start := time.Now()
	defer func() {
		th.endPass(total, time.Since(start))
		if total > 0 {
			th.obs.Process.Record(int64(total), time.Since(start))
		}
		if m := th.rt.cfg.Metrics; m != nil && total > 0 {
			m.processed.WithLabelValues(th.name).Add(float64(total))
			m.processTime.WithLabelValues(th.name).Observe(time.Since(start).Seconds())
		}
	}()
	for _, id := range th.passOrder() {
		t := th.tasks[id]
		if t == nil {
			continue
		}
		now := time.Now().UnixMilli()
		waiting := th.rt.cfg.Task.MaxTaskIdleMs >= 0 && len(th.inputs[id]) > 1
		if waiting && !t.HasRecordsQueued() {
			// As Java's readyToProcess, asked on every pass: a caught-up empty partition's
			// idle deadline starts when it is first seen so, records elsewhere or not.
			th.updateLags(t, th.inputs[id])
			t.IsProcessable(now)
			continue
		}
		for i := 0; i < p.perTask && t.HasRecordsQueued(); i++ {
			if total > 0 && p.stop.Load() {
				return total, nil // the next pass goes on (at least one record per pass)
			}
			if th.queriesWaiting() {
				th.yieldStores()
			}
			if waiting {
				th.updateLags(t, th.inputs[id])
				if !th.isProcessable(id, t, now) {
					break
				}
			}
			ok, err := t.Process(now)
			if err != nil {
				return total, err
			}
			if !ok {
				break
			}
			total++
			punctuated, err := t.MaybePunctuateStreamTime()
			if err != nil {
				return total, err
			}
			if punctuated {
				th.obs.Punctuate.Count(1)
			}
			p.punctuated = p.punctuated || punctuated
		}
	}
	return total, nil
}

// punctuateWallClock runs the wall-clock punctuators that are due. Java:
// TaskExecutor.punctuate.
func (th *thread) punctuateWallClock() error {
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	now := time.Now().UnixMilli()
	for _, t := range th.tasks {
		start := time.Now()
		punctuated, err := t.MaybePunctuateSystemTime(now)
		if err != nil {
			return err
		}
		if punctuated {
			th.obs.Punctuate.Record(1, time.Since(start))
		}
		th.pace.punctuated = th.pace.punctuated || punctuated
	}
	return nil
}

// commitRequested reports whether a task asked for a commit (ProcessorContext.Commit).
func (th *thread) commitRequested() bool {
	for _, t := range th.tasks {
		if t.CommitRequested() {
			return true
		}
	}
	return false
}
