package metrics

import "github.com/prometheus/client_golang/prometheus"

// family is one Prometheus family: its name, help (naming the Java metric), label names and
// the recording level from which it is exported.
type family struct {
	desc  *prometheus.Desc
	level Level
}

func (r *Registry) fam(name, help string, level Level, labels ...string) family {
	return family{desc: prometheus.NewDesc(name, help, labels, prometheus.Labels{"application_id": r.AppID}), level: level}
}

// FamilyDoc names a Prometheus family, the Java group and metrics it stands for, and the
// recording level from which it is exported (for the docs table and its test).
type FamilyDoc struct {
	Name, JavaGroup, Java string
	Level                 Level
}

// families are built once per registry.
type families struct {
	clientState, alive, failed, info                        family
	opTotal, opLatency, opLatencyMax                        [4]family
	created, closed, start, threadDead, threadRestored      family
	taskDropped, taskRemaining, taskBuffered, taskProcessed family
	taskEnforced, taskRestored, taskDead, taskLag           family
	storeLatency, storeLatencyMax                           family
	asyncInFlight, asyncQueued, asyncPaused, asyncLatency   family
	nodeProcessed, nodeE2EAvg, nodeE2EMin, nodeE2EMax       family
	cacheHitAvg, cacheHitMin, cacheHitMax                   family
}

var threadOps = [4]string{"process", "poll", "commit", "punctuate"}

// Docs returns the families with their Java counterparts, in export order.
func Docs() []FamilyDoc {
	return docs
}

var docs []FamilyDoc

