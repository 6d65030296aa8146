package reactor

import "testing"

func TestStateTransitions(t *testing.T) {
	legal := map[[2]SessionState]bool{
		{StateHandshake, StateIdle}: true, {StateHandshake, StateClosing}: true,
		{StateIdle, StateCommand}: true, {StateIdle, StateClosing}: true,
		{StateCommand, StateIdle}: true, {StateCommand, StateClosing}: true,
		{StateClosing, StateClosed}: true,
	}
	for from := StateHandshake; from <= StateClosed; from++ {
		for to := StateHandshake; to <= StateClosed; to++ {
			if got := canMove(from, to); got != legal[[2]SessionState{from, to}] {
				t.Errorf("canMove(%v, %v) = %v", from, to, got)
			}
		}
		if from.String() == "UNKNOWN" {
			t.Errorf("state %d has no name", from)
		}
	}
}
