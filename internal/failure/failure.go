// Package failure names how a try of a statement on a server ended when
// the client did not get the server's whole answer. route decides from it
// whether the statement may go elsewhere, health whether it counts
// against the server, reactor reports it; it sits below all three.
package failure

// Kind is how a try failed.
type Kind uint8

const (
	None      Kind = iota // the answer reached the client
	Client                // the client's connection broke or the client broke the protocol
	Transport             // the server connection broke (EOF, reset, refused write)
	Protocol              // the server broke the protocol (bad checksum, out of step)
	Timeout               // the server did not answer in time
	HeldERR               // the server answered an ERR that was held back to send the statement elsewhere
)

// String names the failure for logs and metrics.
func (k Kind) String() string {
	switch k {
	case Client:
		return "client"
	case Transport:
		return "server_transport"
	case Protocol:
		return "server_protocol"
	case Timeout:
		return "timeout"
	case HeldERR:
		return "server_err"
	}
	return "none"
}
