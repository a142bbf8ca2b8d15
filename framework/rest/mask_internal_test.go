package rest

import (
	"encoding/json"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
)

func TestMaskPasswords(t *testing.T) {
	pw, plain := "hunter2", "visible"
	res := configdef.ValidationResult{Name: "x", Configs: []configdef.ConfigInfo{
		{Definition: &configdef.KeyInfo{Name: "p", Type: configdef.Password}, Value: configdef.ConfigValue{Name: "p", Value: &pw, RecommendedValues: []string{"hunter3"}}},
		{Definition: &configdef.KeyInfo{Name: "s", Type: configdef.String}, Value: configdef.ConfigValue{Name: "s", Value: &plain}},
		{Definition: nil, Value: configdef.ConfigValue{Name: "undeclared", Value: &plain}}, // Kafka renders definition null
	}}
	maskPasswords(&res)
	b, _ := json.Marshal(res)
	want := `{"name":"x","error_count":0,"groups":[],"configs":[` +
		`{"definition":{"name":"p","type":"PASSWORD","required":false,"default_value":null,"importance":"","documentation":"","group":null,"order":0,"width":"","display_name":"","dependents":[]},"value":{"name":"p","value":"[hidden]","recommended_values":[],"errors":[],"visible":false}},` +
		`{"definition":{"name":"s","type":"STRING","required":false,"default_value":null,"importance":"","documentation":"","group":null,"order":0,"width":"","display_name":"","dependents":[]},"value":{"name":"s","value":"visible","recommended_values":[],"errors":[],"visible":false}},` +
		`{"definition":null,"value":{"name":"undeclared","value":"visible","recommended_values":[],"errors":[],"visible":false}}]}`
	if string(b) != want {
		t.Fatalf("masked:\n%s\nwant\n%s", b, want)
	}
}
