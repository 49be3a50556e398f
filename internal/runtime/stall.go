package runtime

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/IBM/sarama"
)

// hasDeliverable reports whether a fetch of topic-partition p from offset (read_committed
// under exactly-once) holds a record the consumer would hand out: a record at or after offset
// in a batch that is neither a control batch (transaction marker) nor part of an aborted
// transaction. A partition written transactionally ends with a commit marker, and may hold
// aborted records, so its high watermark is beyond the consumer's position although nothing is
// left to deliver; only a deliverable record means that the consumer is stuck.
func (th *thread) hasDeliverable(topic string, p int32, offset int64) (bool, error) {
	leader, err := th.client.Leader(topic, p)
	if err != nil {
		return false, err
	}
	req := &sarama.FetchRequest{MinBytes: 1, MaxWaitTime: 10, MaxBytes: 1 << 20}
	switch v := th.sconf.Version; {
	case v.IsAtLeast(sarama.V2_7_0_0):
		req.Version = 12
	case v.IsAtLeast(sarama.V2_1_0_0):
		req.Version = 10
	default:
		req.Version = 4
	}
	req.Isolation = th.sconf.Consumer.IsolationLevel
	req.AddBlock(topic, p, offset, 1<<20, -1)
	resp, err := leader.Fetch(req)
	if err != nil {
		return false, err
	}
	b := resp.GetBlock(topic, p)
	if b == nil {
		return false, fmt.Errorf("fetch %s-%d: no partition in the response", topic, p)
	}
	switch b.Err {
	case sarama.ErrNoError:
	case sarama.ErrOffsetOutOfRange:
		// The consumer should have given up on this offset and been reset.
		return true, nil
	default:
		return false, b.Err
	}
	readCommitted := req.Isolation == sarama.ReadCommitted
	abortedTxns := append([]*sarama.AbortedTransaction(nil), b.AbortedTransactions...)
	sort.Slice(abortedTxns, func(i, j int) bool { return abortedTxns[i].FirstOffset < abortedTxns[j].FirstOffset })
	aborting := map[int64]bool{}
	for _, rs := range b.RecordsSet {
		rb := rs.RecordBatch
		if rb == nil {
			if rs.MsgSet != nil && len(rs.MsgSet.Messages) > 0 {
				return true, nil // legacy message format: never transactional
			}
			continue
		}
		for len(abortedTxns) > 0 && abortedTxns[0].FirstOffset <= rb.LastOffset() {
			aborting[abortedTxns[0].ProducerID] = true
			abortedTxns = abortedTxns[1:]
		}
		if rb.Control {
			// Control record key: int16 version, int16 type (0 abort, 1 commit).
			if len(rb.Records) > 0 && len(rb.Records[0].Key) >= 4 && binary.BigEndian.Uint16(rb.Records[0].Key[2:4]) == 0 {
				delete(aborting, rb.ProducerID)
			}
			continue
		}
		if readCommitted && rb.IsTransactional && aborting[rb.ProducerID] {
			continue
		}
		if rb.LastOffset() >= offset && (len(rb.Records) > 0 || rb.PartialTrailingRecord) {
			return true, nil
		}
	}
	return false, nil
}