func (r *Registry) families() *families {
	f := &families{}
	th := []string{"thread"}
	tk := []string{"thread", "task"}
	f.clientState = r.fam("kstreams_client_state", "1 for the instance's current state (label state). Java: stream-metrics state / client-state.", Info, "state")
	f.alive = r.fam("kstreams_client_alive_stream_threads", "Stream threads alive. Java: stream-metrics alive-stream-threads.", Info)
	f.failed = r.fam("kstreams_client_failed_stream_threads", "Stream threads that died of an error. Java: stream-metrics failed-stream-threads.", Info)
	f.info = r.fam("kstreams_client_info", "1, labelled with metrics.recording.level. Java: stream-metrics application-id, version, recording-level.", Info, "recording_level")
	for i, op := range threadOps {
		unit := "calls"
		if op == "process" {
			unit = "records"
		}
		f.opTotal[i] = r.fam("kstreams_thread_"+op+"_total", "Total "+unit+" ("+op+"). Java: stream-thread-metrics "+op+"-total (rate: "+op+"-rate).", Info, th...)
		f.opLatency[i] = r.fam("kstreams_thread_"+op+"_latency_seconds", "Time spent in "+op+" (sum and timed calls; sum/count is Java's stream-thread-metrics "+op+"-latency-avg).", Info, th...)
		f.opLatencyMax[i] = r.fam("kstreams_thread_"+op+"_latency_max_seconds", "Longest "+op+" call in the last 30 s. Java: stream-thread-metrics "+op+"-latency-max.", Info, th...)
	}
	f.created = r.fam("kstreams_thread_task_created_total", "Tasks created. Java: stream-thread-metrics task-created-total.", Info, th...)
	f.closed = r.fam("kstreams_thread_task_closed_total", "Tasks closed. Java: stream-thread-metrics task-closed-total.", Info, th...)
	f.start = r.fam("kstreams_thread_start_time_seconds", "When the thread started (Unix seconds). Java: stream-thread-metrics thread-start-time.", Info, th...)
	f.threadDead = r.fam("kstreams_thread_dead_letters_total", "Dead-letter records of output the producer failed to send (no Java metric).", Info, th...)
	f.threadRestored = r.fam("kstreams_thread_restored_records_total", "Changelog records restored into active tasks. Java: stream-state-updater-metrics restore-total (KIP-869).", Info, th...)
	f.taskDropped = r.fam("kstreams_task_dropped_records_total", "Records dropped. Java: stream-task-metrics dropped-records-total.", Info, tk...)
	f.taskRemaining = r.fam("kstreams_task_restore_remaining_records", "Changelog records still to restore. Java: stream-task-metrics restore-remaining-records-total (KIP-869).", Info, tk...)
	f.taskDead = r.fam("kstreams_task_dead_letters_total", "Records sent to errors.dead.letter.queue.topic.name (no Java metric).", Info, tk...)
	f.taskBuffered = r.fam("kstreams_task_active_buffer_count", "Records buffered in the task's partition queues. Java: stream-task-metrics active-buffer-count.", Debug, tk...)
	f.taskProcessed = r.fam("kstreams_task_process_total", "Records processed. Java: stream-task-metrics process-total (rate: process-rate).", Debug, tk...)
	f.taskEnforced = r.fam("kstreams_task_enforced_processing_total", "Records processed while an input partition was empty (max.task.idle.ms passed). Java: stream-task-metrics enforced-processing-total.", Debug, tk...)
	f.taskRestored = r.fam("kstreams_task_restore_total", "Changelog records restored. Java: stream-task-metrics restore-total.", Debug, tk...)
	f.taskLag = r.fam("kstreams_task_records_lag", "Records of the task's input partitions on the broker not fetched yet (Java: the consumer's records-lag, summed over the task's partitions).", Debug, tk...)
	f.asyncInFlight = r.fam("kstreams_task_async_in_flight", "Calls of the task's async steps running (no Java metric).", Info, tk...)
	f.asyncQueued = r.fam("kstreams_task_async_queued", "Records of the task's async steps waiting for their key's earlier record or a free slot (no Java metric).", Info, tk...)
	f.asyncPaused = r.fam("kstreams_task_async_intake_paused_seconds_total", "Time the task took no input because an async step was full (no Java metric).", Info, tk...)
	f.asyncLatency = r.fam("kstreams_async_call_latency_seconds", "Duration of async steps' calls, failed and timed-out ones included (no Java metric).", Info)
	st := []string{"task", "store", "store_type", "op"}
	f.storeLatency = r.fam("kstreams_state_store_latency_seconds", "Time in store calls by operation (label op: put, put-if-absent, put-all, get, delete, range, prefix-scan, all, flush). Java: stream-state-metrics <op>-latency-avg (sum/count) and <op>-rate.", Debug, st...)
	f.storeLatencyMax = r.fam("kstreams_state_store_latency_max_seconds", "Longest store call in the last 30 s by operation. Java: stream-state-metrics <op>-latency-max.", Debug, st...)
	rc := []string{"task", "store"}
	f.cacheHitAvg = r.fam("kstreams_record_cache_hit_ratio_avg", "Average hit ratio of the store's record cache (hits over reads so far, recorded at each hit) since the task started. Java: stream-record-cache-metrics hit-ratio-avg.", Debug, rc...)
	f.cacheHitMin = r.fam("kstreams_record_cache_hit_ratio_min", "Least hit ratio of the store's record cache in the last 30 s. Java: stream-record-cache-metrics hit-ratio-min.", Debug, rc...)
	f.cacheHitMax = r.fam("kstreams_record_cache_hit_ratio_max", "Largest hit ratio of the store's record cache in the last 30 s. Java: stream-record-cache-metrics hit-ratio-max.", Debug, rc...)
	nd := []string{"task", "node"}
	f.nodeProcessed = r.fam("kstreams_node_process_total", "Records the processor node processed. Java: stream-processor-node-metrics process-total (rate: process-rate).", Debug, nd...)
	f.nodeE2EAvg = r.fam("kstreams_node_record_e2e_latency_avg_seconds", "Average end-to-end latency (wall-clock time at processing minus the record's timestamp) of the records reaching a source or terminal node, since the task started. Java: stream-processor-node-metrics record-e2e-latency-avg (KIP-613).", Info, nd...)
	f.nodeE2EMin = r.fam("kstreams_node_record_e2e_latency_min_seconds", "Least end-to-end latency at a source or terminal node in the last 30 s. Java: stream-processor-node-metrics record-e2e-latency-min (KIP-613).", Info, nd...)
	f.nodeE2EMax = r.fam("kstreams_node_record_e2e_latency_max_seconds", "Largest end-to-end latency at a source or terminal node in the last 30 s. Java: stream-processor-node-metrics record-e2e-latency-max (KIP-613).", Info, nd...)
	return f
}

