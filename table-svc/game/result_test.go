package game

import (
	"errors"
	"reflect"
	"testing"

	eventsv1 "github.com/chemmy/chemmy/proto/gen/chemmy/events/v1"
)

// TestResult: a refused command has the zero Outcome and its error; one
// that waits for a hold keeps the state it was applied to, with the hold
// and no event; any other has the changed copy and its events.
func TestResult(t *testing.T) {
	refusal := Refuse(FailedPrecondition, "WRONG_STATE", "not now")
	var events Changes
	events.Emit("c1", &eventsv1.BetDeclined{PlayerId: "p"})
	hold := &Hold{PlayerID: "p", Amount: 100}

	for _, c := range []struct {
		name    string
		changes Changes
		err     error
		want    Outcome[string]
	}{
		{"refused", events, refusal, Outcome[string]{}},
		{"refused waiting", Changes{Hold: hold}, refusal, Outcome[string]{}},
		{"waits for a hold", Changes{Events: events.Events, Hold: hold}, nil, Outcome[string]{State: "before", Hold: hold}},
		{"applied", events, nil, Outcome[string]{State: "after", Events: events.Events}},
		{"applied, nothing happened", Changes{}, nil, Outcome[string]{State: "after"}},
	} {
		got, err := Result("before", "after", c.changes, c.err)
		if !errors.Is(err, c.err) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Result = %+v, %v; want %+v, %v", c.name, got, err, c.want, c.err)
		}
	}
}
