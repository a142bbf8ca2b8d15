// Command testplugin is the boundary tests' plugin. Which connector it
// serves, and how it misbehaves before Serve, is chosen at build time:
//
//	go build -ldflags "-X main.mode=sink" ./plugins/internal/testconnectors/cmd/testplugin
//
// modes: source (default), sink, stdout-garbage (prints to stdout before
// Serve), and the data channel breakers of testconnectors.ServeRogueData (data-nohello,
// data-oversized, data-badtype, data-badmsg).
package main

import (
	"fmt"

	"github.com/connectd/connectd/plugins"
	"github.com/connectd/connectd/plugins/internal/testconnectors"
)

var mode = "source"

func main() {
	switch mode {
	case "sink":
		plugins.Serve(func() testconnectors.Sink { return testconnectors.Sink{} })
	case "stdout-garbage":
		fmt.Println("hello from a connector that prints to stdout")
		plugins.Serve(func() testconnectors.Source { return testconnectors.Source{} })
	case "data-nohello", "data-oversized", "data-badtype", "data-badmsg":
		testconnectors.ServeRogueData(mode)
	default:
		plugins.Serve(func() testconnectors.Source { return testconnectors.Source{} })
	}
}
