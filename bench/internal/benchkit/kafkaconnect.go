package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// KafkaConnect is one Kafka Connect worker (connect-distributed) to start.
type KafkaConnect struct {
	// Classpath is Kafka Connect's classpath, resolved by Maven from
	// bench/kafkaconnect/pom.xml (bench/lib.sh, kc_classpath).
	Classpath string
	// Dir receives the worker's properties, log4j configuration and logs.
	Dir string
	// Name names the process and prefixes its files in Dir.
	Name string
	// Props is the worker properties file's content; it must set
	// listeners=http://127.0.0.1:<Port>.
	Props string
	Port  int
}

// Start starts the worker and waits until its REST API answers /health.
func (k KafkaConnect) Start(ctx context.Context) (*Proc, error) {
	propsPath := filepath.Join(k.Dir, k.Name+"-worker.properties")
	if err := os.WriteFile(propsPath, []byte(k.Props), 0o644); err != nil {
		return nil, fmt.Errorf("kafka connect: %w", err)
	}
	log4j := "status = error\nrootLogger.level = INFO\nrootLogger.appenderRef.file.ref = FILE\n" +
		"appender.file.type = File\nappender.file.name = FILE\nappender.file.fileName = " + filepath.Join(k.Dir, k.Name+"-connect.log") + "\n" +
		"appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = [%d] %p %m (%c)%n\n"
	log4jPath := filepath.Join(k.Dir, k.Name+"-log4j2.properties")
	if err := os.WriteFile(log4jPath, []byte(log4j), 0o644); err != nil {
		return nil, fmt.Errorf("kafka connect: %w", err)
	}
	// The JVM options of Kafka's bin/connect-distributed.sh and
	// kafka-run-class.sh (heap -Xms256M -Xmx2G, G1 with their tuning).
	cmd := exec.Command("java", "-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
		"-Djava.awt.headless=true", "-Dlog4j2.configurationFile="+log4jPath,
		"-cp", k.Classpath, "org.apache.kafka.connect.cli.ConnectDistributed", propsPath)
	p, err := StartProc(k.Name+"-worker", cmd, filepath.Join(k.Dir, k.Name+"-stdout.log"))
	if err != nil {
		return nil, err
	}
	if err := WaitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", k.Port), 180*time.Second, p); err != nil {
		p.Stop(10 * time.Second)
		return nil, err
	}
	return p, nil
}
