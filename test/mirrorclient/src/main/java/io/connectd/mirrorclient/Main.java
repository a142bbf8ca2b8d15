package io.connectd.mirrorclient;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.MirrorClient;
import org.apache.kafka.connect.mirror.MirrorFormats;
import org.apache.kafka.connect.mirror.OffsetSync;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * mirrorclient reads MirrorMaker 2's internal records and decodes them with
 * MM2's own classes (Heartbeat, Checkpoint and OffsetSync.deserializeRecord),
 * printing one JSON object per line on stdout.
 *
 * <pre>
 * read --bootstrap HOST:PORT --topic T [--format auto|heartbeat|checkpoint|offset-sync] [--timeout-ms N]
 *     every record of T up to its end offsets at start (read_committed)
 * upstream --bootstrap HOST:PORT [--separator S]
 *     MirrorClient.upstreamClusters() and replicationHops() of each:
 *     {"upstreamClusters":[..],"hops":{alias:n}}
 * translate --bootstrap HOST:PORT --group G --source ALIAS [--separator S] [--timeout-ms N]
 *     MirrorClient.remoteConsumerOffsets (RemoteClusterUtils.translateOffsets):
 *     {"topic":..,"partition":..,"offset":..} per partition
 * decode   stdin: {"format":F,"key":HEX,"value":HEX} per line
 * encode   stdin: {"format":"heartbeat","sourceClusterAlias":..,"targetClusterAlias":..,"timestamp":..}
 *          or {"format":"checkpoint","consumerGroupId":..,"topic":..,"partition":..,"upstreamOffset":..,"downstreamOffset":..,"metadata":..}
 *          or {"format":"offset-sync","topic":..,"partition":..,"upstreamOffset":..,"downstreamOffset":..}
 *          prints {"key":HEX,"value":HEX} per line, written by MM2's encoders
 * </pre>
 *
 * A record that does not decode prints {"error":...} instead of its fields;
 * usage and connection failures exit 2 with the reason on stderr.
 */
