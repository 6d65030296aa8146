package obsim

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"

	"obgate/mysqlproto"
)

// ErrorRule makes nodes answer matching statements (or logins) with an
// error instead of running them.
type ErrorRule struct {
	// ID is assigned by InjectError.
	ID int `json:"id"`
	// Node limits the rule to one node; empty means every node.
	Node string `json:"node,omitempty"`
	// Pattern is a regular expression matched case-insensitively against
	// the statement text; empty matches every statement.
	Pattern string `json:"pattern,omitempty"`
	// Code is the error code sent, e.g. 4038 (OB_NOT_MASTER).
	Code uint16 `json:"code"`
	// State is the SQLSTATE; default from mysqlproto's table (HY000).
	State string `json:"state,omitempty"`
	// Message is the error text; default OceanBase's text for known codes.
	Message string `json:"message,omitempty"`
	// Count is how many times the rule fires before it is removed; 0
	// means without limit.
	Count int `json:"count,omitempty"`
	// Probability, between 0 and 1, makes a matching statement fail only
	// that often; 0 means always.
	Probability float64 `json:"probability,omitempty"`
	// Login applies the rule to logins (the ERR answers the handshake
	// response) instead of statements; Pattern is then matched against
	// the login user name.
	Login bool `json:"login,omitempty"`
	// Fired counts how often the rule fired.
	Fired int `json:"fired"`
}

type errorRule struct {
	ErrorRule
	re *regexp.Regexp
}

// faultSet holds the error rules of a cluster.
type faultSet struct {
	mu     sync.Mutex
	rules  []*errorRule
	nextID int
}

// obErrorMessages are OceanBase's texts for the codes tests inject.
var obErrorMessages = map[uint16]string{
	4012: "Timeout",
	4013: "No memory or reach tenant memory limit",
	4038: "Not master",
	4124: "Connect error",
	4401: "Client Session need be killed",
	4666: "cluster name does not match",
	5081: "The MySQL server is running with the --read-only option so it cannot execute this statement",
	5150: "Tenant not in this server",
	5727: "SQL need reroute",
	6279: "transaction free route not supported",
	8001: "Server is initializing",
	8002: "Server is stopping",
	8003: "Packet checksum error",
}

// InjectError adds an error rule and returns its id.
func (c *Cluster) InjectError(r ErrorRule) (int, error) {
	if r.Code == 0 {
		return 0, fmt.Errorf("obsim: an error rule needs a code")
	}
	if r.Node != "" && c.nodes[r.Node] == nil {
		return 0, fmt.Errorf("obsim: unknown node %q", r.Node)
	}
	if r.Probability < 0 || r.Probability > 1 {
		return 0, fmt.Errorf("obsim: probability %v is not in [0,1]", r.Probability)
	}
	re, err := regexp.Compile("(?is)" + r.Pattern)
	if err != nil {
		return 0, fmt.Errorf("obsim: pattern: %w", err)
	}
	if r.Message == "" {
		if m, ok := obErrorMessages[r.Code]; ok {
			r.Message = m
		} else {
			r.Message = fmt.Sprintf("simulated error %d", r.Code)
		}
	}
	if r.State == "" {
		r.State = mysqlproto.SQLStateOf(r.Code)
	}
	f := &c.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	r.ID, r.Fired = f.nextID, 0
	f.rules = append(f.rules, &errorRule{ErrorRule: r, re: re})
	return r.ID, nil
}

// ErrorRules lists the active rules.
func (c *Cluster) ErrorRules() []ErrorRule {
	f := &c.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ErrorRule, len(f.rules))
	for i, r := range f.rules {
		out[i] = r.ErrorRule
	}
	return out
}

// RemoveError removes one rule; it reports whether it existed.
func (c *Cluster) RemoveError(id int) bool {
	f := &c.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules {
		if r.ID == id {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
			return true
		}
	}
	return false
}

// ClearErrors removes every rule.
func (c *Cluster) ClearErrors() { c.faults.clear() }

func (f *faultSet) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// match returns the error for a statement or login on node, consuming one
// use of the rule, or nil.
func (f *faultSet) match(node, text string, login bool) *mysqlproto.SQLError {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules {
		if r.Login != login || (r.Node != "" && r.Node != node) || !r.re.MatchString(text) {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && rand.Float64() >= r.Probability {
			continue
		}
		r.Fired++
		if r.Count > 0 {
			r.Count--
			if r.Count == 0 {
				f.rules = append(f.rules[:i], f.rules[i+1:]...)
			}
		}
		return &mysqlproto.SQLError{Code: r.Code, State: r.State, Message: r.Message}
	}
	return nil
}
