package runtime

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Assignor error codes, carried in the ErrorCode field of the subscription and of the
// assignment user data. The values are Java's AssignorError codes.
const (
	// assignorErrorShutdownRequested: an instance's uncaught-error handler answered
	// ShutdownApplication. In a subscription it asks the group leader to stop the application;
	// in an assignment it tells the member to shut its instance down.
	// Java: AssignorError.SHUTDOWN_REQUESTED (4).
	assignorErrorShutdownRequested int32 = 4
)

// shutdownResendInterval is how often a thread of an instance that requested the application's
// shutdown, and has not received the group's answer yet, forces a rebalance again to carry the
// request (as Java's StreamThread.maybeSendShutdown, which enforces a rebalance at most every
// 10 s).
const shutdownResendInterval = 10 * time.Second

// ErrApplicationShutdown is the error an instance ends with when another instance of its
// application (or this one) requested the shutdown of the whole application: its uncaught-error
// handler answered ShutdownApplication, and the group leader answered every member with the
// error code SHUTDOWN_REQUESTED. Java: AssignorError.SHUTDOWN_REQUESTED.
var ErrApplicationShutdown = errors.New("kstreams: an instance of the application requested the shutdown of the whole application")

// appShutdown is an instance's part of the application-wide shutdown (Java's KIP-671): the
// assignment error code its threads announce in their subscriptions, shared by all of them as
// Java's ReferenceContainer.assignmentErrorCode is, and whether the group's answer arrived.
type appShutdown struct {
	// code is the instance's assignor error code: assignorErrorShutdownRequested once a
	// thread's handler answered ShutdownApplication or an assignment carried that code.
	code atomic.Int32
	// received is set when a thread received an assignment with assignorErrorShutdownRequested.
	// From then on the instance's classic members do not leave the group when their threads
	// stop (group.Config.RemainInGroup), as Java's do not (Kafka Streams closes its consumers
	// with REMAIN_IN_GROUP unless asked to leave): a LeaveGroup right after this instance's
	// SyncGroup would start a rebalance at once, and a member of another instance whose
	// SyncGroup answer was still to come would get REBALANCE_IN_PROGRESS instead of its
	// SHUTDOWN_REQUESTED assignment, rejoin with no request left in any subscription, and go on
	// processing. The coordinator expires the members after the session timeout.
	received atomic.Bool

	mu sync.Mutex
	// sent is, per thread index, when the thread last forced a rebalance for the request.
	sent map[int]time.Time
}

// requestApplicationShutdown records that thread idx's handler answered ShutdownApplication for
// err: every thread of this instance announces the request in its next subscription and forces
// a rebalance so the group leader sees it. Java: KafkaStreams' SHUTDOWN_APPLICATION response,
// StreamThread.sendShutdownRequest.
func (r *Runtime) requestApplicationShutdown(idx int, err error) {
	r.shutdown.code.Store(assignorErrorShutdownRequested)
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.log.Error("stream thread failed; requesting the shutdown of the whole application", "thread", idx, "error", err)
}

// maybeSendShutdown reports whether the thread should rejoin the group now, with the shutdown
// request in its subscription: this instance requested the application's shutdown and the
// group has not answered yet; at most once per shutdownResendInterval per thread. Java:
// StreamThread.maybeSendShutdown.
func (m *membership) maybeSendShutdown() bool {
	s := &m.rt.shutdown
	if s.code.Load() != assignorErrorShutdownRequested || s.received.Load() {
		return false
	}
	now := time.Now()
	s.mu.Lock()
	if last, ok := s.sent[m.idx]; ok && now.Sub(last) < shutdownResendInterval {
		s.mu.Unlock()
		return false
	}
	if s.sent == nil {
		s.sent = map[int]time.Time{}
	}
	s.sent[m.idx] = now
	s.mu.Unlock()
	m.log.Warn("this instance requested the shutdown of the application; rejoining the group to announce it")
	return true
}

// checkShutdownAssignment acts on the error code of the assignment the thread just received:
// SHUTDOWN_REQUESTED shuts this instance down to its error state (Config.OnApplicationShutdown,
// or the runtime stops its threads itself when that is nil). The thread's new assignment is
// empty then. Java: StreamsRebalanceListener.onPartitionsAssigned -> StreamThread.shutdownToError.
func (m *membership) checkShutdownAssignment() {
	if m.assignor.lastAssignment().errorCode != assignorErrorShutdownRequested {
		return
	}
	m.rt.applicationShutdownReceived("error code SHUTDOWN_REQUESTED in the assignment of " + m.name)
}

// applicationShutdownReceived acts on the group's answer to a shutdown request, received by
// how it came (for the error): a classic assignment's SHUTDOWN_REQUESTED, or the streams
// group's status SHUTDOWN_APPLICATION (from the member's heartbeat goroutine). The first call shuts the
// instance down to its error state; it does not block.
func (r *Runtime) applicationShutdownReceived(how string) {
	first := r.shutdown.received.CompareAndSwap(false, true)
	// Keep announcing the request should a thread rejoin before it stops (Java keeps the
	// received code for the next subscription too).
	r.shutdown.code.Store(assignorErrorShutdownRequested)
	if !first {
		return
	}
	err := fmt.Errorf("%w (%s)", ErrApplicationShutdown, how)
	r.log.Error("an instance of the application requested its shutdown; shutting down this instance", "received", how)
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	if r.cfg.OnApplicationShutdown != nil {
		r.cfg.OnApplicationShutdown(err)
	} else if r.cancel != nil {
		r.cancel()
	}
}
