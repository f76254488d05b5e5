// Package errs builds gRPC statuses that carry a machine-readable reason in
// a google.rpc.ErrorInfo detail (AIP-193), and reads the reason back.
package errs

import (
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// New returns a status error with code c whose ErrorInfo has the given
// domain (e.g. "table.chemmy") and reason (UPPER_SNAKE, e.g.
// "NOT_YOUR_TURN"); the message is formatted from format and args.
func New(c codes.Code, domain, reason, format string, args ...any) error {
	return WithMetadata(c, domain, reason, nil, format, args...)
}

// WithMetadata is New with ErrorInfo metadata (e.g. which limit refused
// a stake).
func WithMetadata(c codes.Code, domain, reason string, md map[string]string, format string, args ...any) error {
	st := status.New(c, fmt.Sprintf(format, args...))
	withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: domain, Metadata: md})
	if err != nil {
		return st.Err()
	}
	return withInfo.Err()
}

// Reason returns the ErrorInfo reason of a status error, or "" when err is
// not a status error or carries no ErrorInfo.
func Reason(err error) string {
	info := Info(err)
	if info == nil {
		return ""
	}
	return info.GetReason()
}

// Info returns the ErrorInfo detail of a status error, or nil.
func Info(err error) *errdetails.ErrorInfo {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return nil
	}
	for _, d := range se.GRPCStatus().Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// IsStatus reports whether err is a gRPC status error (as opposed to a
// plain Go error that grpc would turn into codes.Unknown).
func IsStatus(err error) bool {
	var se interface{ GRPCStatus() *status.Status }
	return errors.As(err, &se)
}
