// Package connconfig: TEMPORARY stand-in so the plugins branch builds before the sdkdata branch lands; delete this file when merging sdkdata.
package connconfig

import (
	"context"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

func Validate(ctx context.Context, c sdk.Connector, props map[string]string, defaults chain.Defaults) configdef.ValidationResult {
	res := configdef.ValidationResult{Name: c.Spec().Class}
	for _, k := range c.Spec().Config.Keys() {
		v, ok := props[k.Name]
		ci := configdef.ConfigInfo{Definition: configdef.KeyInfo{Name: k.Name, Type: k.Type}, Value: configdef.ConfigValue{Name: k.Name, Visible: true}}
		if ok {
			ci.Value.Value = &v
		} else if k.Required {
			ci.Value.Errors = append(ci.Value.Errors, "Missing required configuration \""+k.Name+"\" which has no default value.")
		}
		res.Configs = append(res.Configs, ci)
	}
	for _, fe := range c.Validate(ctx, props) {
		for i := range res.Configs {
			if res.Configs[i].Value.Name == fe.Key {
				res.Configs[i].Value.Errors = append(res.Configs[i].Value.Errors, fe.Message)
			}
		}
	}
	for _, ci := range res.Configs {
		res.ErrorCount += len(ci.Value.Errors)
	}
	return res
}
