package worker

import "github.com/connectd/connectd/framework/connconfig"

// errorPolicy is a connector's errors.* policy, parsed by connconfig (the
// same rules the plugin applies when it validates the configuration).
type errorPolicy = connconfig.ErrorPolicy

func parseErrorPolicy(props map[string]string) (errorPolicy, error) {
	return connconfig.ParseErrorPolicy(props)
}
