package kafka

import (
	"context"
	"errors"

	"github.com/IBM/sarama"
)

// Retriable reports whether a later attempt of the request that failed with err may succeed:
// Kafka's retriable error codes (those Java maps to a RetriableException), and transport
// errors (a closed or broken connection, a timeout). Context errors, ErrClosed and every other
// error code are not.
func Retriable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
		return false
	}
	var ke sarama.KError
	if errors.As(err, &ke) {
		return RetriableCode(ke)
	}
	var pe sarama.PacketEncodingError
	if errors.As(err, &pe) {
		return false
	}
	var pd sarama.PacketDecodingError
	if errors.As(err, &pd) {
		return false
	}
	if errors.Is(err, sarama.ErrUnsupportedVersion) {
		return false
	}
	// Transport errors: io.EOF, net.Error, sarama.ErrNotConnected, ErrOutOfBrokers, ...
	return true
}

// RetriableCode reports whether Kafka error code k is retriable (Java: the error's exception
// extends RetriableException).
func RetriableCode(k sarama.KError) bool {
	switch k {
	case sarama.ErrInvalidMessage, // CORRUPT_MESSAGE
		sarama.ErrUnknownTopicOrPartition,
		sarama.ErrLeaderNotAvailable,
		sarama.ErrNotLeaderForPartition,
		sarama.ErrRequestTimedOut,
		sarama.ErrNetworkException,
		sarama.ErrOffsetsLoadInProgress,
		sarama.ErrConsumerCoordinatorNotAvailable,
		sarama.ErrNotCoordinatorForConsumer,
		sarama.ErrNotEnoughReplicas,
		sarama.ErrNotEnoughReplicasAfterAppend,
		sarama.ErrNotController,
		sarama.ErrConcurrentTransactions,
		sarama.ErrKafkaStorageError,
		sarama.ErrFetchSessionIDNotFound,
		sarama.ErrInvalidFetchSessionEpoch,
		sarama.ErrListenerNotFound,
		sarama.ErrFencedLeaderEpoch,
		sarama.ErrUnknownLeaderEpoch,
		sarama.ErrOffsetNotAvailable,
		sarama.ErrPreferredLeaderNotAvailable,
		sarama.ErrEligibleLeadersNotAvailable,
		sarama.ErrUnstableOffsetCommit,
		sarama.ErrThrottlingQuotaExceeded,
		sarama.KError(100), // UNKNOWN_TOPIC_ID
		sarama.KError(103): // INCONSISTENT_TOPIC_ID
		return true
	}
	return false
}

// StaleMetadata reports error codes that mean the client's metadata is out of date (a leader
// moved, a coordinator moved, a topic is new): refresh it, then retry.
func StaleMetadata(k sarama.KError) bool {
	switch k {
	case sarama.ErrUnknownTopicOrPartition, sarama.ErrLeaderNotAvailable, sarama.ErrNotLeaderForPartition,
		sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch, sarama.ErrKafkaStorageError,
		sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable,
		sarama.ErrListenerNotFound, sarama.KError(100), sarama.KError(103):
		return true
	}
	return false
}

// AuthError reports authorization and authentication failures, which no retry cures and which
// Java surfaces as fatal errors naming the resource.
func AuthError(err error) bool {
	for _, k := range []sarama.KError{sarama.ErrTopicAuthorizationFailed, sarama.ErrGroupAuthorizationFailed,
		sarama.ErrClusterAuthorizationFailed, sarama.ErrTransactionalIDAuthorizationFailed, sarama.ErrSASLAuthenticationFailed,
		sarama.ErrDelegationTokenAuthorizationFailed} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