func init() {
	docs = append(docs, []FamilyDoc{
		{"kstreams_client_state", "stream-metrics", "state, client-state", Info},
		{"kstreams_client_alive_stream_threads", "stream-metrics", "alive-stream-threads", Info},
		{"kstreams_client_failed_stream_threads", "stream-metrics", "failed-stream-threads", Info},
		{"kstreams_client_info", "stream-metrics", "application-id, version, recording-level", Info},
	}...)
	for _, op := range threadOps {
		docs = append(docs, FamilyDoc{"kstreams_thread_" + op + "_total", "stream-thread-metrics", op + "-total, " + op + "-rate", Info},
			FamilyDoc{"kstreams_thread_" + op + "_latency_seconds", "stream-thread-metrics", op + "-latency-avg", Info},
			FamilyDoc{"kstreams_thread_" + op + "_latency_max_seconds", "stream-thread-metrics", op + "-latency-max", Info})
	}
	docs = append(docs,
		FamilyDoc{"kstreams_thread_task_created_total", "stream-thread-metrics", "task-created-total, task-created-rate", Info},
		FamilyDoc{"kstreams_thread_task_closed_total", "stream-thread-metrics", "task-closed-total, task-closed-rate", Info},
		FamilyDoc{"kstreams_thread_start_time_seconds", "stream-thread-metrics", "thread-start-time", Info},
		FamilyDoc{"kstreams_thread_restored_records_total", "stream-state-updater-metrics", "restore-total, restore-rate", Info},
		FamilyDoc{"kstreams_thread_dead_letters_total", "", "(none)", Info},
		FamilyDoc{"kstreams_task_dropped_records_total", "stream-task-metrics", "dropped-records-total, dropped-records-rate", Info},
		FamilyDoc{"kstreams_task_restore_remaining_records", "stream-task-metrics", "restore-remaining-records-total", Info},
		FamilyDoc{"kstreams_task_dead_letters_total", "", "(none)", Info},
		FamilyDoc{"kstreams_task_active_buffer_count", "stream-task-metrics", "active-buffer-count", Debug},
		FamilyDoc{"kstreams_task_process_total", "stream-task-metrics", "process-total, process-rate", Debug},
		FamilyDoc{"kstreams_task_enforced_processing_total", "stream-task-metrics", "enforced-processing-total, enforced-processing-rate", Debug},
		FamilyDoc{"kstreams_task_restore_total", "stream-task-metrics", "restore-total, restore-rate", Debug},
		FamilyDoc{"kstreams_task_records_lag", "consumer-fetch-manager-metrics", "records-lag (summed per task)", Debug},
		FamilyDoc{"kstreams_task_async_in_flight", "", "(none)", Info},
		FamilyDoc{"kstreams_task_async_queued", "", "(none)", Info},
		FamilyDoc{"kstreams_task_async_intake_paused_seconds_total", "", "(none)", Info},
		FamilyDoc{"kstreams_async_call_latency_seconds", "", "(none)", Info},
		FamilyDoc{"kstreams_state_store_latency_seconds", "stream-state-metrics", "<op>-latency-avg, <op>-rate", Debug},
		FamilyDoc{"kstreams_state_store_latency_max_seconds", "stream-state-metrics", "<op>-latency-max", Debug},
		FamilyDoc{"kstreams_record_cache_hit_ratio_avg", "stream-record-cache-metrics", "hit-ratio-avg", Debug},
		FamilyDoc{"kstreams_record_cache_hit_ratio_min", "stream-record-cache-metrics", "hit-ratio-min", Debug},
		FamilyDoc{"kstreams_record_cache_hit_ratio_max", "stream-record-cache-metrics", "hit-ratio-max", Debug},
		FamilyDoc{"kstreams_node_process_total", "stream-processor-node-metrics", "process-total, process-rate", Debug},
		FamilyDoc{"kstreams_node_record_e2e_latency_avg_seconds", "stream-processor-node-metrics", "record-e2e-latency-avg", Info},
		FamilyDoc{"kstreams_node_record_e2e_latency_min_seconds", "stream-processor-node-metrics", "record-e2e-latency-min", Info},
		FamilyDoc{"kstreams_node_record_e2e_latency_max_seconds", "stream-processor-node-metrics", "record-e2e-latency-max", Info},
	)
}

