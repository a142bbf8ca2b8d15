package connconfig

import (
	"context"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
)

// TestValidateWithConverterSet: a class the plugin was built with (here a
// small extra class defined by the test) is accepted, recommended and has
// its own settings validated under ValidateWith; without the set it is
// unknown, as in a plugin built without it.
func TestValidateWithConverterSet(t *testing.T) {
	const class = "com.example.RegistryConverter"
	set := convert.NewSet(convert.Info{
		Class: class, Aliases: []string{"RegistryConverter"}, Record: true,
		New: func() convert.Converter { return &convert.StringConverter{} },
		Def: func() *configdef.Def {
			return configdef.New().
				Define(configdef.Key{Name: convert.TypeConfig, Type: configdef.String, Required: true}).
				Define(configdef.Key{Name: "registry.url", Type: configdef.String, Required: true})
		},
	})
	props := goodSink()
	props["value.converter"] = "RegistryConverter"

	cases := []struct {
		name      string
		set       *convert.Set
		url       string
		wantKey   string
		wantError string
	}{
		{"without the set", nil, "http://r", "value.converter", "could not be found"},
		{"with the set, settings missing", set, "", "value.converter.registry.url", "Missing required configuration"},
		{"with the set", set, "http://r", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := map[string]string{}
			for k, v := range props {
				p[k] = v
			}
			if tc.url != "" {
				p["value.converter.registry.url"] = tc.url
			}
			r := ValidateWith(context.Background(), tc.set, sinkConnector(), p, workerDefaults)
			errs := errorsOf(r)
			if tc.wantKey == "" {
				if r.ErrorCount != 0 {
					t.Fatalf("errors: %v", r.Errors())
				}
				vc, _ := r.Config("value.converter")
				found := false
				for _, v := range vc.Value.RecommendedValues {
					found = found || v == class
				}
				if !found {
					t.Errorf("%s not among the recommended converters %v", class, vc.Value.RecommendedValues)
				}
				return
			}
			if len(errs[tc.wantKey]) == 0 || !strings.Contains(strings.Join(errs[tc.wantKey], " "), tc.wantError) {
				t.Fatalf("errors %v, want %q on %s", errs, tc.wantError, tc.wantKey)
			}
		})
	}
}
