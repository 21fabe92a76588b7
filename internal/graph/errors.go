package graph

import "errors"

// Error kinds. Stores wrap driver errors with these once, so the runner can
// decide policy with errors.Is without knowing any driver.
var (
	// ErrTransient marks an error that a retry of the whole operation may
	// cure: deadlock, serialization failure, lock-wait timeout, busy.
	ErrTransient = errors.New("transient")
	// ErrConnection marks a broken or refused connection; the store
	// reconnects on the next call and the runner goes on.
	ErrConnection = errors.New("connection")
	// ErrSchema marks missing or incompatible tables.
	ErrSchema = errors.New("schema")
)

// kindError wraps an error with a kind while keeping both in the chain.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// Transient wraps err so that errors.Is(err, ErrTransient) holds.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: ErrTransient, err: err}
}

// Connection wraps err so that errors.Is(err, ErrConnection) holds.
func Connection(err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: ErrConnection, err: err}
}

// Schema wraps err so that errors.Is(err, ErrSchema) holds.
func Schema(err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: ErrSchema, err: err}
}

// IsTransient reports whether err is worth retrying.
func IsTransient(err error) bool { return errors.Is(err, ErrTransient) }
