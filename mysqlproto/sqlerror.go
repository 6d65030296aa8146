package mysqlproto

import (
	"errors"
	"fmt"
)

// SQLError is an error that reaches the client as an ERR packet.
type SQLError struct {
	Code    uint16
	State   string
	Message string
}

// NewSQLError builds an error whose SQLSTATE comes from the code table
// (HY000 for codes it does not list).
func NewSQLError(code uint16, format string, args ...any) *SQLError {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &SQLError{Code: code, State: SQLStateOf(code), Message: msg}
}

// Error formats the error as the mysql CLI prints it.
func (e *SQLError) Error() string {
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message)
}

// AppendPacket encodes the error as an ERR payload.
func (e *SQLError) AppendPacket(dst []byte) []byte {
	return AppendERR(dst, e.Code, e.State, e.Message)
}

// AsSQLError returns err's *SQLError if it wraps one.
func AsSQLError(err error) (*SQLError, bool) {
	var se *SQLError
	if errors.As(err, &se) {
		return se, true
	}
	return nil, false
}

// SQLErrorFromERR copies a decoded ERR packet into an SQLError.
func SQLErrorFromERR(e ERR) *SQLError {
	return &SQLError{Code: e.Code, State: e.SQLState(), Message: string(e.Message)}
}
