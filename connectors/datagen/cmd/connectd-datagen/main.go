// Command connectd-datagen is the DatagenSource connector plugin.
package main

import (
	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(datagen.New, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}
