package streamsgroup

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// Kafka error codes of the streams group protocol that sarama does not name.
const (
	ErrStreamsInvalidTopology      = sarama.KError(130) // STREAMS_INVALID_TOPOLOGY
	ErrStreamsInvalidTopologyEpoch = sarama.KError(131) // STREAMS_INVALID_TOPOLOGY_EPOCH
	ErrStreamsTopologyFenced       = sarama.KError(132) // STREAMS_TOPOLOGY_FENCED
)

var codeNames = map[sarama.KError]string{
	ErrStreamsInvalidTopology:      "STREAMS_INVALID_TOPOLOGY",
	ErrStreamsInvalidTopologyEpoch: "STREAMS_INVALID_TOPOLOGY_EPOCH",
	ErrStreamsTopologyFenced:       "STREAMS_TOPOLOGY_FENCED",
}

// ErrUnsupported is wrapped by the error of a request the broker does not support (its
// ApiVersions answer lacks the API key or the versions we send): a broker older than 4.1, or
// one without the streams rebalance protocol enabled.
var ErrUnsupported = errors.New("streamsgroup: the broker does not support the request")

// ErrAuthentication is wrapped by a refused SASL handshake or authentication.
var ErrAuthentication = errors.New("streamsgroup: SASL authentication failed")

// ResponseError is a Kafka error code in a response: errors.Is(err, sarama.KError) holds, e.g.
// errors.Is(err, sarama.ErrGroupIDNotFound).
type ResponseError struct {
	// API is the request ("StreamsGroupHeartbeat", ...).
	API string
	// GroupID is the group concerned.
	GroupID string
	// Code is the error code.
	Code sarama.KError
	// Message is the broker's error message, "" when none.
	Message string
}

// Error implements error.
func (e *ResponseError) Error() string {
	name := codeNames[e.Code]
	if name == "" {
		name = e.Code.Error()
	}
	s := fmt.Sprintf("group %q: %s: %s", e.GroupID, e.API, name)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the sarama.KError.
func (e *ResponseError) Unwrap() error { return e.Code }

func responseError(api, group string, code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	e := &ResponseError{API: api, GroupID: group, Code: sarama.KError(code)}
	if msg != nil {
		e.Message = *msg
	}
	return e
}

// Err returns the response's error code as a *ResponseError, nil when none.
func (r *HeartbeatResponse) Err(groupID string) error {
	return responseError("StreamsGroupHeartbeat", groupID, r.ErrorCode, r.ErrorMessage)
}

// Err returns the group's error code as a *ResponseError, nil when none.
func (g *DescribedGroup) Err() error {
	return responseError("StreamsGroupDescribe", g.GroupID, g.ErrorCode, g.ErrorMessage)
}