public final class Main {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    private Main() {}

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try {
            if (args.length == 0) {
                throw new IllegalArgumentException("usage: mirrorclient read|upstream|translate|decode|encode ...");
            }
            switch (args[0]) {
                case "read" -> read(flags(args, "--bootstrap", "--topic"), out);
                case "upstream" -> upstream(flags(args, "--bootstrap"), out);
                case "translate" -> translate(flags(args, "--bootstrap", "--group", "--source"), out);
                case "decode" -> eachLine(out, Main::decode);
                case "encode" -> eachLine(out, Main::encode);
                default -> throw new IllegalArgumentException("unknown command " + args[0] + ": want read, upstream, translate, decode or encode");
            }
        } catch (IllegalArgumentException | IllegalStateException e) {
            out.flush();
            System.err.println("mirrorclient: " + e.getMessage());
            System.exit(2);
        }
        out.flush();
    }

    private static Map<String, String> flags(String[] args, String... required) {
        Map<String, String> m = new java.util.HashMap<>(Map.of("--format", "auto", "--timeout-ms", "30000"));
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("bad argument " + args[i] + ": want --name value pairs");
            }
            m.put(args[i], args[i + 1]);
        }
        for (String need : required) {
            if (!m.containsKey(need)) {
                throw new IllegalArgumentException("missing " + need);
            }
        }
        return m;
    }

    /** The format a topic holds, from MM2's topic names. */
    static String formatOf(String topic) {
        if (topic.endsWith("heartbeats")) {
            return "heartbeat";
        }
        if (topic.contains("checkpoints")) {
            return "checkpoint";
        }
        if (topic.contains("offset-syncs")) {
            return "offset-sync";
        }
        throw new IllegalArgumentException("cannot tell the format of topic " + topic + ": pass --format");
    }

    private static void read(Map<String, String> f, PrintStream out) {
        String topic = f.get("--topic");
        String format = f.get("--format").equals("auto") ? formatOf(topic) : f.get("--format");
        long deadline = System.currentTimeMillis() + Long.parseLong(f.get("--timeout-ms"));
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, f.get("--bootstrap"));
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, f.get("--timeout-ms"));
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofMillis(Long.parseLong(f.get("--timeout-ms"))));
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException("topic " + topic + " does not exist");
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo i : infos) {
                tps.add(new TopicPartition(topic, i.partition()));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            while (!done(c, end)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("timed out reading " + topic + " to its end offsets " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) {
                        continue;
                    }
                    ObjectNode o = decoded(format, r);
                    ObjectNode rec = o.putObject("record");
                    rec.put("topic", r.topic()).put("partition", r.partition()).put("offset", r.offset()).put("timestamp", r.timestamp());
                    out.println(o);
                }
            }
        }
    }

    private static MirrorClient mirrorClient(Map<String, String> f) {
        Map<String, Object> props = new java.util.HashMap<>();
        props.put("bootstrap.servers", f.get("--bootstrap"));
        if (f.containsKey("--separator")) {
            props.put("replication.policy.separator", f.get("--separator"));
        }
        return new MirrorClient(props);
    }

    private static void upstream(Map<String, String> f, PrintStream out) throws InterruptedException {
        try (MirrorClient mc = mirrorClient(f)) {
            ObjectNode o = JSON.createObjectNode();
            ObjectNode hops = o.putObject("hops");
            var clusters = o.putArray("upstreamClusters");
            for (String alias : new java.util.TreeSet<>(mc.upstreamClusters())) {
                clusters.add(alias);
                hops.put(alias, mc.replicationHops(alias));
            }
            out.println(o);
        }
    }

    private static void translate(Map<String, String> f, PrintStream out) {
        try (MirrorClient mc = mirrorClient(f)) {
            Map<TopicPartition, OffsetAndMetadata> offsets = mc.remoteConsumerOffsets(f.get("--group"), f.get("--source"),
                Duration.ofMillis(Long.parseLong(f.get("--timeout-ms"))));
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                ObjectNode o = JSON.createObjectNode();
                o.put("topic", e.getKey().topic()).put("partition", e.getKey().partition()).put("offset", e.getValue().offset());
                out.println(o);
            }
        }
    }

    private static boolean done(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** The record's fields as MM2's deserializeRecord returns them. */
    static ObjectNode decoded(String format, ConsumerRecord<byte[], byte[]> r) {
        ObjectNode o = JSON.createObjectNode();
        o.put("format", format);
        try {
            switch (format) {
                case "heartbeat" -> {
                    Heartbeat h = Heartbeat.deserializeRecord(r);
                    o.put("sourceClusterAlias", h.sourceClusterAlias()).put("targetClusterAlias", h.targetClusterAlias())
                        .put("timestamp", h.timestamp());
                }
                case "checkpoint" -> {
                    Checkpoint k = Checkpoint.deserializeRecord(r);
                    o.put("consumerGroupId", k.consumerGroupId()).put("topic", k.topicPartition().topic())
                        .put("partition", k.topicPartition().partition()).put("upstreamOffset", k.upstreamOffset())
                        .put("downstreamOffset", k.downstreamOffset()).put("metadata", k.metadata());
                }
                case "offset-sync" -> {
                    OffsetSync s = OffsetSync.deserializeRecord(r);
                    o.put("topic", s.topicPartition().topic()).put("partition", s.topicPartition().partition())
                        .put("upstreamOffset", s.upstreamOffset()).put("downstreamOffset", s.downstreamOffset());
                }
                default -> throw new IllegalArgumentException("unknown format " + format + ": want heartbeat, checkpoint or offset-sync");
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            o.put("error", e.toString());
        }
        return o;
    }

    interface LineHandler {
        ObjectNode handle(JsonNode in);
    }

    private static void eachLine(PrintStream out, LineHandler h) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (!line.isBlank()) {
                out.println(h.handle(JSON.readTree(line)));
            }
        }
    }

    private static ObjectNode decode(JsonNode in) {
        byte[] key;
        byte[] value;
        try {
            key = in.hasNonNull("key") ? HEX.parseHex(in.get("key").asText()) : null;
            value = in.hasNonNull("value") ? HEX.parseHex(in.get("value").asText()) : null;
        } catch (IllegalArgumentException e) {
            ObjectNode o = JSON.createObjectNode();
            o.put("format", in.path("format").asText()).put("error", "bad hex: " + e.getMessage());
            return o;
        }
        return decoded(in.path("format").asText(), new ConsumerRecord<>("decode", 0, 0L, key, value));
    }

    private static ObjectNode encode(JsonNode in) {
        String format = in.path("format").asText();
        byte[][] kv = switch (format) {
            case "heartbeat" -> MirrorFormats.heartbeat(in.path("sourceClusterAlias").asText(),
                in.path("targetClusterAlias").asText(), in.path("timestamp").asLong());
            case "checkpoint" -> MirrorFormats.checkpoint(in.path("consumerGroupId").asText(), in.path("topic").asText(),
                in.path("partition").asInt(), in.path("upstreamOffset").asLong(), in.path("downstreamOffset").asLong(),
                in.path("metadata").asText());
            case "offset-sync" -> MirrorFormats.offsetSync(in.path("topic").asText(), in.path("partition").asInt(),
                in.path("upstreamOffset").asLong(), in.path("downstreamOffset").asLong());
            default -> throw new IllegalArgumentException("unknown format " + format + ": want heartbeat, checkpoint or offset-sync");
        };
        ObjectNode o = JSON.createObjectNode();
        o.put("key", HEX.formatHex(kv[0])).put("value", HEX.formatHex(kv[1]));
        return o;
    }
}
