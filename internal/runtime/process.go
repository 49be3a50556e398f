package runtime

import "time"

// processOnce processes up to a batch of records per task, with stream-time punctuation
// after each record. It returns the number of records processed. Java: TaskExecutor.process.
func (th *thread) processOnce() (int, error) {
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	const batch = 100
	total := 0
	now := time.Now().UnixMilli()
	start := time.Now()
	for id, t := range th.tasks {
		waiting := th.rt.cfg.Task.MaxTaskIdleMs >= 0 && len(th.inputs[id]) > 1
		if waiting && !t.HasRecordsQueued() {
			// As Java's readyToProcess, asked on every pass: a caught-up empty partition's
			// idle deadline starts when it is first seen so, records elsewhere or not.
			th.updateLags(t, th.inputs[id])
			t.IsProcessable(now)
			continue
		}
		for i := 0; i < batch && t.HasRecordsQueued(); i++ {
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
			if p, err := t.MaybePunctuateStreamTime(); err != nil {
				return total, err
			} else if p {
				th.obs.Punctuate.Count(1)
			}
		}
	}
	if total > 0 {
		th.obs.Process.Record(int64(total), time.Since(start))
	}
	if m := th.rt.cfg.Metrics; m != nil && total > 0 {
		m.processed.WithLabelValues(th.name).Add(float64(total))
		m.processTime.WithLabelValues(th.name).Observe(time.Since(start).Seconds())
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
		if p, err := t.MaybePunctuateSystemTime(now); err != nil {
			return err
		} else if p {
			th.obs.Punctuate.Record(1, time.Since(start))
		}
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
