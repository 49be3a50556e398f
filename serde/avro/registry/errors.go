package registry

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors wrapped by *Error, one per way a caller reacts; test for them with
// errors.Is. Error.Code tells the registry's error codes apart within one sentinel.
var (
	// ErrNotFound: the subject, the version or the schema does not exist (error codes 40401
	// subject not found, 40402 version not found, 40403 schema not found). A serializer
	// without auto-registration gets it for a schema not registered under its subject, a
	// deserializer for data naming a schema id the registry does not have. Java: the
	// RestClientException with those codes.
	ErrNotFound = errors.New("not found")
	// ErrRejected: the registry refused a schema or a parameter: the schema is incompatible
	// with the subject's earlier versions under its compatibility level (HTTP 409, error code
	// 409), it is invalid (error code 42201), a version is neither "latest" nor a positive
	// number (42202) or a compatibility level is unknown (42203). Fix the schema or the
	// subject's compatibility level; retrying does not help.
	ErrRejected = errors.New("rejected")
	// ErrUnauthorized: the registry refused the credentials (HTTP 401 or 403). Java:
	// basic.auth.user.info.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnavailable: no registry answered (connection refused, timeout, TLS failure) or it
	// answered with a server error (HTTP 5xx, error codes 500xx). Retrying later may help.
	ErrUnavailable = errors.New("registry unavailable")
	// ErrBadResponse: the answer is not one a Schema Registry gives (a status without a
	// known error code, a body that is not the expected JSON): usually a URL that points
	// elsewhere, e.g. Apicurio without /apis/ccompat/v7.
	ErrBadResponse = errors.New("unexpected registry response")
)

// Error is the error every registry operation returns, also wrapped in the serdes' errors. It
// keeps the HTTP status and the registry's error code for callers; its message names the
// operation, the subject, schema id or version it concerned, the request URL and the
// registry's message. Unwrap yields the sentinel and the underlying cause (e.g. a
// *url.Error), so both errors.Is(err, ErrNotFound) and errors.As(err, &netErr) work. Java
// counterpart: io.confluent.kafka.schemaregistry.client.rest.exceptions.RestClientException
// (getStatus, getErrorCode).
type Error struct {
	// Status is the HTTP status of the answer; 0 when no answer arrived.
	Status int
	// Code is the registry's error_code (e.g. 40401, 409, 42201, 50001); 0 when the answer
	// had none.
	Code int

	op      string // e.g. "register schema under", "get schema by"
	subject string // "" when the operation has none
	id      int    // schema id, 0 when the operation has none
	version string // "latest", "3", or "" when the operation has none
	url     string // the request URL (without credentials)
	message string // the registry's message
	err     error  // sentinel error of this package
	cause   error  // underlying error (network, JSON), may be nil
}

// Error formats as, for example,
// `schema registry: get schema by id 42: not found (HTTP 404, error code 40403: Schema 42 not found)`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("schema registry: ")
	b.WriteString(e.op)
	if e.subject != "" {
		fmt.Fprintf(&b, " subject %q", e.subject)
	}
	if e.version != "" {
		fmt.Fprintf(&b, " version %s", e.version)
	}
	if e.id != 0 {
		fmt.Fprintf(&b, " id %d", e.id)
	}
	b.WriteString(": ")
	b.WriteString(e.err.Error())
	switch {
	case e.Status != 0 && e.Code != 0:
		fmt.Fprintf(&b, " (HTTP %d, error code %d: %s)", e.Status, e.Code, e.message)
	case e.Status != 0:
		fmt.Fprintf(&b, " (HTTP %d from %s)", e.Status, e.url)
	}
	if e.cause != nil {
		fmt.Fprintf(&b, ": %v", e.cause)
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.err}
	}
	return []error{e.err, e.cause}
}

// sentinelFor maps a registry answer to a sentinel error.
func sentinelFor(status, code int) error {
	switch code {
	case 40401, 40402, 40403:
		return ErrNotFound
	case 409, 42201, 42202, 42203:
		return ErrRejected
	}
	switch {
	case status == 401 || status == 403:
		return ErrUnauthorized
	case status == 409:
		return ErrRejected
	case status >= 500 || code >= 50000:
		return ErrUnavailable
	case status == 422:
		return ErrRejected
	}
	return ErrBadResponse
}
