package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/oauthbearer"
)

// Retriable reports whether a later attempt of the request that failed with err may succeed:
// Kafka's retriable error codes (those Java maps to a RetriableException), and transport
// errors (a closed or broken connection, a timeout). Context errors, ErrClosed, every other
// error code and the authentication failures of [AuthError] (a TLS handshake refused over a
// certificate is no passing network trouble) are not.
func Retriable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) || AuthError(err) {
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
// Java surfaces as fatal errors naming the resource: the authorization error codes
// (TOPIC_AUTHORIZATION_FAILED, GROUP_..., CLUSTER_..., TRANSACTIONAL_ID_...,
// DELEGATION_TOKEN_...), SASL_AUTHENTICATION_FAILED, an OAUTHBEARER token provider that failed
// with no valid token left (oauthbearer.ErrProvider), and TLS handshakes that failed over a
// certificate: the broker's that this client does not trust (*tls.CertificateVerificationError:
// unknown authority, wrong host name, expired), or this client's that the broker refused (the
// broker's alert bad_certificate, unsupported_certificate, certificate_revoked,
// certificate_expired, certificate_unknown, unknown_ca, access_denied or
// certificate_required). Java: AuthorizationException and AuthenticationException
// (SaslAuthenticationException, SslAuthenticationException).
func AuthError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, oauthbearer.ErrProvider) {
		return true
	}
	for _, k := range []sarama.KError{sarama.ErrTopicAuthorizationFailed, sarama.ErrGroupAuthorizationFailed,
		sarama.ErrClusterAuthorizationFailed, sarama.ErrTransactionalIDAuthorizationFailed, sarama.ErrSASLAuthenticationFailed,
		sarama.ErrDelegationTokenAuthorizationFailed} {
		if errors.Is(err, k) {
			return true
		}
	}
	return TLSAuthError(err)
}

// ConnectError wraps err, a failure to connect to the bootstrap servers brokers, saying so,
// and naming a TLS handshake that failed over a certificate an authentication failure (the
// handshake's own words, "remote error: tls: bad certificate", do not say whose certificate:
// the broker refused this client's).
func ConnectError(brokers []string, err error) error {
	if TLSAuthError(err) {
		var cv *tls.CertificateVerificationError
		whose := "the broker refused this client's certificate"
		if errors.As(err, &cv) {
			whose = "this client does not trust the broker's certificate"
		}
		return fmt.Errorf("connect to %v: TLS authentication failed (%s): %w", brokers, whose, err)
	}
	return fmt.Errorf("connect to %v: %w", brokers, err)
}

// certificateAlerts are the TLS alerts (RFC 8446 section 6.2) with which a peer refuses a
// certificate.
var certificateAlerts = []tls.AlertError{42, 43, 44, 45, 46, 48, 49, 116}

// TLSAuthError reports a TLS handshake that failed over a certificate (see [AuthError]).
func TLSAuthError(err error) bool {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return true
	}
	// crypto/tls reports an alert from the peer as a *net.OpError "remote error" around a
	// value of an unexported type whose text is the alert's (tls.AlertError gives the same).
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil {
		msg := op.Err.Error()
		for _, a := range certificateAlerts {
			if msg == a.Error() {
				return true
			}
		}
	}
	var ae tls.AlertError
	if errors.As(err, &ae) {
		for _, a := range certificateAlerts {
			if ae == a {
				return true
			}
		}
	}
	return false
}
