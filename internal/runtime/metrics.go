package runtime

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus metrics of a runtime, labelled by thread (Java's thread-level
// and task-level metric groups, named in Prometheus style).
type Metrics struct {
	processed      *prometheus.CounterVec
	processTime    *prometheus.HistogramVec
	commitLatency  *prometheus.HistogramVec
	restored       *prometheus.CounterVec
	tasks          *prometheus.GaugeVec
	standbyUpdated *prometheus.CounterVec
	dropped        *prometheus.GaugeVec
	standbyTasks   *prometheus.GaugeVec
	enforced       *prometheus.CounterVec
	lag            *prometheus.GaugeVec
	pollTimeouts   *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
// Errors: the registry's (e.g. already registered).
func NewMetrics(reg prometheus.Registerer, appID string) (*Metrics, error) {
	cl := prometheus.Labels{"application_id": appID}
	m := &Metrics{
		processed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kstreams_records_processed_total",
			Help: "Records processed (Java: process-total).", ConstLabels: cl}, []string{"thread"}),
		processTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kstreams_process_batch_seconds",
			Help: "Time to process one batch of records across the thread's tasks.", ConstLabels: cl}, []string{"thread"}),
		commitLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kstreams_commit_latency_seconds",
			Help: "Commit latency (Java: commit-latency).", ConstLabels: cl}, []string{"thread"}),
		restored: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kstreams_restored_records_total",
			Help: "Changelog records restored into stores (Java: restore-total).", ConstLabels: cl}, []string{"thread"}),
		tasks: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kstreams_active_tasks",
			Help: "Active tasks owned by the thread.", ConstLabels: cl}, []string{"thread"}),
		dropped: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kstreams_dropped_records",
			Help:        "Records dropped by the thread's current tasks (negative timestamps, handlers that continue; Java: dropped-records-total).",
			ConstLabels: cl}, []string{"thread"}),
		standbyTasks: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kstreams_standby_tasks",
			Help: "Standby tasks owned by the thread.", ConstLabels: cl}, []string{"thread"}),
		enforced: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kstreams_enforced_processing_total",
			Help:        "Records a task processed while one of its input partitions was empty because max.task.idle.ms had passed (Java: enforced-processing-total).",
			ConstLabels: cl}, []string{"thread", "task"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kstreams_records_lag",
			Help:        "Records of an input partition of an active task on the broker not yet handed to the task: end offset (last stable offset under exactly-once) minus position, as of the last fetch (Java consumer: records-lag).",
			ConstLabels: cl}, []string{"thread", "task", "topic", "partition"}),
		standbyUpdated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kstreams_standby_records_total",
			Help: "Changelog records applied to standby tasks (Java: update-total).", ConstLabels: cl}, []string{"thread"}),
		pollTimeouts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kstreams_poll_timeouts_total",
			Help:        "Times the thread's group member left (or lost) the group because the thread did not poll within max.poll.interval.ms; its tasks were closed without commit.",
			ConstLabels: cl}, []string{"thread"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.processed, m.processTime, m.commitLatency, m.restored, m.tasks, m.standbyUpdated, m.dropped,
			m.standbyTasks, m.enforced, m.lag, m.pollTimeouts} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