// Describe implements prometheus.Collector: none, the registry is an unchecked collector (its
// label values come and go with threads, tasks and stores).
func (r *Registry) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: the families of the recording level, from a
// snapshot.
func (r *Registry) Collect(ch chan<- prometheus.Metric) {
	r.famOnce.Do(func() { r.fams = r.families() })
	f := r.fams
	s := r.Snapshot()
	emit := func(fm family, typ prometheus.ValueType, v float64, lv ...string) {
		if fm.desc != nil && r.Level >= fm.level {
			ch <- prometheus.MustNewConstMetric(fm.desc, typ, v, lv...)
		}
	}
	emit(f.clientState, prometheus.GaugeValue, 1, s.State)
	emit(f.alive, prometheus.GaugeValue, float64(s.AliveThreads))
	emit(f.failed, prometheus.GaugeValue, float64(s.Failed))
	emit(f.info, prometheus.GaugeValue, 1, r.Level.String())
	for _, t := range s.Threads {
		for i, op := range []OpStats{t.Process, t.Poll, t.Commit, t.Punctuate} {
			emit(f.opTotal[i], prometheus.CounterValue, float64(op.Total), t.Name)
			emit(f.opLatencyMax[i], prometheus.GaugeValue, op.LatencyMax.Seconds(), t.Name)
		}
		for i, o := range []*Op{&t.th.Process, &t.th.Poll, &t.th.Commit, &t.th.Punctuate} {
			ch <- prometheus.MustNewConstSummary(f.opLatency[i].desc, uint64(o.timed.Load()), float64(o.sumNs.Load())/1e9, nil, t.Name)
		}
		emit(f.created, prometheus.CounterValue, float64(t.TasksCreated), t.Name)
		emit(f.closed, prometheus.CounterValue, float64(t.TasksClosed), t.Name)
		emit(f.start, prometheus.GaugeValue, float64(t.Start.UnixNano())/1e9, t.Name)
		emit(f.threadDead, prometheus.CounterValue, float64(t.DeadLetters), t.Name)
		emit(f.threadRestored, prometheus.CounterValue, float64(t.Restored), t.Name)
		for _, k := range t.Tasks {
			if k.Kind == "standby" {
				continue
			}
			emit(f.taskDropped, prometheus.CounterValue, float64(k.Dropped), t.Name, k.ID.String())
			emit(f.taskRemaining, prometheus.GaugeValue, float64(k.RestoreRemaining), t.Name, k.ID.String())
			emit(f.taskDead, prometheus.CounterValue, float64(k.DeadLetters), t.Name, k.ID.String())
			emit(f.taskBuffered, prometheus.GaugeValue, float64(k.Buffered), t.Name, k.ID.String())
			emit(f.taskProcessed, prometheus.CounterValue, float64(k.Processed), t.Name, k.ID.String())
			emit(f.taskEnforced, prometheus.CounterValue, float64(k.Enforced), t.Name, k.ID.String())
			emit(f.taskRestored, prometheus.CounterValue, float64(k.Restored), t.Name, k.ID.String())
			if k.Lag >= 0 {
				emit(f.taskLag, prometheus.GaugeValue, float64(k.Lag), t.Name, k.ID.String())
			}
			if k.Async {
				emit(f.asyncInFlight, prometheus.GaugeValue, float64(k.AsyncInFlight), t.Name, k.ID.String())
				emit(f.asyncQueued, prometheus.GaugeValue, float64(k.AsyncQueued), t.Name, k.ID.String())
				emit(f.asyncPaused, prometheus.CounterValue, k.AsyncPaused.Seconds(), t.Name, k.ID.String())
			}
		}
	}
	if h := &r.asyncCalls; h.count.Load() > 0 {
		buckets := make(map[float64]uint64, len(asyncBuckets))
		var cum uint64
		for i, ub := range asyncBuckets {
			cum += h.counts[i].Load()
			buckets[ub] = cum
		}
		ch <- prometheus.MustNewConstHistogram(f.asyncLatency.desc, h.count.Load(), float64(h.sumNs.Load())/1e9, buckets)
	}
	for _, n := range s.Nodes {
		emit(f.nodeProcessed, prometheus.CounterValue, float64(n.Process.Total), n.Task.String(), n.Node)
		if n.E2E.Count > 0 {
			emit(f.nodeE2EAvg, prometheus.GaugeValue, n.E2E.Avg/1e3, n.Task.String(), n.Node)
			emit(f.nodeE2EMin, prometheus.GaugeValue, float64(n.E2E.Min)/1e3, n.Task.String(), n.Node)
			emit(f.nodeE2EMax, prometheus.GaugeValue, float64(n.E2E.Max)/1e3, n.Task.String(), n.Node)
		}
	}
	if r.Level >= Debug {
		r.mu.Lock()
		stores := make([]*StoreOps, 0, len(r.stores))
		for _, st := range r.stores {
			stores = append(stores, st)
		}
		r.mu.Unlock()
		for _, st := range s.Stores {
			for op, os := range st.Ops {
				emit(f.storeLatencyMax, prometheus.GaugeValue, os.LatencyMax.Seconds(), st.Task.String(), st.Store, st.Type, op)
			}
			if hr := st.CacheHitRatio; hr.Count > 0 {
				emit(f.cacheHitAvg, prometheus.GaugeValue, hr.Avg, st.Task.String(), st.Store)
				emit(f.cacheHitMin, prometheus.GaugeValue, hr.Min, st.Task.String(), st.Store)
				emit(f.cacheHitMax, prometheus.GaugeValue, hr.Max, st.Task.String(), st.Store)
			}
		}
		for _, st := range stores {
			for i := range st.ops {
				o := &st.ops[i]
				if n := o.timed.Load(); n > 0 {
					ch <- prometheus.MustNewConstSummary(f.storeLatency.desc, uint64(n), float64(o.sumNs.Load())/1e9, nil,
						st.Task.String(), st.Store, st.Type, StoreOp(i).String())
				}
			}
		}
	}
}
