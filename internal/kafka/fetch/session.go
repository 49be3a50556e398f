package fetch

import (
	"math"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// fetchVersion is the version of the Fetch requests sent through sarama: 12 is the last that
// names topics (13 uses topic ids) and the last sarama v1.61.1 encodes; Kafka 4 accepts 4 and
// up, kfake too. The loop's own requests are recordbatch.FetchVersion (11).
const fetchVersion = 12

// want is one partition of a fetch request: what is asked for it.
type want struct {
	p  *part
	tp kafka.TopicPartition
	sessPart
}

// sessPart is what a fetch session holds for a partition; a change of any field makes it
// part of the next incremental request.
type sessPart struct {
	offset      int64
	maxBytes    int32
	leaderEpoch int32
}

// session is the client side of one broker's incremental fetch session (KIP-227; Java:
// FetchSessionHandler). A partition leaving the session (paused with a chunk held,
// unassigned, moved to another leader, in a retry backoff) is named among the forgotten
// partitions of the next incremental request when forget is set (the loop's own Fetch
// encoding). sarama's FetchRequest cannot send them, so without forget such a partition makes
// the next request a full one that closes the session and opens a new one.
//
// The protocol: SessionID 0 with epoch 0 asks for a new session; the broker answers with its
// id (or 0: no session, the next request is full again). Then epochs 1, 2, ... carry the id
// and list only partitions added or changed, and those forgotten; partitions not listed are
// fetched as the broker remembers them. SessionID x with epoch 0 closes session x and opens a
// new one; epoch -1 closes without opening one (sessionless).
type session struct {
	forget bool // leaving partitions are forgotten in incremental requests
	id     int32
	epoch  int32 // epoch of the next request; 0: it is full
	parts  map[kafka.TopicPartition]sessPart
	send   []want
	forgot []kafka.TopicPartition // of the last incremental request built
	in     map[kafka.TopicPartition]struct{}
}

// build returns the session id and epoch of the next request for ws, whether it is full, and
// the partitions it lists: all of ws when full, else those added or changed (and, with
// forget, those of the session not in ws in s.forgot). The returned slice is reused by the
// next build.
func (s *session) build(ws []want) (id, epoch int32, full bool, send []want) {
	s.forgot = s.forgot[:0]
	full = s.id == 0 || s.epoch <= 0
	if !full {
		// Incremental if every partition of the session stays in it, or leaving ones can
		// be forgotten.
		kept := 0
		for i := range ws {
			if _, ok := s.parts[ws[i].tp]; ok {
				kept++
			}
		}
		if kept < len(s.parts) {
			if !s.forget {
				full = true
			} else {
				if s.in == nil {
					s.in = make(map[kafka.TopicPartition]struct{}, len(ws))
				}
				clear(s.in)
				for i := range ws {
					s.in[ws[i].tp] = struct{}{}
				}
				for tp := range s.parts {
					if _, ok := s.in[tp]; !ok {
						s.forgot = append(s.forgot, tp)
					}
				}
			}
		}
	}
	if full {
		return s.id, 0, true, ws
	}
	s.send = s.send[:0]
	for i := range ws {
		if sp, ok := s.parts[ws[i].tp]; !ok || sp != ws[i].sessPart {
			s.send = append(s.send, ws[i])
		}
	}
	return s.id, s.epoch, false, s.send
}

// answered records a response without a top-level error to a request built from ws.
func (s *session) answered(full bool, respID int32, ws []want) {
	if respID == 0 {
		// No session (the broker has no room, or closed it): the next request is full.
		s.reset()
		return
	}
	if full || s.parts == nil {
		if s.parts == nil {
			s.parts = make(map[kafka.TopicPartition]sessPart, len(ws))
		}
		clear(s.parts)
		s.id, s.epoch = respID, 1
	} else {
		s.epoch = nextEpoch(s.epoch)
		for _, tp := range s.forgot {
			delete(s.parts, tp)
		}
	}
	s.forgot = s.forgot[:0]
	for i := range ws {
		s.parts[ws[i].tp] = ws[i].sessPart
	}
}

// failed records a top-level error or a failed request: the next request is full. After
// FETCH_SESSION_ID_NOT_FOUND it asks for a new session; otherwise it closes the old one too.
func (s *session) failed(k sarama.KError) {
	if k == sarama.ErrFetchSessionIDNotFound {
		s.reset()
		return
	}
	s.epoch = 0
	clear(s.parts)
}

func (s *session) reset() {
	s.id, s.epoch = 0, 0
	clear(s.parts)
}

// nextEpoch is the epoch after e: 1 follows MaxInt32.
func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}
