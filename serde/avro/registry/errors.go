package registry

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors wrapped by *Error; test for them with errors.Is. Each names the Confluent
// error code (the "error_code" of the JSON error body) it stands for.
var (
	// ErrSubjectNotFound: the subject has no versions (error code 40401).
	ErrSubjectNotFound = errors.New("subject not found")
	// ErrVersionNotFound: the subject has no such version (error code 40402).
	ErrVersionNotFound = errors.New("version not found")
	// ErrSchemaNotFound: no schema has that id, or the schema is not registered under
	// the subject (error code 40403).
	ErrSchemaNotFound = errors.New("schema not found")
	// ErrIncompatible: the schema is incompatible with earlier versions under the
	// subject's compatibility level (HTTP 409, error code 409).
	ErrIncompatible = errors.New("incompatible schema")
	// ErrInvalidSchema: the registry rejected the schema text (error code 42201).
	ErrInvalidSchema = errors.New("invalid schema")
	// ErrInvalidVersion: the version is not "latest" nor a positive integer (error code 42202).
	ErrInvalidVersion = errors.New("invalid version")
	// ErrInvalidCompatibilityLevel: unknown compatibility level (error code 42203).
	ErrInvalidCompatibilityLevel = errors.New("invalid compatibility level")
	// ErrUnauthorized: the registry refused the credentials (HTTP 401 or 403).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnavailable: no registry answered (connection refused, timeout, TLS failure)
	// or it answered with a server error (HTTP 5xx, error codes 500xx).
	ErrUnavailable = errors.New("registry unavailable")
	// ErrBadResponse: the registry answered with a status or body this client does not
	// understand.
	ErrBadResponse = errors.New("unexpected registry response")
)

// Error is the error every Client method returns. It names the operation and what it
// concerned (subject, schema id, version), and carries the HTTP status and the registry's
// error code and message when there was an answer. Unwrap yields the sentinel (Err) and the
// underlying cause (Cause, e.g. a *url.Error), so both errors.Is(err, ErrSchemaNotFound) and
// errors.As(err, &netErr) work. Java counterpart:
// io.confluent.kafka.schemaregistry.client.rest.exceptions.RestClientException
// (getStatus, getErrorCode).
type Error struct {
	Op      string // e.g. "register schema", "get schema by id"
	Subject string // "" when the operation has none
	ID      int    // schema id, 0 when the operation has none
	Version string // "latest", "3", or "" when the operation has none
	URL     string // the request URL (without credentials)
	Status  int    // HTTP status, 0 when no response arrived
	Code    int    // registry error_code, 0 when absent
	Message string // registry message
	Err     error  // sentinel error of this package
	Cause   error  // underlying error (network, JSON), may be nil
}

// Error formats as, for example,
// `schema registry: get schema by id 42: schema not found (HTTP 404, error code 40403: Schema 42 not found)`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("schema registry: ")
	b.WriteString(e.Op)
	if e.Subject != "" {
		fmt.Fprintf(&b, " subject %q", e.Subject)
	}
	if e.Version != "" {
		fmt.Fprintf(&b, " version %s", e.Version)
	}
	if e.ID != 0 {
		fmt.Fprintf(&b, " id %d", e.ID)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	switch {
	case e.Status != 0 && e.Code != 0:
		fmt.Fprintf(&b, " (HTTP %d, error code %d: %s)", e.Status, e.Code, e.Message)
	case e.Status != 0:
		fmt.Fprintf(&b, " (HTTP %d from %s)", e.Status, e.URL)
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// sentinelFor maps a registry answer to a sentinel error.
func sentinelFor(status, code int) error {
	switch code {
	case 40401:
		return ErrSubjectNotFound
	case 40402:
		return ErrVersionNotFound
	case 40403:
		return ErrSchemaNotFound
	case 409:
		return ErrIncompatible
	case 42201:
		return ErrInvalidSchema
	case 42202:
		return ErrInvalidVersion
	case 42203:
		return ErrInvalidCompatibilityLevel
	}
	switch {
	case status == 401 || status == 403:
		return ErrUnauthorized
	case status == 409:
		return ErrIncompatible
	case status >= 500 || code >= 50000:
		return ErrUnavailable
	case status == 422:
		return ErrInvalidSchema
	}
	return ErrBadResponse
}
