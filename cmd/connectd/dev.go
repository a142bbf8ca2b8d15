package main

// devCommand groups the development and test tools that ship inside the
// connectd binary (test doubles, verification helpers).
func devCommand() *command {
	return &command{
		name:    "dev",
		summary: "development tools: local test doubles for Kafka-adjacent systems, the quickstart's helpers",
		children: []*command{
			devAerospikeCommand(),
			devQuickstartCommand(),
		},
	}
}
