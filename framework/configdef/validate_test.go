package configdef

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestSecretNeverLeaks(t *testing.T) {
	s := NewSecret("hunter2")
	if s.Value() != "hunter2" {
		t.Fatal("Value lost the clear text")
	}
	outs := []string{
		s.String(), fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s),
		fmt.Sprintf("%v", struct{ P Secret }{s}),
	}
	j, _ := json.Marshal(map[string]any{"p": s})
	outs = append(outs, string(j))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "p", s)
	outs = append(outs, buf.String())
	for _, o := range outs {
		if strings.Contains(o, "hunter2") {
			t.Errorf("secret leaked: %s", o)
		}
		if !strings.Contains(o, "[hidden]") {
			t.Errorf("no [hidden] in %s", o)
		}
	}
	if string(j) != `{"p":"[hidden]"}` {
		t.Errorf("json = %s", j)
	}
	if err := Invalid("pw", s, "bad"); strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Invalid leaked: %v", err)
	}
}

func TestValidate(t *testing.T) {
	d := New().
		Define(Key{Name: "name", Type: String, Required: true}).
		Define(Key{Name: "tasks.max", Type: Int, Default: 1, Validator: AtLeast(1)}).
		Define(Key{Name: "topics", Type: List, Default: ""}).
		Define(Key{Name: "pw", Type: Password}).
		Define(Key{Name: "boundary", Type: String, Default: "poll", Validator: OneOfIgnoreCase("poll", "interval"),
			Dependents: []string{"interval.ms"}, Recommender: Recommend("poll", "interval")}).
		Define(Key{Name: "interval.ms", Type: Long, Recommender: VisibleWhen("boundary", "interval")}).
		Define(Key{Name: "ratio", Type: Double, Default: 1})

	tests := []struct {
		name  string
		props map[string]string
		want  map[string]ConfigValue // only these are checked
		order []string
	}{
		{
			name:  "defaults and missing required",
			props: map[string]string{},
			order: []string{"name", "tasks.max", "topics", "pw", "boundary", "interval.ms", "ratio"},
			want: map[string]ConfigValue{
				"name":        {Name: "name", Errors: []string{`Missing required configuration "name" which has no default value.`}, Visible: true},
				"tasks.max":   {Name: "tasks.max", Value: ptr("1"), Visible: true},
				"topics":      {Name: "topics", Value: ptr(""), Visible: true},
				"pw":          {Name: "pw", Visible: true},
				"boundary":    {Name: "boundary", Value: ptr("poll"), RecommendedValues: []string{"poll", "interval"}, Visible: true},
				"interval.ms": {Name: "interval.ms", Visible: false},
				"ratio":       {Name: "ratio", Value: ptr("1.0"), Visible: true},
			},
		},
		{
			name: "type and validator errors; password hidden; recommender visibility",
			props: map[string]string{"name": "x", "tasks.max": "many", "topics": "a, b", "pw": "secret",
				"boundary": "INTERVAL", "interval.ms": "10", "ratio": "0"},
			want: map[string]ConfigValue{
				"tasks.max":   {Name: "tasks.max", Errors: []string{"Invalid value many for configuration tasks.max: Not a number of type INT"}, Visible: true},
				"topics":      {Name: "topics", Value: ptr("a,b"), Visible: true},
				"pw":          {Name: "pw", Value: ptr("[hidden]"), Visible: true},
				"boundary":    {Name: "boundary", Value: ptr("INTERVAL"), RecommendedValues: []string{"poll", "interval"}, Visible: true},
				"interval.ms": {Name: "interval.ms", Value: ptr("10"), Visible: true},
				"ratio":       {Name: "ratio", Value: ptr("0.0"), Visible: true},
			},
		},
		{
			name:  "validator error keeps the value",
			props: map[string]string{"name": "x", "tasks.max": "0", "boundary": "never"},
			want: map[string]ConfigValue{
				"tasks.max": {Name: "tasks.max", Value: ptr("0"), Errors: []string{"Invalid value 0 for configuration tasks.max: Value must be at least 1"}, Visible: true},
				"boundary": {Name: "boundary", Value: ptr("never"), RecommendedValues: []string{"poll", "interval"},
					Errors: []string{"Invalid value never for configuration boundary: String must be one of (case insensitive): POLL, INTERVAL"}, Visible: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Validate(tt.props)
			var order []string
			for _, cv := range got {
				order = append(order, cv.Name)
				w, ok := tt.want[cv.Name]
				if !ok {
					continue
				}
				if w.RecommendedValues == nil {
					w.RecommendedValues = []string{}
				}
				if w.Errors == nil {
					w.Errors = []string{}
				}
				if !reflect.DeepEqual(cv, w) {
					t.Errorf("%s:\n got %+v (value %s)\nwant %+v (value %s)", cv.Name, cv, deref(cv.Value), w, deref(w.Value))
				}
			}
			if tt.order != nil && !reflect.DeepEqual(order, tt.order) {
				t.Errorf("order = %v, want %v", order, tt.order)
			}
		})
	}
}

func TestValidateUndefinedDependent(t *testing.T) {
	d := New().Define(Key{Name: "a", Type: String, Default: "", Dependents: []string{"ghost"}})
	got := d.Validate(nil)
	if len(got) != 2 || got[1].Name != "ghost" || got[1].Visible ||
		!reflect.DeepEqual(got[1].Errors, []string{"ghost is referred in the dependents, but not defined."}) {
		t.Fatalf("got %+v", got)
	}
}

func TestKeyInfoJSON(t *testing.T) {
	d := New().
		Define(Key{Name: "tasks.max", Type: Int, Default: 1, Validator: AtLeast(1), Importance: High,
			Documentation: "Maximum number of tasks to use for this connector.", Group: "Common", OrderInGroup: 3,
			Width: WidthShort, DisplayName: "Tasks max"}).
		Define(Key{Name: "name", Type: String, Required: true, Importance: High}).
		Define(Key{Name: "topics", Type: List, Default: []string{"a", "b"}}).
		Define(Key{Name: "pw", Type: Password, Default: "x"}).
		Define(Key{Name: "opt", Type: String})
	infos := d.Infos()
	j, err := json.Marshal(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	// The exact ConfigKeyInfo shape from Kafka (reference §1.4).
	want := `{"name":"tasks.max","type":"INT","required":false,"default_value":"1","importance":"HIGH",` +
		`"documentation":"Maximum number of tasks to use for this connector.","group":"Common",` +
		`"order":3,"width":"SHORT","display_name":"Tasks max","dependents":[]}`
	if string(j) != want {
		t.Errorf("json =\n%s\nwant\n%s", j, want)
	}
	if infos[0].ValidValues != "[1,...]" {
		t.Errorf("ValidValues = %q", infos[0].ValidValues)
	}
	j, _ = json.Marshal(infos[1])
	if !strings.Contains(string(j), `"required":true,"default_value":null`) || !strings.Contains(string(j), `"group":null`) {
		t.Errorf("required key json = %s", j)
	}
	if deref(infos[2].DefaultValue) != "a,b" || deref(infos[3].DefaultValue) != "[hidden]" || infos[4].DefaultValue != nil {
		t.Errorf("defaults rendered %s %s %s", deref(infos[2].DefaultValue), deref(infos[3].DefaultValue), deref(infos[4].DefaultValue))
	}
}

func TestEmbed(t *testing.T) {
	child := New().
		Define(Key{Name: "regex", Type: String, Required: true, Validator: Regex(), Dependents: []string{"replacement"},
			Recommender: RecommenderFuncs{IsVisible: func(key string, parsed map[string]any) bool {
				// The child's recommender sees its own names.
				return key == "regex" && parsed["replacement"] == "r"
			}}}).
		Define(Key{Name: "replacement", Type: String, Required: true})
	d := New().Define(Key{Name: "transforms", Type: List, Default: ""}).
		Embed("transforms.route.", "Transforms: route", 1, child)
	keys := d.Keys()
	if len(keys) != 3 || keys[1].Name != "transforms.route.regex" || keys[1].Group != "Transforms: route" ||
		keys[1].OrderInGroup != 1 || keys[2].OrderInGroup != 2 || keys[1].DisplayName != "regex" ||
		!reflect.DeepEqual(keys[1].Dependents, []string{"transforms.route.replacement"}) {
		t.Fatalf("embedded keys = %+v", keys)
	}
	got := d.Validate(map[string]string{"transforms.route.regex": "(", "transforms.route.replacement": "r"})
	if !got[1].Visible {
		t.Error("embedded recommender did not see unprefixed names")
	}
	if len(got[1].Errors) != 1 || !strings.HasPrefix(got[1].Errors[0], "Invalid value ( for configuration transforms.route.regex: Invalid regex:") {
		t.Errorf("regex error = %v", got[1].Errors)
	}
	if !reflect.DeepEqual(d.Groups(), []string{"Transforms: route"}) {
		t.Errorf("groups = %v", d.Groups())
	}
	// Clone is independent.
	c := d.Clone().Define(Key{Name: "extra", Type: String})
	if d.Len() != 3 || c.Len() != 4 {
		t.Error("Clone shares state")
	}
}

func TestResult(t *testing.T) {
	d := New().
		Define(Key{Name: "a", Type: Int, Required: true, Group: "G1"}).
		Define(Key{Name: "b", Type: String, Default: "x", Group: "G2"})
	vals := d.Validate(map[string]string{"b": "y"})
	vals = append(vals, ConfigValue{Name: "undeclared", Errors: []string{"custom"}})
	r := Result("my.Class", d.Keys(), d.Groups(), vals)
	if r.ErrorCount != 2 || r.Configs[0].Definition != nil || r.Configs[0].Value.Name != "undeclared" ||
		r.Configs[1].Definition.Name != "a" || r.Configs[2].Value.Value == nil || *r.Configs[2].Value.Value != "y" {
		t.Fatalf("result = %+v", r)
	}
	r.AddError("b", "b is wrong")
	r.AddError("c", "c is wrong")
	if r.ErrorCount != 4 {
		t.Errorf("error count = %d", r.ErrorCount)
	}
	if ci, ok := r.Config("b"); !ok || !reflect.DeepEqual(ci.Value.Errors, []string{"b is wrong"}) {
		t.Errorf("b = %+v", ci)
	}
	if ci, ok := r.Config("c"); !ok || ci.Definition != nil {
		t.Errorf("c = %+v", ci)
	}

	conv := New().Define(Key{Name: "schemas.enable", Type: Boolean, Default: true, Group: "Schemas"})
	pr := PrefixedResult(conv.Keys(), conv.Validate(map[string]string{"schemas.enable": "nope"}), "value.converter.")
	if pr.ErrorCount != 1 || pr.Configs[0].Value.Name != "value.converter.schemas.enable" ||
		pr.Configs[0].Definition.Name != "value.converter.schemas.enable" || !reflect.DeepEqual(pr.Groups, []string{"Schemas"}) {
		t.Fatalf("prefixed = %+v", pr)
	}
	r.Merge(pr)
	if r.ErrorCount != 5 || !reflect.DeepEqual(r.Groups, []string{"G1", "G2", "Schemas"}) {
		t.Errorf("merged count %d groups %v", r.ErrorCount, r.Groups)
	}
	if len(r.Errors()) != 5 || !strings.HasPrefix(r.Errors()[0], "undeclared: custom") {
		t.Errorf("Errors() = %v", r.Errors())
	}

	j, err := json.Marshal(Result("x", nil, nil, nil))
	if err != nil || string(j) != `{"name":"x","error_count":0,"groups":[],"configs":[]}` {
		t.Errorf("empty result json = %s (%v)", j, err)
	}
	j, _ = json.Marshal(ConfigValue{Name: "n"})
	if string(j) != `{"name":"n","value":null,"recommended_values":[],"errors":[],"visible":false}` {
		t.Errorf("value json = %s", j)
	}
}
