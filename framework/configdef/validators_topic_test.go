package configdef_test

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
)

func TestTopicName(t *testing.T) {
	for _, c := range []struct {
		value    string
		optional bool
		ok       bool
	}{
		{"orders", false, true},
		{"a.b_c-D9", false, true},
		{strings.Repeat("x", 249), false, true},
		{strings.Repeat("x", 250), false, false},
		{strings.Repeat("\"", 600), true, false},
		{"", true, true},
		{"", false, false},
		{".", false, false},
		{"..", true, false},
		{"a b", false, false},
		{"../../etc/passwd", false, false},
		{"é", false, false},
	} {
		err := configdef.TopicName(c.optional).Validate("k", c.value)
		if (err == nil) != c.ok {
			t.Errorf("TopicName(%v).Validate(%.20q) = %v, want ok=%v", c.optional, c.value, err, c.ok)
		}
	}
}
