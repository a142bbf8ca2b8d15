// Command connectd-lines is the LinesSource connector plugin.
package main

import (
	"github.com/connectd/connectd/examples/linesource"
	"github.com/connectd/connectd/plugins"
)

func main() { plugins.Serve(linesource.New) }
